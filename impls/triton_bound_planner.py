"""``triton-bound``: the Triton planner through a bound plan (:mod:`impls.bound_plan`).

Binds on first use per buffer set and calls the bound plan, so that the corpus checks the bound
path (per-step checks of the request tensors only) byte for byte like every other planner.
"""

from __future__ import annotations

import torch

from impls import triton_planner
from impls.bound_plan import BoundLauncher

BOUND_OF = triton_planner
"""The planner this one binds (the bench binds it directly: :func:`impls.bind`)."""
MODE = triton_planner.MODE
probe = triton_planner.probe
_LAUNCHER = BoundLauncher(triton_planner)


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
    """:func:`impls.triton_planner.launch` through :class:`impls.bound_plan.BoundLauncher` (same
    arguments, outputs and errors: spec sections 3 to 5)."""
    _LAUNCHER(locals())
