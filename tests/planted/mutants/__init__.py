"""A family of planted mutants of the pure-Python planner (:mod:`impls.offsets_planner.python_planner`), one
realistic kernel bug each, for the corpus's mutation score (``python -m conformance mutants``).

Each mutant is a launcher with exactly the planner's keyword signature (spec section 3), built in
one module per bug family from :class:`tests.planted.mutants.base.Planner` with ONE step
overridden; its docstring is one line saying its bug. Run one by hand with::

    pytest conformance/ --planner tests.planted.mutants.seeds:seed_column_prefix

:data:`MUTANTS` is the registry the command reads: ``"module:attr"`` (relative to this package) ->
None, or why the mutant is *equivalent under the contract profile*: it differs from this project
only on elements a project rule of spec section 6 decides (spec section 8), so that no contract
case can kill it; ``--profile project`` must. :data:`CONTROL` is the unmutated planner: every case
must pass on it, or no kill means anything.
"""

from __future__ import annotations

CONTROL = "base:unmutated"
"""The same steps with no bug (it must pass every case)."""

_PROJECT = "; killed under --profile project"

MUTANTS: dict[str, str | None] = {
    # the exclusive prefix sums
    "scan:inclusive_write_scan": None,
    "scan:inclusive_verify_scan": None,
    "scan:scan_skips_first": None,
    "scan:int32_offsets": None,
    "scan:block_carry_dropped": None,
    # per-request lengths and the window
    "lengths:padding_row_live": None,
    "lengths:padding_row_verified": None,
    "lengths:padding_row_written": None,
    "lengths:negative_extend_unclamped": None,
    "lengths:negative_prefix_unclamped": None,
    "lengths:window_start_unclamped": None,
    "lengths:negative_window_is_window": None,
    "lengths:window_off_by_one": None,
    "lengths:window_start_int64": None,
    "lengths:negative_row_is_padding": None,
    "lengths:decode_fast_path_no_window": None,
    # seeds
    "seeds:seed_column_prefix": None,
    "seeds:sentinel_zero": None,
    "seeds:seed_without_write": None,
    "seeds:seed_on_negative_extend": None,
    "seeds:seed_skipped_past_row": None,
    "seeds:seed_on_negative_prefix": None,
    "seeds:only_real_seeds_stored": None,
    "seeds:clamp_flag_sticky": None,
    "seeds:out_of_table_sticky": None,
    "seeds:row_bound_inclusive": None,
    "seeds:position_clamped_to_table": (
        "equivalent under contract: it differs only in the seed of a request with prefix_lens - 1 "
        ">= max_seq_len, which spec section 6's past-row rule decides (this project clamps to the "
        "row; upstream's kernel reads the next row, as this mutant does)" + _PROJECT),
    "seeds:negative_row_wraps": (
        "equivalent under contract: it differs only in the seed of an active row < 0, which spec "
        "section 6's out-of-table rule decides (this project: no read, -1; upstream's reference "
        "wraps to a row from the end, as this mutant does)" + _PROJECT),
    "seeds:row_int32_truncated": (
        "equivalent under contract: it differs only in the seed of an active row >= max_reqs "
        "(a row past 2^31 that wraps into the table), which spec section 6's out-of-table rule "
        "decides (this project: no read, -1)" + _PROJECT),
    "seeds:large_row_clamped": (
        "equivalent under contract: it differs only in the seed of an active row >= max_reqs, "
        "which spec section 6's out-of-table rule decides (this project: no read, -1)" + _PROJECT),
    # the LUT
    "lut:lut_clamp_to_len": None,
    "lut:negative_slot_translated": None,
    "lut:slot_zero_untranslated": None,
    "lut:lut_only_with_window": None,
    "lut:seed_int32": None,
    "lut:lut_clamp_sticky": None,
    "lut:negative_slot_clamped_to_zero": None,
    # the three scalars
    "scalars:enable_ge": None,
    "scalars:enable_from_write_total": None,
    "scalars:num_valid_not_min": None,
    "scalars:num_valid_saturates": None,
    "scalars:num_reqs_live_only": None,
    "scalars:num_valid_atomic_add": None,
    "scalars:capacity_int32": None,
    # what is written, and when
    "stores:scratch_past_bs": None,
    "stores:zeroes_write_offsets_tail": None,
    "stores:seeds_tail_cleared": None,
    "stores:clamps_extend_in_place": None,
    "stores:total_dropped_at_capacity": None,
    "stores:cached_plan": None,
    "stores:early_return_at_bs_zero": None,
    "stores:total_masked_at_block_size": None,
    "stores:tile_tail_stored": None,
    # the documented errors
    "validation:bs_bound_off_by_one": None,
    "validation:bs_capacity_inclusive": None,
    "validation:message_typo": None,
    "validation:checks_swapped": None,
    "validation:type_error_for_bs_range": None,
    "validation:zero_d_accepted": None,
    "validation:zero_d_index_error": (
        "equivalent under contract: it differs only in the error of a step with a 0-d tensor, "
        "which this project's 0-d rule decides (spec section 6: counted as length 1, then "
        "validated; upstream's launcher raises IndexError, as this mutant does)" + _PROJECT),
    "validation:dtype_check_skipped": None,
    "validation:device_check_skipped": None,
}
"""Every mutant (``module:attr`` in this package) -> None, or why it is equivalent under contract."""


def planner_name(key: str) -> str:
    """The ``--planner`` name of registry key ``key`` (``tests.planted.mutants.seeds:...``)."""
    return f"{__name__}.{key}"
