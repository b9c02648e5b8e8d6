"""The pure-Python planner: the readable statement of spec sections 5 and 6.

Plain Python integers throughout: tensors are read with ``tolist()`` (the table and the LUT only at
the elements a seed needs), every value is computed with Python ints, and the defined regions are
written back with one ``copy_`` each. No torch arithmetic, so it shares no failure mode with the
kernels it judges. Slow by design (a device-to-host copy per input); never use it in serving.

Arithmetic is exact and then wrapped to the output's width (int64 offsets and seeds, int32 scalars),
as a GPU kernel's two's-complement stores do. The verify total is compared with the capacity after
its int64 wrap, as the kernels' int64 sums do, so that all planners agree even where a sum overflows
int64 (outside the contract: spec section 5 does not define it).
"""

from __future__ import annotations

import torch

from impls.constants import NO_SEED
from impls.validate import validate_launch

MODE = "cpu"


def _wrap(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def plan_values(
    rpi: list[int],
    prefix: list[int],
    extend: list[int],
    read_slot,
    read_lut,
    *,
    max_reqs: int,
    max_seq_len: int,
    lut_len: int,
    swa_window_size: int,
    verify_capacity: int,
) -> tuple[list[int], list[int], list[int], int, int, int]:
    """Spec sections 5 and 6 on plain ints.

    Args:
        rpi, prefix, extend: per-request values, length bs.
        read_slot: ``(row, pos) -> int``, the table entry; only called with 0 <= row < max_reqs and
            0 <= pos < max_seq_len.
        read_lut: ``index -> int``, only called with 0 <= index < lut_len; unused when lut_len == 0.

    Returns:
        (verify offsets [bs+1], write offsets [bs+1], seeds [bs], verify_num_valid, verify_enable,
        write_num_valid_reqs), each wrapped to its output dtype.
    """
    window = swa_window_size
    verify_offsets, write_offsets, seeds = [0], [0], []
    for row, p, e in zip(rpi, prefix, extend):
        active = row != 0
        window_start = max(p - window, 0) if window > 0 else 0
        verify_len = max(p - window_start, 0) if active else 0
        write_len = max(e, 0) if active else 0
        seed = NO_SEED
        # Section 6: a row outside the table, or a table with no columns, is never read.
        if active and p > 0 and write_len > 0 and 0 <= row < max_reqs and max_seq_len > 0:
            slot = read_slot(row, min(p - 1, max_seq_len - 1))  # clamp, as upstream's reference
            if lut_len > 0 and slot >= 0:  # a negative slot passes through untranslated
                slot = read_lut(min(slot, lut_len - 1))  # clamp, as upstream's kernel
            seed = slot
        verify_offsets.append(verify_offsets[-1] + verify_len)
        write_offsets.append(write_offsets[-1] + write_len)
        seeds.append(seed)
    total_verify = _wrap(verify_offsets[-1], 64)
    return (
        [_wrap(v, 64) for v in verify_offsets],
        [_wrap(v, 64) for v in write_offsets],
        [_wrap(v, 64) for v in seeds],
        _wrap(min(total_verify, verify_capacity), 32),
        0 if total_verify > verify_capacity else 1,
        len(rpi),
    )


def launch(
    *,
    req_pool_indices: torch.Tensor,
    prefix_lens: torch.Tensor,
    extend_seq_lens: torch.Tensor,
    req_to_token: torch.Tensor,
    full_to_swa_index_mapping: torch.Tensor | None,
    out_verify_offsets_scratch: torch.Tensor,
    out_write_offsets: torch.Tensor,
    out_write_seed_slot_indices: torch.Tensor,
    out_verify_num_valid: torch.Tensor,
    out_verify_enable: torch.Tensor,
    out_write_num_valid_reqs: torch.Tensor,
    swa_window_size: int,
    verify_capacity: int,
) -> None:
    """Plan offsets with plain Python integers; the launcher of spec section 3.

    Writes ``out_verify_offsets_scratch[:bs+1]``, ``out_write_offsets[:bs+1]``,
    ``out_write_seed_slot_indices[:bs]`` and the three scalars, nothing else.

    Raises:
        PlanError: (a ``ValueError``) any check of spec section 4, before anything is read.
    """
    plan = validate_launch(
        req_pool_indices=req_pool_indices,
        prefix_lens=prefix_lens,
        extend_seq_lens=extend_seq_lens,
        req_to_token=req_to_token,
        full_to_swa_index_mapping=full_to_swa_index_mapping,
        out_verify_offsets_scratch=out_verify_offsets_scratch,
        out_write_offsets=out_write_offsets,
        out_write_seed_slot_indices=out_write_seed_slot_indices,
        out_verify_num_valid=out_verify_num_valid,
        out_verify_enable=out_verify_enable,
        out_write_num_valid_reqs=out_write_num_valid_reqs,
        swa_window_size=swa_window_size,
        verify_capacity=verify_capacity,
    )
    bs = plan.bs
    lut = plan.lut_tensor
    verify, write, seeds, num_valid, enable, reqs = plan_values(
        req_pool_indices.tolist(),
        prefix_lens.tolist(),
        extend_seq_lens.tolist(),
        lambda row, pos: int(req_to_token[row, pos].item()),
        lambda index: int(lut[index].item()),
        max_reqs=plan.max_reqs,
        max_seq_len=plan.max_seq_len,
        lut_len=plan.lut_len,
        swa_window_size=plan.swa_window_size,
        verify_capacity=plan.verify_capacity,
    )

    def store(out: torch.Tensor, values: list[int]) -> None:
        out[: len(values)].copy_(torch.tensor(values, dtype=out.dtype))

    store(out_verify_offsets_scratch, verify)
    store(out_write_offsets, write)
    store(out_write_seed_slot_indices, seeds)
    store(out_verify_num_valid, [num_valid])
    store(out_verify_enable, [enable])
    store(out_write_num_valid_reqs, [reqs])
