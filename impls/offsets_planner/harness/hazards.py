"""Out-of-contract values, computed from a case's own values (spec section 6).

The launcher cannot check tensor *values* without a device-to-host copy, so some inputs pass
validation yet lie outside the table. Spec section 6 lists them, with what upstream's Triton kernel,
upstream's Python reference and this project do on each. :func:`out_of_contract` works out, from a
loaded case's values (generated tables included, every step with each step's table changes
applied), which of those rows a case reaches, by a short stable name per row (:data:`ROWS`).

The loader refuses a case that reaches a value row but is not tagged ``hazard`` (such a case runs
isolated by default, because upstream-style kernels read out of bounds on it). A case tagged
``hazard`` that reaches no row of section 6 at all is loaded with a :class:`HazardTagWarning`, not
refused: the tag also isolates a case for reasons no value shows (a planner known to hang on it).
Besides the value rows, section 6 has one row that is in contract (:data:`OTHER_ROWS`,
"write_offsets past bs": buffer elements past bs that upstream's Python reference zeroes), which
explains the tag without requiring it.

Only launches that reach the kernel count: validator and allocate cases, and steps that expect a
documented error (raised before the launch), reach no row.

The other tags whose truth a case's data decides are checked by :mod:`.tag_rules`; its
:func:`~.tag_rules.tag_fault` and :class:`~.tag_rules.TagWarning` are named here too, so that the
loader reaches every tag check through this module's role
(:mod:`conformance.corpus.corpus_subject`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from conformance.corpus.arrays import evaluate, permutation
from conformance.corpus.generators import DEFAULT_TABLE, lut_len, table_shape
from impls.offsets_planner import contract as _contract
from impls.offsets_planner.harness.tag_rules import TagWarning, tag_fault, warn_at  # noqa: F401

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES

INT64_MIN = -(1 << 63)
RPI, PREFIX, EXTEND = REQUEST_INPUT_NAMES

ROWS: dict[str, str] = {
    "lut-clamp": "translated slot >= lut_len: upstream's kernel clamps the LUT index, its Python "
                 "reference raises; this project clamps",
    "past-row": "prefix_lens[r] - 1 >= max_seq_len with a write: upstream's kernel reads past the "
                "row (the next row, or out of bounds on the last row); this project clamps the "
                "position to max_seq_len - 1",
    "row-out-of-table": "an active req_pool_indices[r] < 0 or >= max_reqs with a prefix: "
                        "upstream's kernel reads out of bounds; this project reads nothing, seed -1",
    "window-overflow": "swa_window_size > 0 and prefix_lens[r] - W below int64's range: upstream's "
                       "window start overflows; this project is exact",
    "zero-extend-read": "a prefix, extend <= 0, and the seed position past the table's last "
                        "element: upstream's kernel still reads it (out of bounds); this project "
                        "skips the read",
}
"""Spec section 6's value rows, by stable name, in the spec's order, with what each one means."""

OTHER_ROWS: dict[str, str] = {
    "write-offsets-past-bs": "a launch with bs < write_req_capacity: the write offsets past bs "
                             "stay untouched (upstream's kernel, this project); upstream's Python "
                             "reference zeroes them. In contract (spec section 5)",
}
"""Spec section 6's rows that need no out-of-contract value; a reason for the ``hazard`` tag."""

HAZARD_TAG = "hazard"


class HazardTagWarning(UserWarning):
    """A case tagged ``hazard`` that reaches no row of spec section 6."""


@dataclass(frozen=True)
class Finding:
    """One request that reaches a row: ``row`` (a key of :data:`ROWS`), ``where`` (the JSON path
    of the step, relative to the case: ``$`` or ``$.steps[k]``), ``detail`` (one line)."""

    row: str
    where: str
    detail: str


@lru_cache(maxsize=2)  # a permuted table and a permuted LUT
def _permuted(seed: int, n: int) -> np.ndarray:
    """The permuted table's flat values (int64 [n], 8 bytes an element: one at a time is kept)."""
    return permutation(seed, n)


class TableValues:
    """The values of a table spec (``conformance/corpus/generators.py``) one entry at a time,
    without building the table; ``set`` and later per-step changes applied."""

    def __init__(self, spec: dict) -> None:
        self.spec = spec
        self.rows, self.cols = table_shape(spec)
        self.changed: dict[tuple[int, int], int] = {}
        self.change(spec.get("set", ()))

    def change(self, entries) -> None:
        """Apply ``[[row, pos, value], ...]`` (a ``set`` or a step's ``req_to_token_set``)."""
        for row, pos, value in entries:
            self.changed[(row, pos)] = value

    def __getitem__(self, index: tuple[int, int]) -> int:
        if index in self.changed:
            return self.changed[index]
        row, pos = index
        kind = self.spec["generator"]
        if kind == "linear":
            return row * self.cols + pos
        if kind == "permuted":
            return int(_permuted(self.spec["seed"], self.rows * self.cols)[row * self.cols + pos])
        return self.spec["values"][row][pos]


class LutValues:
    """The values of a LUT spec (``conformance/corpus/generators.py``: ``identity``, ``shift``,
    ``permutation``, ``explicit``) one entry at a time, without building the LUT; ``set`` and later
    per-step changes (``lut_set``) applied."""

    def __init__(self, spec: dict) -> None:
        self.spec, self.len = spec, lut_len(spec)
        self.changed: dict[int, int] = {}
        self.change(spec.get("set", ()))

    def change(self, entries) -> None:
        """Apply ``[[index, value], ...]`` (a ``set`` or a step's ``lut_set``)."""
        for index, value in entries:
            self.changed[index] = value

    def __getitem__(self, index: int) -> int:
        if index in self.changed:
            return self.changed[index]
        kind = self.spec["generator"]
        if kind == "identity":
            return index
        if kind == "shift":
            return index + int(self.spec["shift"])
        if kind == "permutation":
            return int(_permuted(self.spec["seed"], self.len)[index])
        return self.spec["values"][index]


def _request_findings(r: int, rpi: int, prefix: int, extend: int, window: int,
                      table: TableValues, lut_length: int | None) -> Iterator[tuple[str, str]]:
    """(row, detail) for request ``r``; the rules of spec section 6, read as upstream's kernel
    reads (``has_prefix`` = active and prefix > 0; the seed is read at ``rpi * max_seq_len +
    prefix - 1``)."""
    if rpi == 0:  # a padding row: nothing is read, nothing counts
        return
    if window > 0 and prefix - window < INT64_MIN:
        yield "window-overflow", f"request {r}: prefix {prefix} - window {window} is below int64"
    if prefix <= 0:
        return
    rows, cols = table.rows, table.cols
    if not 0 <= rpi < rows:
        yield "row-out-of-table", f"request {r}: row {rpi} is outside the table's {rows} rows"
        return
    if extend <= 0:
        if rpi * cols + prefix - 1 >= rows * cols:
            yield ("zero-extend-read", f"request {r}: extend {extend}, seed position "
                   f"[{rpi}, {prefix - 1}] is past the end of the {rows} x {cols} table")
        return
    if prefix - 1 >= cols:
        yield "past-row", f"request {r}: prefix {prefix} - 1 >= max_seq_len {cols}"
        if cols == 0:
            return
    if lut_length is not None:
        slot = table[rpi, min(prefix - 1, cols - 1)]
        if slot >= lut_length:
            yield ("lut-clamp", f"request {r}: slot {slot} (table[{rpi}, "
                   f"{min(prefix - 1, cols - 1)}]) >= lut_len {lut_length}")


def findings(case) -> list[Finding]:
    """Every request of ``case`` (a loaded :class:`conformance.corpus.case_model.Case`) that reaches a
    row of :data:`ROWS`, step by step, in order.

    Raises:
        ArraySpecError: an array spec that cannot be evaluated (the loader checks them first).
    """
    if case.entry != "launcher":
        return []
    table = TableValues(case.inputs.get(TABLE_INPUT_NAMES[0]) or DEFAULT_TABLE)
    lut = case.inputs.get("lut")
    lut_length = None if lut is None else lut_len(lut)
    out = []
    for k, step in enumerate(case.steps):
        where = f"$.steps[{k}]" if "steps" in case.raw else "$"
        table.change(step.inputs.get("req_to_token_set", ()))  # in place, before this step
        if step.error is not None:  # raised before the kernel runs: no value is read
            continue
        columns = [evaluate(step.inputs.get(name, [])) for name in (RPI, PREFIX, EXTEND)]
        window = step.inputs.get(SWA_WINDOW_NAME, 0)
        for r, (rpi, prefix, extend) in enumerate(zip(*columns)):
            for row, detail in _request_findings(r, rpi, prefix, extend, window, table, lut_length):
                out.append(Finding(row, where, detail))
    return out


def out_of_contract(case) -> list[str]:
    """Which rows of spec section 6 ``case`` reaches: keys of :data:`ROWS`, each once, in the
    spec's order; ``[]`` for a case whose values are all in contract.

    ``case`` is a loaded :class:`conformance.corpus.case_model.Case` (its ``entry``, ``inputs``,
    ``steps`` and ``raw`` are read). The loader stores the result as ``Case.out_of_contract``.
    """
    reached = {f.row for f in findings(case)}
    return [row for row in ROWS if row in reached]


def _other_rows(case) -> list[str]:
    """Which rows of :data:`OTHER_ROWS` ``case`` reaches."""
    if case.entry != "launcher":
        return []
    launched = [step for step in case.steps if step.error is None]
    return ["write-offsets-past-bs"] if any(step.bs < case.write_req_capacity
                                            for step in launched) else []


def hazard_tag_fault(case, found: list[Finding]) -> tuple[str, str] | None:
    """(JSON path relative to the case, message) when ``case`` reaches a value row of spec
    section 6 (``found``, from :func:`findings`) without the ``hazard`` tag; None otherwise.
    Warns (:class:`HazardTagWarning`) when it carries the tag and reaches no row of section 6 at
    all (:data:`ROWS` or :data:`OTHER_ROWS`), located at the case's file and the line of its id
    (:func:`impls.offsets_planner.harness.tag_rules.warn_at`)."""
    tagged = HAZARD_TAG in case.tags
    if found and not tagged:
        first = found[0]
        rows = ", ".join(row for row in ROWS if row in {f.row for f in found})
        return ("$.tags", f"values out of contract (spec §6: {rows}; first at {first.where}, "
                          f"{first.detail}) need the {HAZARD_TAG!r} tag")
    if tagged and not found and not _other_rows(case):
        where = "" if case.json_path == "$" else f"{case.json_path}: "
        warn_at(case, HazardTagWarning(
            f"{where}case {case.id!r} is tagged {HAZARD_TAG!r}, but it reaches no row of spec §6 "
            f"({', '.join([*ROWS, *OTHER_ROWS])}); it runs isolated all the same"))
    return None
