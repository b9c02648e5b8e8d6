"""The whole plan as a pipeline: upstream's wrapper ``launch_canary_plan_kernels`` (sglang 0.5.23,
``plan/api.py``) around any offsets planner and any entries planner (spec
``docs/spec/canary-plan.md``).

:func:`compose` returns a launcher with the flat keyword signature of spec section 3
(:mod:`impls.canary_plan.contract`). One call, spec section 4, in order:

1. the wrapper's three checks (:mod:`impls.canary_plan.errors`): a window without a LUT; more than
   ``PLAN_BS_BLOCK_SIZE`` requests; ``verify_capacity`` not the verify columns' length (the fresh
   int64 [PLAN_BS_BLOCK_SIZE + 1] scratch is allocated between the second and the third, as
   upstream does);
2. both stages' own validators on the arguments each stage will get (this project's addition:
   every error is raised before anything is written; the stages' errors pass through unchanged);
3. ``write_offsets`` zeroed in full, then the offsets planner, then the entries planner on the
   scratch and ``enable`` the offsets planner just wrote.

The pieces (:func:`wrapper_checks`, :func:`new_scratch`, :func:`stage_kwargs`,
:func:`validate_stages`) are public so that a test can assemble a pipeline that gets one of them
wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from impls.canary_plan.contract import (
    ARGUMENT_NAMES,
    INT_SCALARS,
    SCRATCH,
    TO_ENTRIES,
    TO_OFFSETS,
    WRITE_OFFSETS,
)
from impls.canary_plan.errors import raise_error
from impls.entries_planner.validate import validate_entries_launch
from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE, SCRATCH_MIN_LEN
from impls.offsets_planner.validate import leading_len, validate_launch

Launch = Callable[..., None]


def wrapper_checks(args: dict, scratch_at: Callable[[], torch.Tensor] | None = None
                   ) -> torch.Tensor | None:
    """Spec section 4 items 1-3 on the launcher's keywords ``args``; returns the scratch that
    ``scratch_at()`` allocates between items 2 and 3 (upstream's order), default
    :func:`new_scratch` on ``verify_slot_indices``'s device.

    ``bs`` and the verify length are ``shape[0]``; a 0-d tensor counts as length 1 (the offsets
    planner's 0-d rule), so that its stage's validator names it.

    Raises:
        PlanError: ``lut-required``, ``bs-over-block``, ``capacity-mismatch``.
    """
    if args["swa_window_size"] > 0 and args["full_to_swa_index_mapping"] is None:
        raise_error("lut-required")
    bs = leading_len(args["req_pool_indices"])
    if bs > PLAN_BS_BLOCK_SIZE:
        raise_error("bs-over-block", block_size=PLAN_BS_BLOCK_SIZE, bs=bs)
    columns = args["verify_slot_indices"]
    scratch = scratch_at() if scratch_at is not None else new_scratch(columns.device)
    length = leading_len(columns)
    if args["verify_capacity"] != length:
        raise_error("capacity-mismatch", verify_capacity=args["verify_capacity"], length=length)
    return scratch


def new_scratch(device: torch.device) -> torch.Tensor:
    """The verify-offsets scratch of one call: int64 [PLAN_BS_BLOCK_SIZE + 1], uninitialised
    (the offsets planner writes [0, bs], the entries planner reads only those)."""
    return torch.empty(SCRATCH_MIN_LEN, dtype=torch.int64, device=device)


def stage_kwargs(args: dict, scratch: torch.Tensor) -> tuple[dict, dict]:
    """(the offsets planner's 13 keywords, the entries planner's 14) for the launcher's keywords
    ``args`` and the call's ``scratch`` (:data:`impls.canary_plan.contract.TO_OFFSETS`,
    :data:`~impls.canary_plan.contract.TO_ENTRIES`); the two window / offset scalars through
    ``int()``, as upstream's wrapper passes them."""
    def value(name: str):
        if name == SCRATCH:
            return scratch
        return int(args[name]) if name in INT_SCALARS else args[name]
    return ({k: value(v) for k, v in TO_OFFSETS.items()},
            {k: value(v) for k, v in TO_ENTRIES.items()})


def validate_stages(offsets: dict, entries: dict) -> None:
    """Both stages' validators, offsets first (spec section 4 item 4): metadata only.

    Raises:
        PlanError: the first failing check of either stage, its own id and text.
    """
    validate_launch(**offsets)
    validate_entries_launch(**entries)


def run(args: dict, offsets_launch: Launch, entries_launch: Launch) -> None:
    """One call of the pipeline on the launcher's keywords ``args`` (module docstring)."""
    scratch = wrapper_checks(args)
    offsets, entries = stage_kwargs(args, scratch)
    validate_stages(offsets, entries)
    args[WRITE_OFFSETS].zero_()
    offsets_launch(**offsets)
    entries_launch(**entries)


def compose(offsets_launch: Launch, entries_launch: Launch) -> Launch:
    """The whole-plan launcher of an offsets planner and an entries planner (spec section 3):
    keyword-only, returns None, fills the nine plan fields in place.

    Raises (from the launcher):
        PlanError: the wrapper's errors, then either stage's, first failing check first.
    """
    def launch(
        *,
        verify_slot_indices: torch.Tensor,
        verify_expected_tokens: torch.Tensor,
        verify_expected_positions: torch.Tensor,
        verify_prev_slot_indices: torch.Tensor,
        verify_num_valid: torch.Tensor,
        enable: torch.Tensor,
        write_offsets: torch.Tensor,
        write_seed_slot_indices: torch.Tensor,
        write_num_valid_reqs: torch.Tensor,
        req_pool_indices: torch.Tensor,
        prefix_lens: torch.Tensor,
        extend_seq_lens: torch.Tensor,
        req_to_token: torch.Tensor,
        swa_window_size: int,
        full_to_swa_index_mapping: torch.Tensor | None,
        verify_capacity: int,
        req_to_verify_expected_tokens: torch.Tensor | None,
        req_to_verify_expected_tokens_valid_lens: torch.Tensor | None,
        kv_token_id_vs_position_offset: int,
    ) -> None:
        given = dict(locals())  # also holds the two stages (free variables): keep the keywords
        run({name: given[name] for name in ARGUMENT_NAMES}, offsets_launch, entries_launch)

    return launch
