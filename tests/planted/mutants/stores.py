"""Mutants of what is written and when (spec section 5: only the defined regions are written,
inputs are never modified, the same inputs give the same outputs): each overrides
:meth:`Planner.store` or :meth:`Planner.launch`."""

from __future__ import annotations

from impls.offsets_planner.constants import NO_SEED, PLAN_BS_BLOCK_SIZE
from impls.offsets_planner.contract import OUTPUT_NAMES
from tests.planted.mutants.base import Planner, launcher


class _ScratchPastBs(Planner):
    """Bug: stores the whole 4096-lane block's scan, so scratch entries past bs get the total."""

    def store(self, kwargs, plan, buffers, results):
        super().store(kwargs, plan, buffers, results)
        kwargs["out_verify_offsets_scratch"][plan.bs + 1:].fill_(results[0][-1])


class _ZeroesWriteOffsetsTail(Planner):
    """Bug: zeroes out_write_offsets past bs, as upstream's wrapper does before its launch."""

    def store(self, kwargs, plan, buffers, results):
        super().store(kwargs, plan, buffers, results)
        kwargs["out_write_offsets"][plan.bs + 1:].zero_()


class _SeedsTailCleared(Planner):
    """Bug: fills every seed past bs - 1 with the -1 sentinel (the loop runs to the capacity)."""

    def store(self, kwargs, plan, buffers, results):
        super().store(kwargs, plan, buffers, results)
        kwargs["out_write_seed_slot_indices"][plan.bs:].fill_(NO_SEED)


class _ClampsExtendInPlace(Planner):
    """Bug: clamps extend_seq_lens in place (negative extends become 0): an input is modified."""

    def launch(self, kwargs):
        super().launch(kwargs)
        kwargs["extend_seq_lens"].clamp_(min=0)


class _TotalDroppedAtCapacity(Planner):
    """Bug: out_write_offsets[bs] is not stored when bs == write_req_capacity (lane mask < cap)."""

    def store(self, kwargs, plan, buffers, results):
        if plan.bs == plan.write_req_capacity:
            results = (results[0], [*results[1][:-1], None], *results[2:])
        super().store(kwargs, plan, buffers, results)


class _CachedPlan(Planner):
    """Bug: a second call on the same table and outputs with the same bs replays the last plan."""

    def __init__(self) -> None:
        self.last: tuple | None = None  # (the tensors keyed on, by address; bs; results)

    def launch(self, kwargs):
        plan, buffers = self.validate(kwargs)
        keyed = tuple(kwargs[name] for name in ("req_to_token", *OUTPUT_NAMES))
        if (self.last is not None and self.last[1] == plan.bs
                and all(a.data_ptr() == b.data_ptr() for a, b in zip(self.last[0], keyed))):
            results = self.last[2]  # the request values are never looked at again
        else:
            results = self.plan(kwargs, plan, buffers)
        self.last = (keyed, plan.bs, results)  # holds the tensors: no address is reused
        self.store(kwargs, plan, buffers, results)


class _EarlyReturnAtBsZero(Planner):
    """Bug: returns early when bs == 0, so the [0] totals and the three scalars are never written."""

    def store(self, kwargs, plan, buffers, results):
        if plan.bs:
            super().store(kwargs, plan, buffers, results)


class _TotalMaskedAtBlockSize(Planner):
    """Bug: the scratch total [bs] is stored by lane bs, masked out when bs == 4096 (the block)."""

    def store(self, kwargs, plan, buffers, results):
        if plan.bs == PLAN_BS_BLOCK_SIZE:
            results = ([*results[0][:-1], None], *results[1:])
        super().store(kwargs, plan, buffers, results)


class _TileTailStored(Planner):
    """Bug: stores seeds and write offsets in whole 8-lane tiles from bs 8 up (lanes past bs too)."""

    def store(self, kwargs, plan, buffers, results):
        super().store(kwargs, plan, buffers, results)
        if plan.bs < 8:
            return
        seeds, offsets = kwargs["out_write_seed_slot_indices"], kwargs["out_write_offsets"]
        end = min(-(-plan.bs // 8) * 8, seeds.numel())
        seeds[plan.bs:end] = NO_SEED
        offsets[plan.bs + 1:end + 1] = offsets[plan.bs].item()


scratch_past_bs = launcher(_ScratchPastBs)
zeroes_write_offsets_tail = launcher(_ZeroesWriteOffsetsTail)
seeds_tail_cleared = launcher(_SeedsTailCleared)
clamps_extend_in_place = launcher(_ClampsExtendInPlace)
total_dropped_at_capacity = launcher(_TotalDroppedAtCapacity)
cached_plan = launcher(_CachedPlan)
early_return_at_bs_zero = launcher(_EarlyReturnAtBsZero)
total_masked_at_block_size = launcher(_TotalMaskedAtBlockSize)
tile_tail_stored = launcher(_TileTailStored)
