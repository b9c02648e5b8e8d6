"""Deliberately wrong whole-plan pipelines, each with the flat signature of docs/spec/canary-plan.md
section 3 and one planted bug in the wrapper's part (section 4), for ``tests/test_canary_plan.py``.

Each is assembled from the right pipeline's pieces (:mod:`impls.canary_plan.pipeline`) around the
pure-Python offsets and entries planners, with one step left out, moved or given the wrong tensor.
"""

from __future__ import annotations

import torch

from impls.canary_plan.contract import WRITE_OFFSETS
from impls.canary_plan.pipeline import compose, run, stage_kwargs, validate_stages, wrapper_checks
from impls.entries_planner.contract import SCRATCH_NAME
from impls.entries_planner.python_planner import launch as entries_launch
from impls.offsets_planner.python_planner import launch as offsets_launch
from impls.offsets_planner.validate import leading_len

RIGHT = compose(offsets_launch, entries_launch)
"""The right pipeline of the two Python planners (the subject's ``python``)."""


def _stages(kw: dict) -> tuple[torch.Tensor, dict, dict]:
    scratch = wrapper_checks(kw)
    offsets, entries = stage_kwargs(kw, scratch)
    validate_stages(offsets, entries)
    return scratch, offsets, entries


def forgets_to_zero_write_offsets(**kw) -> None:
    """Never zeroes ``write_offsets``: its elements past [bs] keep what the caller left there."""
    _, offsets, entries = _stages(kw)
    offsets_launch(**offsets)
    entries_launch(**entries)


def zeroes_after_the_offsets_stage(**kw) -> None:
    """Zeroes ``write_offsets`` after the offsets stage, wiping its prefix sums."""
    _, offsets, entries = _stages(kw)
    offsets_launch(**offsets)
    kw[WRITE_OFFSETS].zero_()
    entries_launch(**entries)


def entries_read_an_unfilled_scratch(**kw) -> None:
    """Hands the entries stage a second fresh scratch (zeroed) instead of the one the offsets
    stage wrote: the entries stage sees a total of 0 and writes nothing."""
    scratch, offsets, entries = _stages(kw)
    kw[WRITE_OFFSETS].zero_()
    offsets_launch(**offsets)
    entries_launch(**{**entries, SCRATCH_NAME: torch.zeros_like(scratch)})


def skips_the_capacity_check(**kw) -> None:
    """Never compares ``verify_capacity`` with the verify columns' length (section 4 item 3)."""
    length = leading_len(kw["verify_slot_indices"])
    scratch = wrapper_checks({**kw, "verify_capacity": length})
    offsets, entries = stage_kwargs(kw, scratch)
    validate_stages(offsets, entries)
    kw[WRITE_OFFSETS].zero_()
    offsets_launch(**offsets)
    entries_launch(**entries)


def skips_the_lut_check(**kw) -> None:
    """Leaves section 4 item 1 to the offsets planner, which raises the same text under its own
    catalog id (``swa-lut-required``), not the wrapper's."""
    scratch = wrapper_checks({**kw, "swa_window_size": 0})
    offsets, entries = stage_kwargs(kw, scratch)
    validate_stages(offsets, entries)
    kw[WRITE_OFFSETS].zero_()
    offsets_launch(**offsets)
    entries_launch(**entries)


def zeroes_before_checking(**kw) -> None:
    """Zeroes ``write_offsets`` before the wrapper's checks: an error case has written it."""
    kw[WRITE_OFFSETS].zero_()
    run(kw, offsets_launch, entries_launch)


class StaleScratch:
    """Keeps the scratch of its first call for the entries stage ("allocated once, as under graph
    capture") while the offsets stage writes a fresh one each call: from the second call on, the
    entries are planned from the first call's offsets."""

    def __init__(self) -> None:
        self.kept: torch.Tensor | None = None

    def __call__(self, **kw) -> None:
        scratch, offsets, entries = _stages(kw)
        if self.kept is None:
            self.kept = scratch
        kw[WRITE_OFFSETS].zero_()
        offsets_launch(**offsets)
        entries_launch(**{**entries, SCRATCH_NAME: self.kept})


def validates_at_each_stage(**kw) -> None:
    """Upstream's order (docs/spec/canary-plan.md section 4): each stage validated only when it
    launches, so an entries-stage error comes after ``write_offsets`` was zeroed and the offsets
    stage wrote the write plan and the two verify scalars."""
    offsets, entries = stage_kwargs(kw, wrapper_checks(kw))
    kw[WRITE_OFFSETS].zero_()
    offsets_launch(**offsets)
    entries_launch(**entries)


def drops_the_clamped_seed(**kw) -> None:
    """Right, except that with a LUT the first seed is -1 where a slot past the LUT clamps
    (the offsets spec's ``lut-clamp``): a project rule's element, not the contract's."""
    RIGHT(**kw)
    if kw["full_to_swa_index_mapping"] is not None and kw["write_seed_slot_indices"].numel():
        kw["write_seed_slot_indices"][0] = -1
