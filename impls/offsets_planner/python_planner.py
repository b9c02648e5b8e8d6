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

from array import array
from itertools import accumulate

import torch

from impls.offsets_planner.buffer_set import BufferSet
from impls.offsets_planner.constants import NO_SEED
from impls.offsets_planner.validate import LaunchPlan, validate_launch

MODE = "cpu"
_INT64_MAX = (1 << 63) - 1
_TYPECODES = {torch.int64: "q", torch.int32: "i"}  # array typecodes of the output dtypes


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
    if last < 0:
        return [None] * len(rpi)
    # 0 < row < max_reqs: an active row (0 is the padding row) inside the table
    return [(p - 1 if p <= last else last) if 0 < row < max_reqs and p > 0 and e > 0 else None
            for row, p, e in zip(rpi, prefix, extend)]


def lut_index(slot: int, lut_len: int) -> int | None:
    """The LUT entry a seed slot is translated through, or None (no LUT, or a negative slot, which
    passes through untranslated); clamped to ``lut_len - 1`` as upstream's kernel."""
    return min(slot, lut_len - 1) if lut_len > 0 and slot >= 0 else None


def request_offsets(rpi: list[int], prefix: list[int], extend: list[int],
                    window: int) -> tuple[list[int], list[int]]:
    """Verify and write offsets [bs+1] (spec section 5), exact (not yet wrapped): exclusive prefix
    sums of the per-request lengths. An active row (``row != 0``; 0 is the padding row, spec section
    2) verifies ``prefix - max(prefix - W, 0)`` tokens when W > 0, else ``prefix`` (never below 0),
    and writes ``max(extend, 0)``; a padding row adds nothing. ``window`` is W,
    ``swa_window_size``."""
    if window > 0:  # prefix - max(prefix - W, 0) == min(prefix, W)
        verify = [(p if p < window else window) if row != 0 and p > 0 else 0
                  for row, p in zip(rpi, prefix)]
    else:
        verify = [p if row != 0 and p > 0 else 0 for row, p in zip(rpi, prefix)]
    write = [e if row != 0 and e > 0 else 0 for row, e in zip(rpi, extend)]
    return [0, *accumulate(verify)], [0, *accumulate(write)]


def finish(verify_offsets: list[int], write_offsets: list[int], seeds: list[int],
           capacity: int) -> tuple[list[int], list[int], list[int], int, int, int]:
    """The six results of :func:`plan_values` from exact offsets [bs+1] and seeds [bs]: each
    wrapped to its output's width, and the three scalars (spec section 5)."""
    total_verify = _wrap(verify_offsets[-1], 64)
    scalars = (_wrap(min(total_verify, capacity), 32),
               0 if total_verify > capacity else 1, len(seeds))
    # Lengths are >= 0, so the offsets rise: when the last fits int64 every one does, and the
    # per-element wrap is the identity (seeds are table or LUT entries, in range by their dtype).
    if (verify_offsets[-1] <= _INT64_MAX and write_offsets[-1] <= _INT64_MAX
            and -_INT64_MAX - 1 <= min(seeds, default=0) and max(seeds, default=0) <= _INT64_MAX):
        return (verify_offsets, write_offsets, seeds, *scalars)
    return ([_wrap(v, 64) for v in verify_offsets], [_wrap(v, 64) for v in write_offsets],
            [_wrap(v, 64) for v in seeds], *scalars)


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
            translates, in request order (after every ``read_slot``); unused when lut_len == 0.
        positions: :func:`seed_positions` of these requests, if the caller has them already.

    Returns:
        (verify offsets [bs+1], write offsets [bs+1], seeds [bs], verify_num_valid, verify_enable,
        write_num_valid_reqs), each wrapped to its output dtype.
    """
    if positions is None:
        positions = seed_positions(rpi, prefix, extend, max_reqs=max_reqs, max_seq_len=max_seq_len)
    verify_offsets, write_offsets = request_offsets(rpi, prefix, extend, swa_window_size)
    seeded = [i for i, pos in enumerate(positions) if pos is not None]
    slots = [read_slot(rpi[i], positions[i]) for i in seeded]
    seeds = place_seeds(len(rpi), seeded, slots, lut_len,
                        lambda indices: [read_lut(index) for index in indices])
    return finish(verify_offsets, write_offsets, seeds, verify_capacity)


def place_seeds(bs: int, seeded: list[int], slots: list[int], lut_len: int,
                read_lut_entries) -> list[int]:
    """Seeds [bs] (spec section 6): ``NO_SEED`` except at the requests ``seeded`` (ascending),
    whose table entries are ``slots``; each non-negative slot is translated through the LUT at
    :func:`lut_index` when ``lut_len > 0``. ``read_lut_entries(indices) -> entries`` reads the LUT
    at a list of indices (all in [0, lut_len)), once, in request order."""
    if lut_len > 0:
        last = lut_len - 1
        translated = [k for k, slot in enumerate(slots) if slot >= 0]
        entries = read_lut_entries([slots[k] if slots[k] < last else last for k in translated])
        slots = list(slots)
        for k, entry in zip(translated, entries):
            slots[k] = entry
    seeds = [NO_SEED] * bs
    for i, slot in zip(seeded, slots):
        seeds[i] = slot
    return seeds


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
    positions = seed_positions(rpi, prefix, extend, max_reqs=plan.max_reqs,
                               max_seq_len=plan.max_seq_len)
    cols = plan.max_seq_len
    seeded = [i for i, pos in enumerate(positions) if pos is not None]
    slots = _gather(buffers.tensors[0], [rpi[i] * cols + positions[i] for i in seeded])  # row-major
    seeds = place_seeds(len(rpi), seeded, slots, plan.lut_len,
                        lambda indices: _gather(plan.lut_tensor, indices))
    verify_offsets, write_offsets = request_offsets(rpi, prefix, extend, plan.swa_window_size)
    results = finish(verify_offsets, write_offsets, seeds, plan.verify_capacity)
    for out, values in zip(buffers.tensors[2:], (*results[:3], results[3:4], results[4:5],
                                                 results[5:])):
        _write(out, values)


def _write(out: torch.Tensor, values: list[int]) -> None:
    """``out[:len(values)] = values``: one copy, from a host buffer built by ``array`` (a list of
    4097 ints converts several times faster than through ``torch.tensor``)."""
    if values:
        host = torch.frombuffer(array(_TYPECODES[out.dtype], values), dtype=out.dtype)
        out[: len(values)].copy_(host)


def _gather(tensor: torch.Tensor, flat_indices: list[int]) -> list[int]:
    """``tensor``'s elements at these row-major indices (a contiguous tensor), as Python ints."""
    if not flat_indices:
        return []
    index = torch.frombuffer(array("q", flat_indices), dtype=torch.int64).to(tensor.device)
    # index_select on the flat view: torch.take and advanced indexing take ~400x longer here.
    return tensor.reshape(-1).index_select(0, index).tolist()
