"""The whole plan's launcher as data: its 19 keywords (spec ``docs/spec/canary-plan.md`` section 3)
and which keyword of each stage each one feeds.

Upstream's ``launch_canary_plan_kernels`` (sglang 0.5.23, ``plan/api.py``) takes two plan objects,
``VerifyPlan`` (``verify.py``) and ``WritePlan`` (``write.py``); this project's launcher takes each
of their fields as a keyword of its own, named as the field, so that the harness can fill and judge
each one. Every list of names in :mod:`impls.canary_plan` comes from here.
"""

from __future__ import annotations

VERIFY_FIELDS: tuple[str, ...] = (
    "verify_slot_indices", "verify_expected_tokens", "verify_expected_positions",
    "verify_prev_slot_indices", "verify_num_valid", "enable")
"""``VerifyPlan``'s fields: four int64 [verify_capacity] entry columns, then int32 [1] count and
int32 [1] enable."""
ENTRY_FIELDS: tuple[str, ...] = VERIFY_FIELDS[:4]
"""The four entry columns, in the entries planner's output order."""
NUM_VALID, ENABLE = VERIFY_FIELDS[4:]
WRITE_FIELDS: tuple[str, ...] = ("write_offsets", "write_seed_slot_indices", "write_num_valid_reqs")
"""``WritePlan``'s fields: int64 [write_req_capacity + 1], int64 [write_req_capacity], int32 [1]."""
WRITE_OFFSETS, SEEDS, WRITE_NUM_VALID_REQS = WRITE_FIELDS
OUTPUT_NAMES: tuple[str, ...] = VERIFY_FIELDS + WRITE_FIELDS
"""The nine plan fields, the launcher's outputs, in upstream's field order."""
INPUT_NAMES: tuple[str, ...] = (
    "req_pool_indices", "prefix_lens", "extend_seq_lens", "req_to_token", "swa_window_size",
    "full_to_swa_index_mapping", "verify_capacity", "req_to_verify_expected_tokens",
    "req_to_verify_expected_tokens_valid_lens", "kv_token_id_vs_position_offset")
"""The wrapper's other keywords, in upstream's order (tensors and plain ints)."""
ARGUMENT_NAMES: tuple[str, ...] = OUTPUT_NAMES + INPUT_NAMES
SCRATCH = "scratch"
"""Stands, in the two maps below, for the verify-offsets scratch the pipeline allocates per call."""

TO_OFFSETS: dict[str, str] = {
    "req_pool_indices": "req_pool_indices", "prefix_lens": "prefix_lens",
    "extend_seq_lens": "extend_seq_lens", "req_to_token": "req_to_token",
    "full_to_swa_index_mapping": "full_to_swa_index_mapping",
    "out_verify_offsets_scratch": SCRATCH, "out_write_offsets": WRITE_OFFSETS,
    "out_write_seed_slot_indices": SEEDS, "out_verify_num_valid": NUM_VALID,
    "out_verify_enable": ENABLE, "out_write_num_valid_reqs": WRITE_NUM_VALID_REQS,
    "swa_window_size": "swa_window_size", "verify_capacity": "verify_capacity"}
"""The offsets planner's 13 keywords (offsets spec section 3) -> the pipeline's keyword feeding it."""
TO_ENTRIES: dict[str, str] = {
    "req_pool_indices": "req_pool_indices", "prefix_lens": "prefix_lens",
    "req_to_token": "req_to_token", "full_to_swa_index_mapping": "full_to_swa_index_mapping",
    "verify_offsets_scratch": SCRATCH, "verify_enable": ENABLE,
    "req_to_verify_expected_tokens": "req_to_verify_expected_tokens",
    "req_to_verify_expected_tokens_valid_lens": "req_to_verify_expected_tokens_valid_lens",
    **{f"out_{name}": name for name in ENTRY_FIELDS},
    "kv_token_id_vs_position_offset": "kv_token_id_vs_position_offset",
    "swa_window_size": "swa_window_size"}
"""The entries planner's 14 keywords (entries spec section 3) -> the pipeline's keyword feeding it."""
INT_SCALARS: tuple[str, ...] = ("swa_window_size", "kv_token_id_vs_position_offset")
"""The scalars the wrapper passes on through ``int()``, as upstream's does."""
