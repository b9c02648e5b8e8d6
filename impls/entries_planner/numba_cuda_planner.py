"""The Numba CUDA entries planner: the shared validator, then one ``numba.cuda.jit`` kernel.

Semantics: spec sections 5 and 6 ("this project" column), byte for byte those of the pure-Python
planner (:mod:`.python_planner`). Mode is the offsets Numba planner's
(:data:`impls.offsets_planner.numba_cuda_planner.MODE`), fixed when that module first imports ``numba.cuda``:
``simulator`` (``NUMBA_ENABLE_CUDASIM=1``, set there when torch sees no CUDA device; CPU tensors)
or ``gpu`` (CUDA tensors, torch's current stream, so it can be captured in a torch CUDA graph;
launched by one ``cuLaunchKernel`` with Numba-packed parameters, :mod:`.numba_driver_launch`,
Numba's own launch where that does not apply).

CUDA-graph safe: the grid depends only on ``verify_capacity`` (a shape). The kernel reads the total
(``verify_offsets_scratch[bs]``) and ``verify_enable`` on the device and returns without a write
when ``total <= 0``, ``enable == 0`` or ``total > verify_capacity``; each thread then strides over
entry indices t < total, finds its request by halving over the scratch (as upstream's
``find_req_id``) and reads the table, LUT and pool only where the read is in bounds.
"""

from __future__ import annotations

import torch

from impls.entries_planner import numba_driver_launch as driver
from impls.entries_planner.contract import NO_SLOT
from impls.entries_planner.validate import validate_entries_launch
from impls.offsets_planner.numba_cuda_planner import _IMPORT_ERROR, MODE, cuda

SIM_THREADS = 8
"""Simulator: one block of 8 threads (each a Python thread there)."""
GPU_THREADS, GPU_MAX_BLOCKS = 256, 1024
"""GPU: blocks of 256 threads, at most 1024 blocks (a grid-stride loop covers the rest)."""

_KERNEL = None
_DIRECT = None
"""The kernel compiled for the driver launch's signature (:mod:`.numba_driver_launch`), GPU only."""


def _build(signature=None):
    @cuda.jit(device=True)
    def slot_at(table, lut, lut_len, has_lut, row, position):
        # Rule entry-outside-table: no read, -1, outside the table.
        if row < 0 or row >= table.shape[0] or position < 0 or position >= table.shape[1]:
            return NO_SLOT
        raw = table[row, position]
        if has_lut == 0 or raw < 0:
            return raw
        if lut_len == 0:
            return NO_SLOT  # rule lut-empty
        return lut[min(raw, lut_len - 1)]  # rule lut-clamp

    def kernel(rpi, prefix, table, lut, scratch, enable, pool, valid, slot_out, token_out,
               position_out, prev_out, bs, capacity, lut_len, has_lut, has_pool, offset, window):
        total = scratch[bs]
        if total <= 0 or enable[0] == 0 or total > capacity:
            return
        t = cuda.grid(1)
        stride = cuda.gridsize(1)
        while t < total:
            lo = 0
            hi = bs
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if scratch[mid] <= t:
                    lo = mid
                else:
                    hi = mid
            row = rpi[lo]
            first = max(prefix[lo] - window, 0) if window > 0 else 0
            position = first + (t - scratch[lo])
            token = NO_SLOT
            if has_pool != 0:
                at = position + offset
                # Rule pool-outside: -1 outside the pool or past the valid length.
                if (0 <= at and at < valid[lo] and at < pool.shape[1] and 0 <= row
                        and row < pool.shape[0]):
                    token = pool[row, at]
            slot_out[t] = slot_at(table, lut, lut_len, has_lut, row, position)
            token_out[t] = token
            position_out[t] = position
            prev_out[t] = (slot_at(table, lut, lut_len, has_lut, row, position - 1)
                           if position > 0 else NO_SLOT)
            t += stride

    return cuda.jit(kernel) if signature is None else cuda.jit(signature)(kernel)


def _direct_kernel():
    """The kernel for the driver launch, compiled once; None when it cannot be (the reason is
    :data:`.numba_driver_launch.FALLBACK_REASON`)."""
    global _DIRECT
    if _DIRECT is None and driver.FALLBACK_REASON is None:
        try:
            _DIRECT = _build(driver.signature())
        except Exception as exc:  # noqa: BLE001 - Numba's ordinary launch still works
            driver.FALLBACK_REASON = f"compile: {type(exc).__name__}: {exc}"
    return _DIRECT


def probe() -> tuple[bool, str | None]:
    """(available, mode or the reason it is not)."""
    return (True, MODE) if MODE in ("gpu", "simulator") else (False, _IMPORT_ERROR)


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
        RuntimeError: numba-cuda is unavailable here.
        TypeError: CPU tensors are needed in simulator mode.
    """
    global _KERNEL
    plan = validate_entries_launch(**dict(locals()))
    if MODE not in ("gpu", "simulator"):
        raise RuntimeError(f"numba-cuda entries planner unavailable: {_IMPORT_ERROR}")
    if plan.bs == 0 or plan.verify_capacity == 0:
        return  # shapes alone say nothing can be written
    if _KERNEL is None:
        _KERNEL = _build()
    inputs = (req_pool_indices, prefix_lens, req_to_token,
              full_to_swa_index_mapping if plan.has_lut else verify_offsets_scratch,
              verify_offsets_scratch, verify_enable,
              req_to_verify_expected_tokens if plan.has_pool else req_to_token,
              req_to_verify_expected_tokens_valid_lens if plan.has_pool else prefix_lens)
    outputs = (out_verify_slot_indices, out_verify_expected_tokens,
               out_verify_expected_positions, out_verify_prev_slot_indices)
    scalars = (plan.bs, plan.verify_capacity, plan.lut_len, int(plan.has_lut),
               int(plan.has_pool), plan.kv_token_id_vs_position_offset, plan.swa_window_size)
    if MODE == "simulator":
        if out_verify_slot_indices.device.type != "cpu":
            raise TypeError("numba-cuda entries planner in simulator mode takes CPU tensors, got "
                            f"{out_verify_slot_indices.device}")
        _KERNEL[1, SIM_THREADS](*(cuda.In(t.numpy()) for t in inputs),
                                *(t.numpy() for t in outputs), *scalars)
        return
    blocks = min(GPU_MAX_BLOCKS, -(-plan.verify_capacity // GPU_THREADS))
    device = out_verify_slot_indices.device
    direct = _direct_kernel()
    if direct is not None and driver.launch(direct, (*inputs, *outputs), scalars, blocks,
                                            GPU_THREADS, device):
        return
    with torch.cuda.device(device):
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        views = [cuda.as_cuda_array(t, sync=False) for t in (*inputs, *outputs)]
        _KERNEL[blocks, GPU_THREADS, stream](*views, *scalars)
