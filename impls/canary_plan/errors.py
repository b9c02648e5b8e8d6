"""The whole plan's own documented errors: the three checks of upstream's wrapper
``launch_canary_plan_kernels`` (sglang 0.5.23, ``plan/api.py``), texts verbatim, in the order the
wrapper makes them (spec ``docs/spec/canary-plan.md`` section 4 items 1-3).

Everything else a pipeline raises is one of its stages' errors, passed through unchanged (ids of
:mod:`impls.offsets_planner.errors` and :mod:`impls.entries_planner.errors`). The exception class
and the entry record are the offsets planner's: every plan error is an
:class:`impls.offsets_planner.errors.PlanError` (a ``ValueError``).
"""

from __future__ import annotations

from typing import NoReturn

from impls.offsets_planner.errors import ErrorEntry, PlanError

_ENTRIES = (
    ErrorEntry("lut-required", "kv-canary: launch_canary_plan_kernels requires "
               "full_to_swa_index_mapping when swa_window_size > 0", "§4 item 1", "launcher"),
    ErrorEntry("bs-over-block", "kv-canary: launch_canary_plan_kernels supports at most "
               "bs={block_size} reqs per launch, got bs={bs}. Bump _PLAN_BS_BLOCK_SIZE if real "
               "workloads need this.", "§4 item 2", "launcher"),
    ErrorEntry("capacity-mismatch", "kv-canary: launch_canary_plan_kernels "
               "verify_capacity={verify_capacity} does not match "
               "verify_plan_out.verify_slot_indices.shape[0]={length}", "§4 item 3", "launcher"),
)

CATALOG: dict[str, ErrorEntry] = {entry.id: entry for entry in _ENTRIES}
"""The wrapper's three messages by id, in check order."""


def raise_error(error_id: str, **fields: object) -> NoReturn:
    """Raise :class:`PlanError` for wrapper catalog entry ``error_id`` with its fields filled in."""
    raise PlanError(error_id, CATALOG[error_id].format(**fields))
