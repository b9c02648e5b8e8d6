"""Mutants of the per-request lengths (spec section 5: ``active``, ``window_start``,
``verify_len``, ``write_len``): each overrides one of :meth:`Planner.active`,
:meth:`Planner.verify_len` or :meth:`Planner.write_len`."""

from __future__ import annotations

from dataclasses import replace

from tests.planted.mutants.base import Planner, launcher, wrap


class _PaddingRowLive(Planner):
    """Bug: a padding row (req_pool_indices 0) is treated as live: verified, written and seeded."""

    def active(self, row):
        return True  # the padding marker is never tested


class _PaddingRowVerified(Planner):
    """Bug: a padding row counts its prefix in the verify scan (the write scan skips it)."""

    def verify_len(self, row, prefix, window):
        return super().verify_len(1 if row == 0 else row, prefix, window)


class _PaddingRowWritten(Planner):
    """Bug: a padding row counts its extend in the write scan (the verify scan skips it)."""

    def write_len(self, row, extend):
        return max(extend, 0)


class _NegativeExtendUnclamped(Planner):
    """Bug: write_len is extend_seq_lens itself, a negative extend not clamped to 0."""

    def write_len(self, row, extend):
        return extend if self.active(row) else 0


class _NegativePrefixUnclamped(Planner):
    """Bug: verify_len is prefix - window_start without max(., 0): a negative prefix subtracts."""

    def verify_len(self, row, prefix, window):
        if not self.active(row):
            return 0
        return prefix - (max(prefix - window, 0) if window > 0 else 0)


class _WindowStartUnclamped(Planner):
    """Bug: window_start is prefix - W without max(., 0), so a prefix shorter than W verifies W."""

    def verify_len(self, row, prefix, window):
        if not self.active(row):
            return 0
        start = prefix - window if window > 0 else 0
        return max(prefix - start, 0)


class _NegativeWindowIsWindow(Planner):
    """Bug: a negative swa_window_size is taken as a window (W != 0 instead of W > 0)."""

    def verify_len(self, row, prefix, window):
        if not self.active(row):
            return 0
        start = max(prefix - window, 0) if window != 0 else 0
        return max(prefix - start, 0)


class _WindowOffByOne(Planner):
    """Bug: window_start is prefix - W + 1, so a window verifies W - 1 tokens."""

    def verify_len(self, row, prefix, window):
        if not self.active(row):
            return 0
        start = max(prefix - window + 1, 0) if window > 0 else 0
        return max(prefix - start, 0)


class _WindowStartInt64(Planner):
    """Bug: prefix - W and the verify length are computed in int64, so they wrap (spec section 6)."""

    def verify_len(self, row, prefix, window):
        if not self.active(row):
            return 0
        start = max(wrap(prefix - window, 64), 0) if window > 0 else 0
        return max(wrap(prefix - start, 64), 0)


class _NegativeRowIsPadding(Planner):
    """Bug: the padding test is row <= 0, so an active negative row verifies and writes nothing."""

    def active(self, row):
        return row > 0


class _DecodeFastPathNoWindow(Planner):
    """Bug: a batch of one request takes a fast path that ignores the window (verifies the prefix)."""

    def plan(self, kwargs, plan, buffers):
        if plan.bs == 1:
            plan = replace(plan, swa_window_size=0)
        return super().plan(kwargs, plan, buffers)


padding_row_live = launcher(_PaddingRowLive)
padding_row_verified = launcher(_PaddingRowVerified)
padding_row_written = launcher(_PaddingRowWritten)
negative_extend_unclamped = launcher(_NegativeExtendUnclamped)
negative_prefix_unclamped = launcher(_NegativePrefixUnclamped)
window_start_unclamped = launcher(_WindowStartUnclamped)
negative_window_is_window = launcher(_NegativeWindowIsWindow)
window_off_by_one = launcher(_WindowOffByOne)
window_start_int64 = launcher(_WindowStartInt64)
negative_row_is_padding = launcher(_NegativeRowIsPadding)
decode_fast_path_no_window = launcher(_DecodeFastPathNoWindow)
