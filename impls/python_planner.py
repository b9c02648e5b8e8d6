"""The pure-Python planner: the readable statement of spec sections 5 and 6.

Plain Python integers throughout: tensors are read with ``tolist()`` (the table and the LUT each in
one gather, only at the elements a seed needs), every value is computed with Python ints, and the
defined regions are written back with one ``copy_`` each. No torch arithmetic, so it shares no failure mode with the
kernels it judges. Slow by design (a device-to-host copy per input); never use it in serving.

Arithmetic is exact and then wrapped to the output's width (int64 offsets and seeds, int32 scalars),
as a GPU kernel's two's-complement stores do. The verify total is compared with the capacity after
its int64 wrap, as the kernels' int64 sums do, so that all planners agree even where a sum overflows
int64 (outside the contract: spec section 5 does not define it).
"""

from __future__ import annotations

import torch

from impls.constants import NO_SEED
from impls.contract import SWA_WINDOW_NAME, VERIFY_CAPACITY_NAME
from impls.validate import LaunchPlan, validate_launch
from impls.validate_cache import BufferSet

MODE = "cpu"
_INT64_MAX = (1 << 63) - 1


def _wrap(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def seed_positions(rpi: list[int], prefix: list[int], extend: list[int], *, max_reqs: int,
                   max_seq_len: int) -> list[int | None]:
    """Per request, the table column its seed is read from, or None when it reads none (spec
    sections 5 and 6): an active row inside the table with a prefix and a write reads column
    ``min(prefix - 1, max_seq_len - 1)`` (clamped, as upstream's reference). A row outside the
    table, or a table with no columns, is never read."""
    last = max_seq_len - 1
    return [(p - 1 if p <= last else last)
            if row != 0 and p > 0 and e > 0 and 0 <= row < max_reqs and last >= 0 else None
            for row, p, e in zip(rpi, prefix, extend)]


def lut_index(slot: int, lut_len: int) -> int | None:
    """The LUT entry a seed slot is translated through, or None (no LUT, or a negative slot, which
    passes through untranslated); clamped to ``lut_len - 1`` as upstream's kernel."""
    return min(slot, lut_len - 1) if lut_len > 0 and slot >= 0 else None


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
    positions: list[int | None] | None = None,
) -> tuple[list[int], list[int], list[int], int, int, int]:
    """Spec sections 5 and 6 on plain ints.

    Args:
        rpi, prefix, extend: per-request values, length bs.
        read_slot: ``(row, pos) -> int``, the table entry; only called with 0 <= row < max_reqs and
            0 <= pos < max_seq_len, once per request that has a seed, in request order.
        read_lut: ``index -> int``, only called with 0 <= index < lut_len, once per seed it
            translates, in request order; unused when lut_len == 0.
        positions: :func:`seed_positions` of these requests, if the caller has them already.

    Returns:
        (verify offsets [bs+1], write offsets [bs+1], seeds [bs], verify_num_valid, verify_enable,
        write_num_valid_reqs), each wrapped to its output dtype.
    """
    window = swa_window_size
    if positions is None:
        positions = seed_positions(rpi, prefix, extend, max_reqs=max_reqs, max_seq_len=max_seq_len)
    verify_offsets, write_offsets, seeds = [0], [0], []
    add_verify, add_write, add_seed = verify_offsets.append, write_offsets.append, seeds.append
    total_v = total_w = 0
    for row, p, e, pos in zip(rpi, prefix, extend, positions):
        if row != 0:  # an active row (0 is the padding row, spec section 2)
            window_start = (p - window if p > window else 0) if window > 0 else 0
            total_v += p - window_start if p > window_start else 0
            total_w += e if e > 0 else 0
        add_verify(total_v)
        add_write(total_w)
        seed = NO_SEED
        if pos is not None:
            seed = read_slot(row, pos)
            index = lut_index(seed, lut_len)
            if index is not None:
                seed = read_lut(index)
        add_seed(seed)
    total_verify = _wrap(verify_offsets[-1], 64)
    # Lengths are >= 0, so the offsets rise: when the last fits int64 every one does, and the
    # per-element wrap is the identity (seeds are table or LUT entries, in range by their dtype).
    in_range = verify_offsets[-1] <= _INT64_MAX and write_offsets[-1] <= _INT64_MAX
    in_range = in_range and all(-_INT64_MAX - 1 <= v <= _INT64_MAX for v in (max(seeds, default=0),
                                                                         min(seeds, default=0)))
    if in_range:
        return (verify_offsets, write_offsets, seeds,
                _wrap(min(total_verify, verify_capacity), 32),
                0 if total_verify > verify_capacity else 1, len(rpi))
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
    launch_validated(validate_arguments(locals()), req_pool_indices, prefix_lens, extend_seq_lens)


def validate_arguments(launcher_kwargs: dict) -> tuple[LaunchPlan, BufferSet]:
    """The validate-only entry: the shared validator, unmemoised (spec section 4).

    Returns:
        (plan, its buffer set) for :func:`launch_validated`.

    Raises:
        PlanError: the first failing check of spec section 4.
    """
    plan = validate_launch(**launcher_kwargs)
    return plan, BufferSet(launcher_kwargs, plan)


def launch_validated(validated: tuple[LaunchPlan, BufferSet], req_pool_indices: torch.Tensor,
                     prefix_lens: torch.Tensor, extend_seq_lens: torch.Tensor) -> None:
    """Plan with plain Python ints after :func:`validate_arguments` passed for these request
    tensors. The table and the LUT are each read in one gather, at exactly the entries a seed
    needs (:func:`seed_positions`, :func:`lut_index`), then looked up as Python ints."""
    plan, buffers = validated
    rpi, prefix, extend = req_pool_indices.tolist(), prefix_lens.tolist(), extend_seq_lens.tolist()
    table, lut = buffers.tensors[0], plan.lut_tensor
    positions = seed_positions(rpi, prefix, extend, max_reqs=plan.max_reqs,
                               max_seq_len=plan.max_seq_len)
    cols, lut_len = plan.max_seq_len, plan.lut_len
    # plan_values reads the table, then the LUT, once per seed in request order: hand it the
    # gathered values in that order.
    slots = _gather(table, [row * cols + pos  # logical row-major order
                            for row, pos in zip(rpi, positions) if pos is not None])
    indices = [i for i in (lut_index(v, lut_len) for v in slots) if i is not None]
    next_slot, next_entry = iter(slots).__next__, iter(_gather(lut, indices)).__next__
    verify, write, seeds, num_valid, enable, reqs = plan_values(
        rpi, prefix, extend, lambda row, pos: next_slot(), lambda index: next_entry(),
        max_reqs=plan.max_reqs,
        max_seq_len=plan.max_seq_len,
        lut_len=plan.lut_len,
        positions=positions,
        **{SWA_WINDOW_NAME: plan.swa_window_size, VERIFY_CAPACITY_NAME: plan.verify_capacity},
    )
    for out, values in zip(buffers.tensors[2:], (verify, write, seeds, [num_valid], [enable], [reqs])):
        out[: len(values)].copy_(torch.tensor(values, dtype=out.dtype))


def _gather(tensor: torch.Tensor, flat_indices: list[int]) -> list[int]:
    """``tensor``'s elements at these row-major indices (a contiguous tensor), as Python ints."""
    if not flat_indices:
        return []
    index = torch.tensor(flat_indices, dtype=torch.int64, device=tensor.device)
    # index_select on the flat view: torch.take and advanced indexing take ~400x longer here.
    return tensor.reshape(-1).index_select(0, index).tolist()
