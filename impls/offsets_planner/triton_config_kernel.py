"""The Triton planner's configurable kernel: the one that :func:`impls.offsets_planner.triton_planner.plan_launch`
runs when it is given a configuration (``num_warps``, ``block`` or ``tile``; defaults by block
from :data:`impls.offsets_planner.triton_launch_design.CONFIG`). The planner's default launches
take the designs of :data:`impls.offsets_planner.triton_launch_design.DESIGNS` instead.

One launch of ``ceil(bs / TILE)`` programs of ``TILE`` lanes (spec sections 5 and 6, "this
project" column). When ``TILE < BLOCK`` (``BLOCK``: a power of two >= bs) each program also
re-reads the request values of every lane before its tile (a ``BLOCK``-wide vector) and sums their
lengths for its carry. Each program gathers its lanes' table and LUT entries for the seeds under
the planner's guards (spec section 6), scans its int64 lengths (triton#5897) and stores the
offsets; lane 0 of the last program writes both totals and the three scalars through one-lane
masked vector stores (triton#5048). Arguments: the three request tensors, the table, the LUT (or
its zero stand-in), the six outputs, then the seven int64 scalars of
``impls.offsets_planner.triton_planner._INT_ARGS``, then ``BLOCK``, ``TILE`` and ``HAS_LUT``.

The planner imports this module at its end (as :data:`impls.offsets_planner.triton_planner._kernel`,
read there at call time so that a sweep can replace it); this module imports the planner first,
which chooses the interpreter without CUDA before the kernel is decorated. Import the planner,
not this module.
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner as tp  # first: chooses the interpreter without CUDA

triton, tl = tp.triton, tp.tl

if triton is not None:
    _lengths = tp._lengths

    @triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
    def _offsets_kernel(
        rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
        verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
        bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
        lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
        BLOCK: tl.constexpr, TILE: tl.constexpr, HAS_LUT: tl.constexpr,
    ):
        start = tl.program_id(0) * TILE
        lane = start + tl.arange(0, TILE)
        live = lane < bs
        zero = (lane * 0).to(tl.int64)
        row, prefix, active, verify_len, write_len = _lengths(
            rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        carry_v = tl.sum(zero, axis=0)
        carry_w = tl.sum(zero, axis=0)
        if TILE < BLOCK:  # several programs: each sums the lengths of the lanes before its tile
            every = tl.arange(0, BLOCK)
            _r, _p, _a, v_before, w_before = _lengths(
                rpi_ptr, prefix_ptr, extend_ptr, every, every < start, window)
            carry_v += tl.sum(v_before, axis=0)
            carry_w += tl.sum(w_before, axis=0)
        # Scan int64 lengths only (a boolean cumsum is XOR on some builds: triton#5897).
        verify_incl = tl.cumsum(verify_len, axis=0)
        write_incl = tl.cumsum(write_len, axis=0)
        tl.store(verify_ptr + lane, carry_v + verify_incl - verify_len, mask=live)
        tl.store(write_ptr + lane, carry_w + write_incl - write_len, mask=live)

        # Seed: the table is read only where the read is in bounds (spec section 6).
        has_seed = active & (prefix > 0) & (write_len > 0) & (row >= 0) & (row < zero + max_reqs)
        has_seed = has_seed & (zero + max_seq_len > 0)
        pos = tl.minimum(prefix - 1, zero + (max_seq_len - 1))
        offset = row.to(tl.int64) * stride0 + pos
        slot = tl.load(table_ptr + offset, mask=has_seed, other=0).to(tl.int64)
        if HAS_LUT:
            translate = has_seed & (slot >= 0)
            index = tl.minimum(slot, zero + (lut_len - 1))
            slot = tl.where(translate, tl.load(lut_ptr + index, mask=translate, other=0), slot)
        tl.store(seed_ptr + lane, tl.where(has_seed, slot, zero - 1), mask=live)

        # Totals and scalars: lane 0 of the last program, through masked vector stores
        # (not scalar stores, whose mask an older interpreter ignored: triton#5048).
        first_lane = tl.arange(0, TILE)
        first = (first_lane == 0) & (first_lane * 0 + tl.program_id(0) == tl.num_programs(0) - 1)
        total_v = zero + (carry_v + tl.sum(verify_len, axis=0))
        tl.store(verify_ptr + bs + first_lane, total_v, mask=first)
        tl.store(write_ptr + bs + first_lane, zero + (carry_w + tl.sum(write_len, axis=0)), mask=first)
        tl.store(num_valid_ptr + first_lane, tl.minimum(total_v, zero + capacity).to(tl.int32),
                 mask=first)
        tl.store(enable_ptr + first_lane, tl.where(total_v > capacity, 0, 1).to(tl.int32), mask=first)
        tl.store(reqs_ptr + first_lane, (zero + bs).to(tl.int32), mask=first)
else:
    _offsets_kernel = None
