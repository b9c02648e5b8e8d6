"""The rows of spec section 6 ("Out-of-contract values") and which of them a case's values reach.

:data:`ROWS` is the section's table as data: per row the situation, what this project does, and what
upstream's Triton kernel does (the words the divergence profile uses). :func:`out_of_contract` says
which rows a case reaches, from its values and its overrides; nothing is read from tags.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.corpus.arrays import evaluate
from impls.offsets_planner.harness.element_rules import ZERO_D, case_rules
from conformance.corpus.generators import DEFAULT_TABLE
from impls.offsets_planner import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
TABLE_NAME = _contract.TABLE_NAME


@dataclass(frozen=True)
class Row:
    """One row of spec section 6.

    Attributes:
        key: stable name, used in results files, manifests and element rules
            (:mod:`impls.offsets_planner.harness.element_rules` says which elements each row decides).
        situation: the out-of-contract situation, as the spec words it.
        project: what this project's planners do (the rule cases pin).
        upstream: what upstream's Triton kernel does (spec section 6, second column).
        other: what a planner that gives another (in-bounds) value there does, in the same words
            (no more than the value shows: a read outside a tensor is only claimed where the
            engine proves it, :mod:`conformance.engine.outside`; another seed where upstream
            reads past the row is not claimed to be that read, which may be any other value).
    """

    key: str
    situation: str
    project: str
    upstream: str
    other: str


ROWS = (
    Row("lut-clamp", "translated slot >= lut_len", "clamps", "clamps", "gives another seed"),
    Row("past-row", "prefix_lens[r] - 1 >= max_seq_len", "clamps",
        "reads past the row", "gives another seed"),
    Row("row-out-of-table", "req_pool_indices[r] < 0 or >= max_reqs, active", "no read, seed -1",
        "reads out of bounds", "gives another seed"),
    Row("write-offsets-past-bs", "write_offsets past bs", "untouched", "untouched",
        "writes past bs"),
    Row("window-overflow", "negative prefix where W - prefix exceeds int64",
        "exact", "overflows int64", "wrong window (int64 overflow)"),
    Row("zero-d-tensor", "a 0-d tensor where a 1-D one is expected",
        "counted as length 1, then validated", "raises IndexError", "raises another error"),
    Row("zero-extend-read", "a prefix but extend 0", "skips the read",
        "reads the seed slot", "other value"),
    Row("num-valid-wrap", "min(total_verify, verify_capacity) >= 2^31", "the int32 wrap",
        "stores the int32 wrap", "another value"),
)
"""Spec section 6, top to bottom."""
ROW_KEYS = tuple(row.key for row in ROWS)
BY_KEY = {row.key: row for row in ROWS}


def out_of_contract(case) -> tuple[str, ...]:
    """The keys of the section-6 rows (:data:`ROWS`) ``case`` reaches, in table order: where its
    element rules (:func:`impls.offsets_planner.harness.element_rules.case_rules`) show a situation, or a
    step's error is the 0-d rule's."""
    if case.entry != "launcher":
        return ()
    found = set()
    for rules in case_rules(case):
        found |= set(rules.shows)
        if rules.error == ZERO_D:
            found.add(ZERO_D)
    return tuple(key for key in ROW_KEYS if key in found)


def flat_read_outside_table(case) -> bool:
    """Whether a kernel that reads the seed slot as spec section 6 says upstream's does (at
    ``row * max_seq_len + prefix - 1`` of the flat table, for every active row with a prefix,
    extend 0 included) reads outside the table on ``case``: then what it returns is whatever
    memory holds there (a stray value, a guard-zone fill) or it crashes, and which one changes
    from run to run."""
    if case.entry != "launcher":
        return False
    spec = case.inputs.get(TABLE_NAME, DEFAULT_TABLE)
    if spec["generator"] == "explicit":
        rows, cols = len(spec["values"]), len(spec["values"][0]) if spec["values"] else 0
    else:
        rows, cols = spec["max_reqs"], spec["max_seq_len"]
    for step in case.steps:
        if step.error is not None:
            continue
        rpi, prefix = (evaluate(step.inputs.get(name, [])) for name in REQUEST_INPUT_NAMES[:2])
        for row, p in zip(rpi, prefix):
            if row != 0 and p > 0 and not 0 <= row * cols + p - 1 < rows * cols:
                return True
    return False
