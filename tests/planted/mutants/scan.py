"""Mutants of the exclusive prefix sums (spec section 5: ``out_verify_offsets_scratch`` and
``out_write_offsets``): each overrides :meth:`Planner.scan` for one of the two scans."""

from __future__ import annotations

from itertools import accumulate

from tests.planted.mutants.base import Planner, launcher, wrap


class _InclusiveWriteScan(Planner):
    """Bug: the write-offsets scan is inclusive (element r holds sum of write_len[0..r])."""

    def plan(self, kwargs, plan, buffers):
        verify, write, *rest = super().plan(kwargs, plan, buffers)
        return (verify, [*write[1:], write[-1]], *rest)  # [bs] still the total


class _InclusiveVerifyScan(Planner):
    """Bug: the verify-offsets scan is inclusive (element r holds sum of verify_len[0..r])."""

    def plan(self, kwargs, plan, buffers):
        verify, *rest = super().plan(kwargs, plan, buffers)
        return ([*verify[1:], verify[-1]], *rest)


class _ScanSkipsFirst(Planner):
    """Bug: both scans start at request 1 (the loop's start is off by one): request 0 never counts."""

    def scan(self, lengths):
        return [0, *accumulate([0, *lengths[1:]])] if lengths else [0]


class _Int32Offsets(Planner):
    """Bug: the scans accumulate in int32 registers, so an offset of 2^31 or more wraps."""

    def scan(self, lengths):
        return [wrap(v, 32) for v in super().scan(lengths)]


class _BlockCarryDropped(Planner):
    """Bug: the scans run per block of 1024 lanes and drop the carry between blocks."""

    def scan(self, lengths):
        out = [0]
        for r, length in enumerate(lengths):
            out.append((0 if r % 1024 == 0 else out[-1]) + length)
        return out


inclusive_write_scan = launcher(_InclusiveWriteScan)
inclusive_verify_scan = launcher(_InclusiveVerifyScan)
scan_skips_first = launcher(_ScanSkipsFirst)
int32_offsets = launcher(_Int32Offsets)
block_carry_dropped = launcher(_BlockCarryDropped)
