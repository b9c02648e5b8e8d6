"""Mutants of the three scalars (spec section 5: ``out_verify_num_valid`` = min(total_verify,
verify_capacity) as an int32 store, ``out_verify_enable`` = total_verify <= verify_capacity,
``out_write_num_valid_reqs`` = bs): each overrides :meth:`Planner.finish` or
:meth:`Planner.store` for one scalar."""

from __future__ import annotations

from dataclasses import replace

from tests.planted.mutants.base import Planner, launcher, wrap

_INT32_MAX = (1 << 31) - 1


class _EnableGe(Planner):
    """Bug: enable is 0 when total_verify >= verify_capacity (>= instead of >)."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        done = super().finish(verify_offsets, write_offsets, seeds, plan, rpi)
        return (*done[:4], 0 if done[0][-1] >= plan.verify_capacity else 1, done[5])


class _EnableFromWriteTotal(Planner):
    """Bug: enable compares the write total (not the verify total) with verify_capacity."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        done = super().finish(verify_offsets, write_offsets, seeds, plan, rpi)
        return (*done[:4], 0 if done[1][-1] > plan.verify_capacity else 1, done[5])


class _NumValidNotMin(Planner):
    """Bug: num_valid is total_verify itself, not min'd with verify_capacity (int32 store)."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        done = super().finish(verify_offsets, write_offsets, seeds, plan, rpi)
        return (*done[:3], wrap(done[0][-1], 32), *done[4:])


class _NumValidSaturates(Planner):
    """Bug: num_valid saturates at 2^31 - 1 instead of wrapping as an int32 store does."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        done = super().finish(verify_offsets, write_offsets, seeds, plan, rpi)
        exact = min(done[0][-1], plan.verify_capacity)
        return (*done[:3], min(exact, _INT32_MAX), *done[4:])


class _NumReqsLiveOnly(Planner):
    """Bug: write_num_valid_reqs counts only live rows, not bs (padding rows left out)."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        done = super().finish(verify_offsets, write_offsets, seeds, plan, rpi)
        return (*done[:5], sum(1 for row in rpi if self.active(row)))


class _NumValidAtomicAdd(Planner):
    """Bug: num_valid is atomically added into a buffer nobody zeroed (previous contents + value)."""

    def store(self, kwargs, plan, buffers, results):
        previous = int(kwargs["out_verify_num_valid"][0])
        super().store(kwargs, plan, buffers,
                      (*results[:3], wrap(previous + results[3], 32), *results[4:]))


class _CapacityInt32(Planner):
    """Bug: verify_capacity reaches the kernel as int32, so a capacity of 2^31 or more wraps."""

    def finish(self, verify_offsets, write_offsets, seeds, plan, rpi):
        return super().finish(verify_offsets, write_offsets, seeds,
                              replace(plan, verify_capacity=wrap(plan.verify_capacity, 32)), rpi)


enable_ge = launcher(_EnableGe)
enable_from_write_total = launcher(_EnableFromWriteTotal)
num_valid_not_min = launcher(_NumValidNotMin)
num_valid_saturates = launcher(_NumValidSaturates)
num_reqs_live_only = launcher(_NumReqsLiveOnly)
num_valid_atomic_add = launcher(_NumValidAtomicAdd)
capacity_int32 = launcher(_CapacityInt32)
