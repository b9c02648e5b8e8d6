"""Constants of the offsets planner (spec section 2).

Values come from ``docs/spec/offsets-planner.md`` section 2, which restates upstream's
``python/sglang/kernels/ops/kv_canary/plan/offsets_kernel.py``.
"""

from __future__ import annotations

REQ_POOL_IDX_PADDING: int = 0
"""A ``req_pool_indices`` value of 0 marks a padding row (CUDA-graph padding); real rows start at 1."""

TOKEN_TO_KV_SLOT_PADDING: int = 0
"""KV slot 0 is the reserved dummy slot."""

PLAN_BS_BLOCK_SIZE: int = 4096
"""The largest batch one launch may plan; ``out_verify_offsets_scratch`` holds at least this + 1."""

SCRATCH_MIN_LEN: int = PLAN_BS_BLOCK_SIZE + 1
"""Minimum length of ``out_verify_offsets_scratch`` (spec section 3)."""

NO_SEED: int = -1
"""Seed slot of a request that has no prefix token to anchor on (spec section 5)."""
