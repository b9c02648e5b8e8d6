"""Planted planners that mimic each divergence upstream's launcher is documented to have (spec
sections 4 item 0, 5 and 6), so CI exercises pins, profiles and manifests without sglang.

Each wraps the pure-Python planner and changes one thing:

* :func:`no_wrapper_check`: no check of section 4 item 0 (upstream checks it in its wrapper);
* :func:`zero_d_index_error`: IndexError on a 0-d tensor, as reading ``shape[0]`` first does;
* :func:`reads_past_row`: the seed position is not clamped: it reads the flat table at
  ``row * max_seq_len + prefix - 1``, the next row or, past the last row, the guard zone behind it;
* :func:`window_overflow`: the window start ``prefix - W`` and the verify length wrap in int64;
* :func:`raises_past_row`: raises ``IndexError`` when a request's seed position
  ``prefix - 1`` lies past its row (section 6's past-row), as a bounds-checked read would;
* :func:`no_seed_past_row`: seed -1 (no read) where ``prefix - 1`` lies past the row, as for a
  row outside the table; :func:`no_seed_past_row_offsets_plus_one`: the same, and every write
  offset one too many (a contract bug on every request, so that more differences than a verdict
  keeps whole come before the past-row seeds).

Run one with ``pytest conformance/ --planner tests.planted.divergent_planners:reads_past_row``.
"""

from __future__ import annotations

import torch

from impls.offsets_planner.python_planner import launch as python_launch

__all__ = ["no_wrapper_check", "zero_d_index_error", "reads_past_row", "window_overflow",
           "raises_past_row", "no_seed_past_row", "no_seed_past_row_offsets_plus_one"]
ONE_D = ("req_pool_indices", "prefix_lens", "extend_seq_lens", "full_to_swa_index_mapping")


def _wrap64(value: int) -> int:
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def no_wrapper_check(**kwargs) -> None:
    """Mimics upstream's launcher: ``swa_window_size > 0`` without a LUT is not refused; the
    window is then ignored (full attention)."""
    if kwargs["full_to_swa_index_mapping"] is None and kwargs["swa_window_size"] > 0:
        kwargs = {**kwargs, "swa_window_size": 0}
    python_launch(**kwargs)


def zero_d_index_error(**kwargs) -> None:
    """Mimics upstream's launcher on a 0-d tensor: ``shape[0]`` read before validation."""
    for name in (*ONE_D, "req_to_token"):
        tensor = kwargs[name]
        if isinstance(tensor, torch.Tensor) and tensor.dim() == 0:
            raise IndexError("tuple index out of range")
    python_launch(**kwargs)


def reads_past_row(**kwargs) -> None:
    """Mimics upstream's kernel on ``prefix_lens[r] - 1 >= max_seq_len``: the seed is read from the
    flat table past the row; where that lies past the whole allocation, the allocation's last
    element (the harness's guard zone) is read instead of faulting."""
    python_launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.dim() != 2 or kwargs["full_to_swa_index_mapping"] is not None:
        return
    cols = table.shape[1]
    storage = table.untyped_storage()
    allocation = torch.empty(0, dtype=table.dtype, device=table.device).set_(
        storage, 0, (storage.nbytes() // table.element_size(),))
    seeds = kwargs["out_write_seed_slot_indices"]
    for r, row, prefix in past_row_requests(kwargs):
        flat = table.storage_offset() + row * cols + prefix - 1
        seeds[r] = int(allocation[min(flat, allocation.numel() - 1)])


def past_row_requests(kwargs: dict):
    """(r, row, prefix) of each request of a launch whose seed position ``prefix - 1`` lies past
    its row of a 2-D table: active, its row inside the table, extend > 0, at least one column."""
    rows, cols = kwargs["req_to_token"].shape
    triples = zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist(),
                  kwargs["extend_seq_lens"].tolist())
    for r, (row, prefix, extend) in enumerate(triples):
        if row != 0 and 0 <= row < rows and extend > 0 and cols > 0 and prefix - 1 >= cols:
            yield r, row, prefix


def seed_inside_row(**kwargs) -> None:
    """The pure-Python plan, with the seed of a request whose ``prefix_lens[r] - 1`` lies past its
    row read one column before the clamped position (``max_seq_len - 2``), inside the row: another
    seed, neither this project's clamp nor upstream's flat read past the row (no LUT)."""
    python_launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.dim() != 2 or kwargs["full_to_swa_index_mapping"] is not None:
        return
    cols = table.shape[1]
    seeds = kwargs["out_write_seed_slot_indices"]
    for r, row, _ in past_row_requests(kwargs):
        if cols > 1:
            seeds[r] = int(table[row, cols - 2])


def no_seed_past_row(**kwargs) -> None:
    """The pure-Python plan, with seed -1 for every active request whose ``prefix - 1`` lies
    past its row of a 2-D table (no LUT)."""
    python_launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.dim() != 2 or kwargs["full_to_swa_index_mapping"] is not None:
        return
    rows, cols = table.shape
    triples = zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist(),
                  kwargs["extend_seq_lens"].tolist())
    for r, (row, prefix, extend) in enumerate(triples):
        if row != 0 and 0 <= row < rows and extend > 0 and prefix - 1 >= cols:
            kwargs["out_write_seed_slot_indices"][r] = -1


def no_seed_past_row_offsets_plus_one(**kwargs) -> None:
    """:func:`no_seed_past_row`, then ``out_write_offsets[1 : bs + 1]`` each one more."""
    no_seed_past_row(**kwargs)
    bs = kwargs["req_pool_indices"].shape[0] if kwargs["req_pool_indices"].dim() else 1
    kwargs["out_write_offsets"][1:bs + 1] += 1


def window_overflow(**kwargs) -> None:
    """Mimics upstream's window-start bug (spec section 5): ``prefix - W`` and the verify length
    computed in int64, so a negative prefix with a large W wraps."""
    python_launch(**kwargs)
    window = kwargs["swa_window_size"]
    if window <= 0:
        return
    verify = [0]
    for row, prefix in zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist()):
        start = max(_wrap64(prefix - window), 0)
        length = max(_wrap64(prefix - start), 0) if row != 0 else 0
        verify.append(_wrap64(verify[-1] + length))
    kwargs["out_verify_offsets_scratch"][:len(verify)].copy_(torch.tensor(verify))
    capacity = kwargs["verify_capacity"]
    kwargs["out_verify_num_valid"][0] = min(verify[-1], capacity)
    kwargs["out_verify_enable"][0] = 0 if verify[-1] > capacity else 1


def raises_past_row(**kwargs) -> None:
    """The pure-Python planner, except that a request whose seed position ``prefix - 1`` lies
    past its row (``>= max_seq_len``: spec section 6's past-row) raises ``IndexError``."""
    width = kwargs["req_to_token"].shape[-1] if kwargs["req_to_token"].dim() == 2 else 0
    bs = kwargs["req_pool_indices"].numel()
    for prefix in kwargs["prefix_lens"].tolist()[:bs]:
        if prefix - 1 >= width:
            raise IndexError(f"seed position {prefix - 1} past a row of {width}")
    python_launch(**kwargs)
