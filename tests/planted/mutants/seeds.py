"""Mutants of the seed (spec sections 5 and 6: ``seed[r]`` is the table entry at column
``prefix - 1`` of an active row inside the table with a prefix and a write, else -1): each
overrides one of the seed steps of :class:`Planner`.

Three are equivalent under the contract profile (``tests/planted/mutants/__init__.py`` says why):
they differ from this project only where a row of spec section 6 decides the seed.
"""

from __future__ import annotations

from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
from impls.offsets_planner.python_planner import _gather
from tests.planted.mutants.base import Planner, launcher, wrap


class _SeedColumnPrefix(Planner):
    """Bug: the seed is read from column prefix instead of prefix - 1 (clamped to the row)."""

    def seed_position(self, row, prefix, extend, plan):
        position = super().seed_position(row, prefix, extend, plan)
        return None if position is None else self.clamp_position(prefix, plan)


class _SentinelZero(Planner):
    """Bug: a request without a seed gets 0 (the dummy slot) instead of the -1 sentinel."""

    def place_seeds(self, bs, seeded, seeds):
        out = [0] * bs
        for i, seed in zip(seeded, seeds):
            out[i] = seed
        return out


class _SeedWithoutWrite(Planner):
    """Bug: the seed condition ignores the write: a prefix with extend 0 still gets its seed."""

    def seed_position(self, row, prefix, extend, plan):
        return super().seed_position(row, prefix, 1, plan)


class _SeedOnNegativeExtend(Planner):
    """Bug: the seed condition is extend != 0, so a negative extend gets a seed."""

    def seed_position(self, row, prefix, extend, plan):
        return super().seed_position(row, prefix, 1 if extend != 0 else 0, plan)


class _SeedSkippedPastRow(Planner):
    """Bug: a past-the-row request (prefix - 1 >= max_seq_len) never has its seed stored at all."""

    def plan(self, kwargs, plan, buffers):
        verify, write, seeds, *scalars = super().plan(kwargs, plan, buffers)
        rpi, prefix, extend = (kwargs[name].tolist() for name in REQUEST_INPUT_NAMES)
        seeds = [None if self.seed_position(r, p, e, plan) is not None
                 and p - 1 >= plan.max_seq_len else s
                 for s, r, p, e in zip(seeds, rpi, prefix, extend)]
        return (verify, write, seeds, *scalars)


class _ClampFlagSticky(Planner):
    """Bug: once one request's position is clamped to the row's end, every later one is too."""

    def seed_positions(self, rpi, prefix, extend, plan):
        out, clamped = [], False
        for r, p, e in zip(rpi, prefix, extend):
            position = self.seed_position(r, p, e, plan)
            if position is not None:
                clamped = clamped or p - 1 >= plan.max_seq_len
                position = plan.max_seq_len - 1 if clamped else position
            out.append(position)
        return out


class _OutOfTableSticky(Planner):
    """Bug: after one active row outside the table, every later request gets the -1 sentinel."""

    def seed_positions(self, rpi, prefix, extend, plan):
        out, gone = [], False
        for r, p, e in zip(rpi, prefix, extend):
            gone = gone or (self.active(r) and not self.in_table(r, plan))
            out.append(None if gone else self.seed_position(r, p, e, plan))
        return out


class _RowBoundInclusive(Planner):
    """Bug: the table-row check is row <= max_reqs, so row max_reqs is read (past the table)."""

    def in_table(self, row, plan):
        return 0 <= row <= plan.max_reqs


class _PositionClampedToTable(Planner):
    """Bug: prefix - 1 is clamped to the flat table's end, not the row's (reads the next row)."""

    def clamp_position(self, position, plan):
        return position  # read_slots clamps the flat index instead

    def read_slots(self, table, cells, plan):
        cols, last = plan.max_seq_len, plan.max_reqs * plan.max_seq_len - 1
        return _gather(table, [min(row * cols + pos, last) for row, pos in cells])


class _NegativeRowWraps(Planner):
    """Bug: a negative row is read as Python indexes it (a row from the table's end)."""

    def in_table(self, row, plan):
        return -plan.max_reqs <= row < plan.max_reqs

    def read_slots(self, table, cells, plan):
        return super().read_slots(table, [(row % plan.max_reqs, pos) for row, pos in cells], plan)


class _LargeRowClamped(Planner):
    """Bug: a row >= max_reqs is clamped to the table's last row and its seed read there."""

    def in_table(self, row, plan):
        return row >= 0

    def read_slots(self, table, cells, plan):
        return super().read_slots(table, [(min(row, plan.max_reqs - 1), pos)
                                          for row, pos in cells], plan)


class _RowInt32Truncated(Planner):
    """Bug: req_pool_indices is loaded as int32, so a row past 2^31 wraps before the bounds check."""

    def seed_position(self, row, prefix, extend, plan):
        return super().seed_position(wrap(row, 32), prefix, extend, plan)

    def read_slots(self, table, cells, plan):
        return super().read_slots(table, [(wrap(row, 32), pos) for row, pos in cells], plan)


class _SeedOnNegativePrefix(Planner):
    """Bug: the seed condition is prefix != 0, so a negative prefix reads column prefix - 1 < 0."""

    def seed_position(self, row, prefix, extend, plan):
        if prefix >= 0:
            return super().seed_position(row, prefix, extend, plan)
        position = super().seed_position(row, 1, extend, plan)  # every other condition holds
        return None if position is None else prefix - 1


class _OnlyRealSeedsStored(Planner):
    """Bug: stores only the real seeds, counting on a buffer pre-filled with -1 for the others."""

    def place_seeds(self, bs, seeded, seeds):
        out = [None] * bs  # None: never stored
        for i, seed in zip(seeded, seeds):
            out[i] = seed
        return out


seed_column_prefix = launcher(_SeedColumnPrefix)
sentinel_zero = launcher(_SentinelZero)
seed_without_write = launcher(_SeedWithoutWrite)
seed_on_negative_extend = launcher(_SeedOnNegativeExtend)
seed_skipped_past_row = launcher(_SeedSkippedPastRow)
clamp_flag_sticky = launcher(_ClampFlagSticky)
out_of_table_sticky = launcher(_OutOfTableSticky)
row_bound_inclusive = launcher(_RowBoundInclusive)
position_clamped_to_table = launcher(_PositionClampedToTable)
negative_row_wraps = launcher(_NegativeRowWraps)
large_row_clamped = launcher(_LargeRowClamped)
row_int32_truncated = launcher(_RowInt32Truncated)
seed_on_negative_prefix = launcher(_SeedOnNegativePrefix)
only_real_seeds_stored = launcher(_OnlyRealSeedsStored)
