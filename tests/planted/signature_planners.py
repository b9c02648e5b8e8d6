"""Planners whose signature makes every call fail (spec section 3: the harness passes every
argument by keyword and nothing else): tests/test_signature_faults.py."""

from __future__ import annotations


def renamed_lut(*, req_pool_indices, prefix_lens, extend_seq_lens, req_to_token, lut,
                out_verify_offsets_scratch, out_write_offsets, out_write_seed_slot_indices,
                out_verify_num_valid, out_verify_enable, out_write_num_valid_reqs,
                swa_window_size, verify_capacity, stream) -> None:
    """``lut`` for ``full_to_swa_index_mapping``, and a ``stream`` without a default."""
    raise AssertionError("never called: every call raises TypeError first")
