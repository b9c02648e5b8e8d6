"""A planner whose signature misspells one keyword (``prefix_len`` for ``prefix_lens``), as a new
user's first kernel did: every call raises ``TypeError`` before any planner code runs, in every
case, for the tests of ``conformance/reporting/failure_groups.py`` (the failure group names the
message once)."""

from __future__ import annotations


def misspelt(*, req_pool_indices, prefix_len, extend_seq_lens, req_to_token,
             full_to_swa_index_mapping, out_verify_offsets_scratch, out_write_offsets,
             out_write_seed_slot_indices, out_verify_num_valid, out_verify_enable,
             out_write_num_valid_reqs, swa_window_size, verify_capacity):
    raise AssertionError("never reached: the harness passes prefix_lens")
