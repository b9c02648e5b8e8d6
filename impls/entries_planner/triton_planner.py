"""The Triton entries planner: the shared validator, then one Triton launch.

Semantics: spec sections 5 and 6 ("this project" column), byte for byte those of the pure-Python
planner (:mod:`.python_planner`). Mode (``gpu`` or ``interpreter``) is the offsets Triton planner's
(:data:`impls.offsets_planner.triton_planner.MODE`), fixed when that module is imported: ``TRITON_INTERPRET=1``, or
no CUDA device, runs Triton's interpreter on CPU tensors.

CUDA-graph safe: the grid depends only on shapes (``verify_capacity``), never on a tensor value; the
total (``verify_offsets_scratch[bs]``) and ``verify_enable`` are read by the kernel on the device.
Each lane is one entry index t in [0, verify_capacity): it writes only when ``t < total``,
``verify_enable != 0`` and ``total <= verify_capacity``. Its request is found by halving over the
scratch (``NITER = bs.bit_length()`` steps, as upstream's ``find_req_id``). Every load is masked
by the condition that keeps it in bounds (row in the table, position in the row, slot in the LUT,
row and column in the pool), which is also how the project rules of spec section 6 are met.
"""

from __future__ import annotations

import torch

from impls.entries_planner.contract import NO_SLOT
from impls.entries_planner.validate import validate_entries_launch
from impls.offsets_planner.triton_planner import _UNAVAILABLE, MODE

BLOCK = 128
"""Entries per program per step of the grid-stride loop."""
MAX_PROGRAMS = 1024
"""Most programs a launch starts (GPU); the interpreter starts one (each program is slow there)."""

if MODE is not None:
    import triton
    import triton.language as tl

    @triton.jit
    def _slot(table_ptr, lut_ptr, row, position, ok, max_reqs, max_seq_len, stride0, lut_len,
              HAS_LUT: tl.constexpr):
        # Rule entry-outside-table: no read (and -1) outside [0, max_reqs) x [0, max_seq_len).
        inside = ok & (row >= 0) & (row < max_reqs) & (position >= 0) & (position < max_seq_len)
        raw = tl.load(table_ptr + row * stride0 + position, mask=inside, other=-1).to(tl.int64)
        if HAS_LUT:
            # Rules lut-clamp (index min(slot, lut_len - 1)) and lut-empty (-1); negatives pass.
            translate = inside & (raw >= 0) & (raw * 0 + lut_len > 0)
            index = tl.minimum(raw, lut_len - 1)
            looked = tl.load(lut_ptr + index, mask=translate, other=-1)
            raw = tl.where(raw >= 0, looked, raw)
        return raw

    @triton.jit
    def _entries_kernel(
        rpi_ptr, prefix_ptr, table_ptr, lut_ptr, scratch_ptr, enable_ptr, pool_ptr, valid_ptr,
        slot_out, token_out, position_out, prev_out,
        bs, capacity, max_reqs, max_seq_len, stride0, lut_len, pool_rows, pool_cols,
        pool_stride0, offset, window,
        BLOCK: tl.constexpr, NITER: tl.constexpr, HAS_LUT: tl.constexpr, HAS_POOL: tl.constexpr,
    ):
        total = tl.load(scratch_ptr + bs)
        enable = tl.load(enable_ptr)
        step = tl.num_programs(0) * BLOCK
        for base in range(tl.program_id(0) * BLOCK, capacity, step):
            t = (base + tl.arange(0, BLOCK)).to(tl.int64)
            # Vector-only comparisons: a scalar & vector mask is int32 in the interpreter.
            zero = t * 0
            ok = (t < total) & (t < capacity) & (zero + enable != 0) & (zero + total <= capacity)
            lo = zero
            hi = lo + bs
            for _ in tl.static_range(NITER):
                halving = hi - lo > 1
                mid = (lo + hi) // 2
                below = tl.load(scratch_ptr + mid, mask=ok & halving, other=0) <= t
                lo = tl.where(halving & below, mid, lo)
                hi = tl.where(halving & (~below), mid, hi)
            start = tl.load(scratch_ptr + lo, mask=ok, other=0)
            row = tl.load(rpi_ptr + lo, mask=ok, other=0)
            prefix = tl.load(prefix_ptr + lo, mask=ok, other=0)
            first = tl.where(prefix * 0 + window > 0, tl.maximum(prefix - window, 0), 0)
            position = first + (t - start)
            slot = _slot(table_ptr, lut_ptr, row, position, ok, max_reqs, max_seq_len, stride0,
                         lut_len, HAS_LUT)
            prev = _slot(table_ptr, lut_ptr, row, position - 1, ok & (position > 0), max_reqs,
                         max_seq_len, stride0, lut_len, HAS_LUT)
            prev = tl.where(position > 0, prev, -1)
            token = t * 0 - 1
            if HAS_POOL:
                # Rule pool-outside: -1 outside the pool's rows / columns or the valid length.
                valid = tl.load(valid_ptr + lo, mask=ok, other=0)
                at = position + offset
                gather = (ok & (at >= 0) & (at < valid) & (at < pool_cols) & (row >= 0)
                          & (row < pool_rows))
                token = tl.load(pool_ptr + row * pool_stride0 + at, mask=gather,
                                other=-1).to(tl.int64)
            tl.store(slot_out + t, slot, mask=ok)
            tl.store(token_out + t, token, mask=ok)
            tl.store(position_out + t, position, mask=ok)
            tl.store(prev_out + t, prev, mask=ok)


def probe() -> tuple[bool, str | None]:
    """(available, mode or the reason it is not)."""
    return (True, MODE) if MODE is not None else (False, _UNAVAILABLE)


def launch(
    *,
    req_pool_indices: torch.Tensor,
    prefix_lens: torch.Tensor,
    req_to_token: torch.Tensor,
    full_to_swa_index_mapping: torch.Tensor | None,
    verify_offsets_scratch: torch.Tensor,
    verify_enable: torch.Tensor,
    req_to_verify_expected_tokens: torch.Tensor | None,
    req_to_verify_expected_tokens_valid_lens: torch.Tensor | None,
    out_verify_slot_indices: torch.Tensor,
    out_verify_expected_tokens: torch.Tensor,
    out_verify_expected_positions: torch.Tensor,
    out_verify_prev_slot_indices: torch.Tensor,
    kv_token_id_vs_position_offset: int,
    swa_window_size: int,
) -> None:
    """Fill entries ``[0, total)`` of the four outputs on the device (spec section 5).

    Raises:
        PlanError: spec section 4, through the shared validator.
        RuntimeError: Triton is unavailable here (:func:`probe` says why).
    """
    plan = validate_entries_launch(**dict(locals()))
    if MODE is None:
        raise RuntimeError(f"triton entries planner unavailable: {_UNAVAILABLE}")
    if plan.bs == 0 or plan.verify_capacity == 0:
        return  # shapes alone say nothing can be written (total > 0 would exceed capacity 0)
    lut = full_to_swa_index_mapping if plan.has_lut else verify_offsets_scratch
    pool = req_to_verify_expected_tokens if plan.has_pool else req_to_token
    valid = req_to_verify_expected_tokens_valid_lens if plan.has_pool else prefix_lens
    programs = 1 if MODE == "interpreter" else min(MAX_PROGRAMS, -(-plan.verify_capacity // BLOCK))
    _entries_kernel[(programs,)](
        req_pool_indices, prefix_lens, req_to_token, lut, verify_offsets_scratch, verify_enable,
        pool, valid, out_verify_slot_indices, out_verify_expected_tokens,
        out_verify_expected_positions, out_verify_prev_slot_indices,
        plan.bs, plan.verify_capacity, plan.max_reqs, plan.max_seq_len, plan.max_seq_len,
        plan.lut_len, plan.pool_rows, plan.pool_cols, plan.pool_cols,
        plan.kv_token_id_vs_position_offset, plan.swa_window_size,
        BLOCK=BLOCK, NITER=max(1, plan.bs.bit_length()), HAS_LUT=plan.has_lut,
        HAS_POOL=plan.has_pool)


assert NO_SLOT == -1  # the kernel spells the no-slot value as -1
