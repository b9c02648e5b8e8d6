"""Which rule decides each output element and each error of a case's steps (spec section 8).

Every output element, and the error (or its absence) of every step, is decided by exactly one of
three rules: the **contract** (spec sections 3-5 and the documented errors), a **project rule** (a
row of spec section 6, "this project" column, or the 0-d rule) or the **wrapper** (section 4 item
0). A project rule decides only the elements of the requests that reach its situation; everything
else in the same case is the contract's. :func:`case_rules` computes that map from a loaded case's
own values (generated tables included, each step's table changes applied), one
:class:`StepRules` per step, so that the judge can decide element by element.

The map also says where each section-6 situation *shows* (:attr:`StepRules.shows`): the elements
on which a planner's behaviour in that situation can be seen, even where the contract decides the
value (the seed of a request with a prefix and extend 0 is -1 by section 5, yet that is where a
kernel that reads the seed slot past the table would crash or leak a value). The divergence profile
credits a planner with a behaviour only from those elements.

Four rows of section 6 restate section 5, where upstream's launcher and this project agree or
section 5 is explicit: write offsets past bs are untouched ("nothing else is written"), the window
start is exact, a prefix with extend 0 gets seed -1, and num_valid is stored as its int32 wrap.
They *show* on the elements they concern but the contract decides those. The rows that decide
are those where section 5 leaves the value undefined: the seed of a request whose seed position
is past its row (``past-row``) or whose row is outside the table (``row-out-of-table``), the seed
whose slot is past the LUT (``lut-clamp``), and the error of a step with a 0-d tensor.

Two things are never a project rule's or the wrapper's (spec section 8): an element that must be
written and was not, and a step that must raise and returned. The judge applies that; this module
only says who decides a *value*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from conformance.corpus.arrays import evaluate
from conformance.corpus.generators import DEFAULT_TABLE
from conformance.corpus.rule_kinds import CONTRACT, WRAPPER  # noqa: F401 - CONTRACT: the judge reads it here
from impls.offsets_planner.harness.hazards import INT64_MIN, LutValues, TableValues
from impls.offsets_planner import contract as _contract

OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_NAME = _contract.TABLE_NAME
VERIFY_CAPACITY_NAME = _contract.VERIFY_CAPACITY_NAME

WRAPPER_ERROR_ID = "swa-lut-required"
"""The catalog id (impls/offsets_planner/errors.py) of the wrapper's check (spec section 4 item 0:
upstream checks it in its wrapper, not in its launcher)."""
ZERO_D = "zero-d-tensor"
"""The project's 0-d rule (spec section 6): a 0-d tensor counts as length 1, then is validated."""
SCRATCH, WRITE_OFFSETS, SEEDS = OUTPUT_NAMES[:3]  # spec section 3's order
NUM_VALID, ENABLE = SCALAR_OUTPUT_NAMES[:2]
INT32_WRAP = 1 << 31
"""min(total_verify, verify_capacity) at or above this is stored as its int32 wrap (spec §5)."""
RPI, PREFIX, EXTEND = REQUEST_INPUT_NAMES


NOTHING_ELSE = ("spec §5: nothing else is written; an element past the plan keeps what the caller "
                "left there")
"""The clause of the elements past a plan's defined ones (stale tails, lanes past bs)."""
_WRAPPER_ZEROES = (" (upstream's wrapper zeroes write_offsets before the launch; the planner "
                   "does not)")
_DEFINED = {
    SCRATCH: ("spec §5: out_verify_offsets_scratch[r] = sum of verify_len[0..r) for r < bs "
              "(an exclusive prefix sum)",
              "spec §5: out_verify_offsets_scratch[bs] = total_verify"),
    WRITE_OFFSETS: ("spec §5: out_write_offsets[r] = sum of write_len[0..r) for r < bs "
                    "(an exclusive prefix sum)", "spec §5: out_write_offsets[bs] = total_write"),
    SEEDS: ("spec §5: out_write_seed_slot_indices[r] = seed[r]: -1 unless request r is active, "
            "has a prefix and writes; else req_to_token[req_pool_indices[r], prefix_lens[r] - 1], "
            "through the LUT when there is one",),
    NUM_VALID: ("spec §5: out_verify_num_valid[0] = min(total_verify, verify_capacity), stored "
                "as its int32 wrap",),
    ENABLE: ("spec §5: out_verify_enable[0] = 0 if total_verify > verify_capacity else 1",),
    _contract.WRITE_NUM_VALID_REQS_NAME: ("spec §5: out_write_num_valid_reqs[0] = bs (padding "
                                          "rows included)",),
}
"""{output name: the section-5 clauses of its defined elements: the element r < bs first, then
the total at [bs] where the output has one}."""


def contract_clause(name: str, index: int, bs: int) -> str:
    """The clause of spec section 5 that decides element ``index`` of output ``name`` in a step of
    ``bs`` requests, where the contract decides it: the output's own line for a defined element
    (``golden_lengths``), :data:`NOTHING_ELSE` past them.

    Raises:
        KeyError: ``name`` is not an output of spec section 3.
    """
    clauses = _DEFINED[name]
    if index >= _contract.golden_lengths(bs)[name]:
        return NOTHING_ELSE + (_WRAPPER_ZEROES if name == WRITE_OFFSETS else "")
    return clauses[-1] if index == bs else clauses[0]


@dataclass
class StepRules:
    """Who decides what in one step.

    Attributes:
        elements: {output name: {tensor index: section-6 row key}} for the elements a project rule
            decides; every element not listed is the contract's.
        error: the rule that decides the step's error, or that it raises none: ``contract``,
            ``wrapper`` or :data:`ZERO_D`.
        shows: {section-6 row key: [(output name, tensor index), ...]}: where the step reaches each
            situation, the elements on which a planner's behaviour there shows.
        upstream: {(output name, tensor index): value} where a project rule decides and spec
            section 6 says what upstream's Triton kernel gives instead, from the case's values:
            the seed of a request past its row whose flat read (``rpi * max_seq_len + prefix -
            1``, then the LUT, its index clamped) lands inside the table. A planner that gives
            exactly that does as upstream does (the divergence profile says so); elsewhere, as
            a read on the last row past the table, only the engine can tell what was read.
    """

    elements: dict[str, dict[int, str]] = field(default_factory=dict)
    error: str = CONTRACT
    shows: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    upstream: dict[tuple[str, int], int] = field(default_factory=dict)

    def rule(self, name: str, index: int) -> str:
        """The rule that decides element ``index`` of output ``name``."""
        return self.elements.get(name, {}).get(index, CONTRACT)

    def decide(self, row: str, name: str, index: int) -> None:
        """Record that ``row`` decides (and shows on) element ``index`` of ``name``."""
        self.elements.setdefault(name, {}).setdefault(index, row)
        self.show(row, name, index)

    def show(self, row: str, name: str, index: int) -> None:
        """Record that ``row``'s situation shows on element ``index`` of ``name``."""
        self.shows.setdefault(row, []).append((name, index))

    def to_json(self) -> dict:
        """Plain data: ``{"error": rule, "elements": {name: {index: row}}, "shows": {row: [[name,
        index], ...]}}`` (indices as strings, as JSON keys are)."""
        return {"error": self.error,
                "elements": {n: {str(i): r for i, r in d.items()} for n, d in self.elements.items()},
                "shows": {row: [list(e) for e in where] for row, where in self.shows.items()}}


def _upstream_seed(rpi: int, prefix: int, table: TableValues, lut: LutValues | None) -> int | None:
    """The seed upstream's Triton kernel gives a request past its row (spec section 6: the flat
    table read at ``rpi * max_seq_len + prefix - 1``; a slot of 0 or more through the LUT with its
    index clamped to ``lut_len - 1``), or None where that read lands past the table."""
    row, pos = divmod(rpi * table.cols + prefix - 1, table.cols)
    if row >= table.rows:
        return None
    slot = table[row, pos]
    if lut is None or slot < 0 or lut.len == 0:
        return slot
    return lut[min(slot, lut.len - 1)]


def _request_rules(rules: StepRules, r: int, values: tuple[int, int, int], bs: int, window: int,
                   table: TableValues, lut: LutValues | None) -> int:
    """Record what request ``r`` reaches; return its verify length as the project computes it."""
    rpi, prefix, extend = values
    if rpi == 0:  # a padding row: verify 0, write 0, seed -1, nothing read (contract)
        return 0
    start = max(prefix - window, 0) if window > 0 else 0
    if window > 0 and prefix - window < INT64_MIN:
        # section 5's exact arithmetic decides them (the contract); every later offset, the
        # total and the two scalars show a window start that overflowed
        for j in range(r + 1, bs + 1):
            rules.show("window-overflow", SCRATCH, j)
        rules.show("window-overflow", NUM_VALID, 0)
        rules.show("window-overflow", ENABLE, 0)
    if prefix <= 0:
        return max(prefix - start, 0)
    rows, cols = table.rows, table.cols
    inside = 0 <= rpi < rows
    if extend <= 0:  # seed -1 by spec section 5; upstream still reads the slot
        if not inside:
            rules.show("row-out-of-table", SEEDS, r)
        elif rpi * cols + prefix - 1 >= rows * cols:
            rules.show("zero-extend-read", SEEDS, r)
        return max(prefix - start, 0)
    if not inside:
        rules.decide("row-out-of-table", SEEDS, r)
        return max(prefix - start, 0)
    if prefix - 1 >= cols:
        rules.decide("past-row", SEEDS, r)
        if cols > 0 and (seed := _upstream_seed(rpi, prefix, table, lut)) is not None:
            rules.upstream[(SEEDS, r)] = seed
    if lut is not None and cols > 0:
        slot = table[rpi, min(prefix - 1, cols - 1)]
        if slot >= lut.len:
            rules.decide("lut-clamp", SEEDS, r)
    return max(prefix - start, 0)


def _step_rules(step, bs: int, capacity: int, verify_capacity: int, table: TableValues,
                lut: LutValues | None) -> StepRules:
    rules = StepRules()
    if any(o.get("shape") == [] for o in step.overrides):
        rules.error = ZERO_D
    error = step.error
    if error is not None:
        if error.get("id") == WRAPPER_ERROR_ID:
            rules.error = WRAPPER
        return rules  # raised before the launch: no element is written, none decided
    columns = [evaluate(step.inputs.get(name, [])) for name in (RPI, PREFIX, EXTEND)]
    window = step.inputs.get(SWA_WINDOW_NAME, 0)
    total = 0
    for r, values in enumerate(zip(*columns)):
        total += _request_rules(rules, r, values, bs, window, table, lut)
    for j in range(bs + 1, capacity + 1):  # untouched: section 5's "nothing else is written"
        rules.show("write-offsets-past-bs", WRITE_OFFSETS, j)
    if min(total, verify_capacity) >= INT32_WRAP:  # the int32 wrap is section 5's: contract
        rules.show("num-valid-wrap", NUM_VALID, 0)
    return rules


def case_rules(case) -> list[StepRules]:
    """One :class:`StepRules` per step of ``case`` (a loaded
    :class:`conformance.corpus.case_model.Case`); a validator or allocate case has one step, whose
    error the contract decides.

    Raises:
        ArraySpecError: an array spec that cannot be evaluated (the loader checks them first).
    """
    if case.entry != "launcher":
        return [StepRules()]
    table = TableValues(case.inputs.get(TABLE_NAME) or DEFAULT_TABLE)
    spec = case.inputs.get("lut")
    lut = None if spec is None else LutValues(spec)
    capacity = case.write_req_capacity
    out = []
    for step in case.steps:
        table.change(step.inputs.get("req_to_token_set", ()))  # in place, before this step
        if lut is not None:
            lut.change(step.inputs.get("lut_set", ()))
        # a case that names no capacity gets 2^20 (conformance/engine/inputs.py): never >= 2^31
        verify_capacity = step.inputs.get(VERIFY_CAPACITY_NAME, 0)
        out.append(_step_rules(step, step.bs, capacity, verify_capacity, table, lut))
    return out


def reached_rules(rules: list[StepRules]) -> set[str]:
    """Every rule other than the contract that decides something in ``rules`` (what a case's
    ``pins`` must name: spec section 8)."""
    found = {r for s in rules for d in s.elements.values() for r in d.values()}
    found |= {s.error for s in rules if s.error != CONTRACT}
    return found
