"""The whole canary plan as a subject of the harness's one-call engine: where its cases are, how a
case's inputs are built, which elements a golden defines and which rule decides each element (spec
``docs/spec/canary-plan.md`` section 7).

The harness reads this module by attribute (``conformance/corpus/subjects.py`` lists them) and this
module imports nothing of the harness. A case is one JSON object of ``cases/canary-plan/*.jsonl``
(format: that folder's README); each is one call of a pipeline (:mod:`impls.canary_plan.pipeline`).
The entries planner's subject supplies the case reader, the input builders, the error fields and
the entries' element rules, applied here to the verify columns.
"""

from __future__ import annotations

import torch

from impls.canary_plan import PLANNERS, get_planner, planner_mode
from impls.canary_plan.upstream import LAUNCHERS, upstream_launchers
from impls.canary_plan.contract import (
    ENABLE,
    ENTRY_FIELDS,
    INT_SCALARS,
    NUM_VALID,
    OUTPUT_NAMES,
    SCRATCH,
    SEEDS,
    TO_ENTRIES,
    WRITE_NUM_VALID_REQS,
    WRITE_OFFSETS,
)
from impls.entries_planner import subject as entries
from impls.entries_planner.contract import ENABLE_NAME, SCRATCH_NAME
from impls.entries_planner.contract import OUTPUT_NAMES as ENTRIES_OUTPUTS
from impls.canary_plan.pipeline import stage_kwargs, wrapper_checks
from impls.entries_planner.validate import validate_entries_launch
from impls.offsets_planner.errors import PlanError
from impls.offsets_planner.python_planner import launch as python_offsets
from impls.offsets_planner.validate import validate_launch

__all__ = ["NAME", "ENGINE", "SPEC", "OUTPUTS", "ERROR", "PLANNERS", "get_planner",
           "planner_mode", "load_cases", "build", "expected_error", "error_rule", "golden",
           "element_rules", "error_element_rules", "error_written_values", "failing_stage",
           "VALIDATE_FIRST",
           "UPSTREAM_LAUNCHERS", "upstream_launchers", "UPSTREAM_TREE"]

NAME = "canary-plan"
"""The subject's name: ``--subject canary-plan``, and its folder under ``cases/``."""
ENGINE = "one-call"
SPEC = "docs/spec/canary-plan.md"
OUTPUTS: tuple[str, ...] = OUTPUT_NAMES
"""The nine plan fields (spec section 3), in upstream's field order."""
ERROR = PlanError
"""What a pipeline raises for a documented error: the wrapper's, or a stage's passed through."""
UPSTREAM_LAUNCHERS: tuple[str, ...] = tuple(LAUNCHERS)
"""Upstream's own whole-plan launchers ``python -m conformance upstream-launchers`` judges on
these cases: the wrapper and its torch reference (:mod:`impls.canary_plan.upstream`, which also
gives ``upstream_launchers``)."""
UPSTREAM_TREE = entries.UPSTREAM_TREE
"""What of a release's wheel is laid out for them: the entries planner's tree, which also holds the
wrapper's and the torch reference's files (:mod:`impls.entries_planner.upstream`, ``EXTRA_STARTS``)."""
CONTRACT = entries.CONTRACT
REQUEST_NAMES = ("req_pool_indices", "prefix_lens", "extend_seq_lens")
load_cases = entries.load_cases
"""Every case of a folder's ``*.jsonl`` files (the entries subject's reader: one JSON object a line)."""
expected_error = entries.expected_error
"""(catalog id, exact message) of an error case (``expect.error`` / ``expect.message``), else None."""
error_rule = entries.error_rule
"""``scalar-int32`` for the entries stage's scalar check passed through (a project rule of the
entries spec, section 8), else the contract's (spec section 7); a raise on a valid case, the
project rule the case pins, else the contract's (the entries spec, section 8)."""


def _column(spec) -> list[int]:
    """A request column: a list of ints, or ``{"fill": value, "n": count}``."""
    return [spec["fill"]] * spec["n"] if isinstance(spec, dict) else list(spec)


def build(case: dict, device: torch.device) -> dict:
    """The launcher's 19 keyword arguments for ``case`` on ``device``: the nine outputs zero (the
    harness fills them before the call), the inputs as the README says, the case's ``change``
    applied last.

    Raises:
        ValueError: an unknown input field, or a valid case whose ``expect`` lacks an output.
    """
    spec = dict(case["inputs"])
    rpi, prefix, extend = (_column(spec.pop(name)) for name in REQUEST_NAMES)
    table = entries.table_from(spec.pop("table", entries.DEFAULT_TABLE), spec.pop("table_set", []))
    lut, pool = entries.lut_from(spec.pop("lut", None)), entries.pool_from(spec.pop("pool", None))
    valid = spec.pop("valid_lens", None)
    capacity, writes = spec.pop("capacity"), spec.pop("write_req_capacity")
    scalars = {"verify_capacity": spec.pop("verify_capacity", capacity),
               **{name: spec.pop(name, 0) for name in INT_SCALARS}}
    change = spec.pop("change", {})
    if spec:
        raise ValueError(f"unknown input fields {sorted(spec)}")
    missing = [n for n in OUTPUTS if n not in case["expect"]]
    if expected_error(case) is None and missing:
        raise ValueError(f"expect lacks {missing}")
    int64, int32 = torch.int64, torch.int32
    kwargs = {
        **{name: torch.zeros(capacity, dtype=int64) for name in ENTRY_FIELDS},
        NUM_VALID: torch.zeros(1, dtype=int32), ENABLE: torch.zeros(1, dtype=int32),
        WRITE_OFFSETS: torch.zeros(writes + 1, dtype=int64),
        SEEDS: torch.zeros(writes, dtype=int64), WRITE_NUM_VALID_REQS: torch.zeros(1, dtype=int32),
        **{name: torch.tensor(v, dtype=int64) for name, v in zip(REQUEST_NAMES, (rpi, prefix, extend))},
        "req_to_token": table, "full_to_swa_index_mapping": lut,
        "req_to_verify_expected_tokens": pool,
        "req_to_verify_expected_tokens_valid_lens":
            None if valid is None else torch.tensor(valid, dtype=int64),
        **scalars,
    }
    kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    for name, how in change.items():
        kwargs[name] = entries.changed(kwargs[name], how)
    return kwargs


def golden(case: dict) -> dict[str, list[int]]:
    """{output: the values of its leading elements} of a valid case, from ``expect`` (spec section
    6): the entries [0, T) (none when the gate is shut), ``write_offsets`` whole (the wrapper zeroes
    it), the bs seeds, the three one-element fields."""
    return {name: list(case["expect"][name]) for name in OUTPUTS}


def element_rules(case: dict, kwargs: dict) -> dict[str, list[str]]:
    """{output: the rule deciding each element} (spec section 7), from the inputs ``kwargs``
    (``build``'s, any device).

    The verify columns: the entries subject's rules (entries spec section 8) on the entries
    planner's view of the call, its scratch and enable being what the offsets planner writes for
    these inputs. The seeds: the offsets spec's section-6 rules (``row-out-of-table``,
    ``past-row``, ``lut-clamp``) for a live request with a prefix and a write. Everything else,
    ``write_offsets`` whole and the three one-element fields included, the contract's.
    """
    rules = {name: [CONTRACT] * kwargs[name].numel() for name in OUTPUTS}
    rpi, prefix, extend = (kwargs[n].tolist() if kwargs[n].dim() == 1 else None
                           for n in REQUEST_NAMES)
    if None in (rpi, prefix, extend) or not len(rpi) == len(prefix) == len(extend):
        return rules  # an error case: nothing is written, which is the contract's
    window = int(kwargs["swa_window_size"])
    offsets = entries.exclusive_offsets(rpi, prefix, window)
    view = {stage: kwargs[ours] for stage, ours in TO_ENTRIES.items() if ours != SCRATCH}
    view.update({SCRATCH_NAME: torch.tensor(offsets), "swa_window_size": window,
                 ENABLE_NAME: torch.tensor([int(offsets[-1] <= kwargs["verify_capacity"])])})
    verify = entries.element_rules(case, view)
    for stage, ours in zip(ENTRIES_OUTPUTS, ENTRY_FIELDS):
        rules[ours] = verify[stage]
    table, lut = kwargs["req_to_token"].tolist(), kwargs["full_to_swa_index_mapping"]
    for r, (row, p, e) in enumerate(zip(rpi, prefix, extend)):
        if r < len(rules[SEEDS]):
            rules[SEEDS][r] = _seed_rule(table, None if lut is None else lut.numel(), row, p, e)
    return rules


VALIDATE_FIRST = "validate-first"
"""The project rule of spec section 4 item 4: a stage's error is raised before anything is
written, where upstream's wrapper has already zeroed ``write_offsets`` (an offsets-stage error) or
run the offsets stage too (an entries-stage error)."""
WRITTEN_BEFORE: dict[str, tuple[str, ...]] = {
    "offsets": (WRITE_OFFSETS,),
    "entries": (WRITE_OFFSETS, SEEDS, NUM_VALID, ENABLE, WRITE_NUM_VALID_REQS),
}
"""The plan fields upstream's order writes before the failing stage's checks (spec section 4
item 5: zero ``write_offsets``, then the offsets stage, then the entries stage)."""


def failing_stage(kwargs: dict) -> str | None:
    """``offsets`` or ``entries``: the stage whose validator refuses the launcher's keywords
    ``kwargs`` once the wrapper's three checks pass; None when a wrapper check fails, both stages
    accept, or the keywords cannot even be read (then no stage is reached)."""
    try:
        offsets, entries_kwargs = stage_kwargs(kwargs, wrapper_checks(dict(kwargs)))
    except Exception:  # noqa: BLE001 - the wrapper's error, or arguments no check can read
        return None
    for stage, validate, stage_args in (("offsets", validate_launch, offsets),
                                        ("entries", validate_entries_launch, entries_kwargs)):
        try:
            validate(**stage_args)
        except Exception:  # noqa: BLE001 - any refusal of this stage's validator
            return stage
    return None


def error_element_rules(case: dict, kwargs: dict) -> dict[str, list[str]]:
    """{output: the rule deciding each element} of an error case (spec section 7): the case's
    ``error_rule`` everywhere (nothing may be written), except the fields upstream's order writes
    before the failing stage's checks (:data:`WRITTEN_BEFORE`), which :data:`VALIDATE_FIRST`
    decides."""
    rule = error_rule(case)
    rules = {name: [rule] * kwargs[name].numel() for name in OUTPUTS
             if isinstance(kwargs.get(name), torch.Tensor)}
    for name in WRITTEN_BEFORE.get(failing_stage(kwargs), ()):
        if name in rules:
            rules[name] = [VALIDATE_FIRST] * len(rules[name])
    return rules


def error_written_values(case: dict, kwargs: dict) -> dict[str, list[int]]:
    """{output: value per element} that upstream's order leaves in the :data:`WRITTEN_BEFORE`
    fields of an error case whose failing stage is reached, from the poisoned arguments
    ``kwargs`` before the call: ``write_offsets`` zero, and for an entries-stage error what the
    pure-Python offsets planner then writes (on clones; an element it leaves keeps its poison).
    Empty when no stage is reached. Under :data:`VALIDATE_FIRST` a planner may write that value
    and no other (any other value is the contract's difference)."""
    stage = failing_stage(kwargs)
    if stage is None:
        return {}
    outputs = {name: kwargs[name].clone() for name in OUTPUTS}
    outputs[WRITE_OFFSETS].zero_()
    if stage == "entries":
        args = {**kwargs, **outputs}
        offsets, _ = stage_kwargs(args, wrapper_checks(dict(args)))
        python_offsets(**offsets)
    return {name: outputs[name].flatten().tolist() for name in WRITTEN_BEFORE[stage]}


def _seed_rule(table: list, lut_len: int | None, row: int, prefix: int, extend: int) -> str:
    """Which rule decides a request's seed (offsets spec section 8's table); the first that
    applies: a row outside the table, a seed position past the row, a slot past the LUT."""
    if row == 0 or prefix <= 0 or extend <= 0:
        return CONTRACT
    if not 0 <= row < len(table):
        return "row-out-of-table"
    if prefix - 1 >= len(table[0]):
        return "past-row"
    if lut_len is not None and table[row][prefix - 1] >= lut_len:
        return "lut-clamp"
    return CONTRACT
