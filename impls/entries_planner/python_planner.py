"""The pure-Python entries planner: the readable reference of spec section 5 (and section 6's
"this project" column).

It reads tensor values on the host (``tolist()``), so it is neither fast nor CUDA-graph safe; it
runs on any device. The GPU planners (:mod:`.triton_planner`, :mod:`.numba_cuda_planner`) compute
the same bytes on the device.

Shapes and dtypes: spec section 3 (:mod:`impls.entries_planner.contract`). Errors: the shared
validator (:func:`impls.entries_planner.validate.validate_entries_launch`).
"""

from __future__ import annotations

import torch

from impls.entries_planner.contract import NO_SLOT, OUTPUT_NAMES
from impls.entries_planner.validate import validate_entries_launch, writes_nothing

MODE = "cpu"
"""How this planner runs: plain Python on the host."""


def window_start(prefix_len: int, swa_window_size: int) -> int:
    """First verified position of a request (spec section 5): ``max(prefix - W, 0)`` when W > 0,
    else 0 (the whole prefix)."""
    return max(prefix_len - swa_window_size, 0) if swa_window_size > 0 else 0


def owner(offsets: list[int], bs: int, t: int) -> int:
    """The request that owns entry ``t``: the largest r in [0, bs) with ``offsets[r] <= t``, found by
    halving as upstream's kernel does (``find_req_id``); 0 when none is. ``bs >= 1``."""
    lo, hi = 0, bs
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offsets[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo


def translate(slot: int, lut: list[int] | None) -> int:
    """A slot through the LUT (spec section 6): a negative slot passes through; with an empty LUT
    there is nothing to translate to (``-1``, rule ``lut-empty``); a slot >= lut_len reads the last
    entry (rule ``lut-clamp``)."""
    if lut is None or slot < 0:
        return slot
    if not lut:
        return NO_SLOT
    return lut[min(slot, len(lut) - 1)]


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
    """Fill the four verify-plan outputs for entries ``[0, total)``; write nothing else.

    ``total = verify_offsets_scratch[bs]``; nothing at all is written when bs == 0, total <= 0,
    ``verify_enable[0] == 0`` or total > verify_capacity (spec section 5).

    Raises:
        PlanError: spec section 4, through the shared validator.
    """
    kwargs = dict(locals())
    plan = validate_entries_launch(**kwargs)
    if plan.bs == 0:
        return
    offsets = verify_offsets_scratch[: plan.bs + 1].tolist()
    total = offsets[plan.bs]
    if writes_nothing(total, int(verify_enable[0]), plan.verify_capacity):
        return
    rows, prefixes = req_pool_indices.tolist(), prefix_lens.tolist()
    table = req_to_token.tolist()
    lut = full_to_swa_index_mapping.tolist() if plan.has_lut else None
    pool = req_to_verify_expected_tokens.tolist() if plan.has_pool else None
    valid = req_to_verify_expected_tokens_valid_lens.tolist() if plan.has_pool else None
    W, offset = plan.swa_window_size, plan.kv_token_id_vs_position_offset

    def slot_at(row: int, position: int) -> int:
        # Outside the table there is no slot (rule entry-outside-table): never read there.
        if 0 <= row < plan.max_reqs and 0 <= position < plan.max_seq_len:
            return translate(table[row][position], lut)
        return NO_SLOT

    columns = {name: [] for name in OUTPUT_NAMES}
    for t in range(total):
        r = owner(offsets, plan.bs, t)
        row = rows[r]
        position = window_start(prefixes[r], W) + (t - offsets[r])
        token = NO_SLOT
        if pool is not None:
            pos_in_pool = position + offset
            # Rule pool-outside: a row or column outside the pool has no expected token.
            if (0 <= pos_in_pool < valid[r] and pos_in_pool < plan.pool_cols
                    and 0 <= row < plan.pool_rows):
                token = pool[row][pos_in_pool]
        columns["out_verify_slot_indices"].append(slot_at(row, position))
        columns["out_verify_expected_tokens"].append(token)
        columns["out_verify_expected_positions"].append(position)
        columns["out_verify_prev_slot_indices"].append(
            slot_at(row, position - 1) if position > 0 else NO_SLOT)
    for name, values in columns.items():
        out = kwargs[name]
        out[:total].copy_(torch.tensor(values, dtype=torch.int64, device=out.device))
