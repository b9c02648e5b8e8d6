"""The rows of spec section 6 ("Out-of-contract values") and which of them a case's values reach.

:data:`ROWS` is the section's table as data: per row the situation, what this project does, and what
upstream's Triton kernel does (the words the divergence profile uses). :func:`out_of_contract` works
out from a case's values (every step, request by request, spec section 5's definitions) which rows
apply; nothing is read from tags, so a case that reaches a row without saying so is still found.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.corpus.arrays import evaluate
from conformance.corpus.generators import build_lut, build_table

INT64_MIN = -(1 << 63)


@dataclass(frozen=True)
class Row:
    """One row of spec section 6.

    Attributes:
        key: stable name, used in results files and manifests.
        situation: the out-of-contract situation, as the spec words it.
        project: what this project's planners do (the rule cases pin).
        upstream: what upstream's Triton kernel does (spec section 6, second column).
        other: what a planner that gives another (in-bounds) value there does, in the same words.
    """

    key: str
    situation: str
    project: str
    upstream: str
    other: str


ROWS = (
    Row("lut-index-past-end", "translated slot >= lut_len", "clamps", "clamps", "does not clamp"),
    Row("prefix-past-row", "prefix_lens[r] - 1 >= max_seq_len", "clamps",
        "reads past the row", "reads past the row"),
    Row("row-outside-table", "req_pool_indices[r] < 0 or >= max_reqs, active", "no read, seed -1",
        "reads out of bounds", "reads outside the table"),
    Row("write-offsets-past-bs", "write_offsets past bs", "untouched", "untouched",
        "writes past bs"),
    Row("window-start-overflow", "negative prefix where W - prefix exceeds int64",
        "exact", "overflows int64", "wrong window (int64 overflow)"),
    Row("zero-d-tensor", "a 0-d tensor where a 1-D one is expected",
        "counted as length 1, then validated", "raises IndexError", "raises another error"),
    Row("prefix-without-extend", "a prefix but extend 0", "skips the read",
        "reads the seed slot", "other value"),
)
"""Spec section 6, top to bottom."""
ROW_KEYS = tuple(row.key for row in ROWS)
BY_KEY = {row.key: row for row in ROWS}


DEFAULT_TABLE = {"generator": "linear", "max_reqs": 1, "max_seq_len": 1}
"""The table of a case that names none (as conformance/engine/inputs.py builds it)."""


def _step_rows(case, step, max_reqs: int, max_seq_len: int, table, lut) -> set[str]:
    rows: set[str] = set()
    rpi = evaluate(step.inputs.get("req_pool_indices", []))
    prefix = evaluate(step.inputs.get("prefix_lens", []))
    extend = evaluate(step.inputs.get("extend_seq_lens", []))
    window = step.inputs.get("swa_window_size", 0)
    if len(rpi) < case.write_req_capacity:
        rows.add("write-offsets-past-bs")
    for r, row in enumerate(rpi[:min(len(rpi), len(prefix), len(extend))]):
        p, e = prefix[r], extend[r]
        if window > 0 and p - window < INT64_MIN:
            rows.add("window-start-overflow")
        if row == 0 or p <= 0:
            continue  # a padding row, or no prefix: upstream reads nothing either
        outside_row = not 0 <= row < max_reqs
        past_row = p - 1 >= max_seq_len
        if outside_row:
            rows.add("row-outside-table")
        if past_row and e > 0:
            rows.add("prefix-past-row")
        if e <= 0 and (outside_row or past_row):
            rows.add("prefix-without-extend")
        if e > 0 and lut is not None and not outside_row and max_seq_len > 0:
            slot = int(table[row, min(p - 1, max_seq_len - 1)])
            if slot >= lut.numel():
                rows.add("lut-index-past-end")
    return rows


_MEMO: dict[tuple[str, str, str], tuple[str, ...]] = {}


def out_of_contract(case) -> tuple[str, ...]:
    """The keys of the section-6 rows (:data:`ROWS`) that ``case``'s values reach, in table order.

    Launcher cases only (others: empty). Steps that expect an error count only for the 0-d row
    (an override of ``shape`` ``[]``). A case whose table cannot be built reaches none (the run
    reports that fault). Memoised per case (file, JSON path, id).
    """
    if case.entry != "launcher":
        return ()
    key = (str(case.path), case.json_path, case.id)
    if key not in _MEMO:
        try:
            _MEMO[key] = _rows(case)
        except Exception:  # a faulty case: the run itself says what is wrong with it
            _MEMO[key] = ()
    return _MEMO[key]


def _rows(case) -> tuple[str, ...]:
    found: set[str] = set()
    table = build_table(case.inputs.get("req_to_token", DEFAULT_TABLE), "cpu")
    max_reqs, max_seq_len = table.shape if table.dim() == 2 else (0, 0)
    lut = build_lut(case.inputs.get("lut"), "cpu")
    for step in case.steps:
        if any(o.get("shape") == [] for o in step.overrides):
            found.add("zero-d-tensor")
        if step.error is None:
            found |= _step_rows(case, step, max_reqs, max_seq_len, table, lut)
    return tuple(key for key in ROW_KEYS if key in found)


def flat_read_outside_table(case) -> bool:
    """Whether a kernel that reads the seed slot as spec section 6 says upstream's does (at
    ``row * max_seq_len + prefix - 1`` of the flat table, for every active row with a prefix,
    extend 0 included) reads outside the table on ``case``: then what it returns is whatever
    memory holds there (a stray value, a guard-zone fill) or it crashes, and which one changes
    from run to run."""
    if case.entry != "launcher":
        return False
    spec = case.inputs.get("req_to_token", DEFAULT_TABLE)
    if spec["generator"] == "explicit":
        rows, cols = len(spec["values"]), len(spec["values"][0]) if spec["values"] else 0
    else:
        rows, cols = spec["max_reqs"], spec["max_seq_len"]
    for step in case.steps:
        if step.error is not None:
            continue
        rpi = evaluate(step.inputs.get("req_pool_indices", []))
        prefix = evaluate(step.inputs.get("prefix_lens", []))
        for row, p in zip(rpi, prefix):
            if row != 0 and p > 0 and not 0 <= row * cols + p - 1 < rows * cols:
                return True
    return False
