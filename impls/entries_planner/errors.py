"""The entries planner's documented errors (spec ``docs/spec/entries-planner.md`` section 4).

One stable id per message, in the order the validator checks them. The exception class, the entry
record and the template matcher are the offsets planner's (:mod:`impls.offsets_planner.errors`): an entries error is
an :class:`impls.offsets_planner.errors.PlanError` (a ``ValueError``) like any other planner error.
"""

from __future__ import annotations

import re
from typing import NoReturn

from impls.offsets_planner.errors import ErrorEntry, PlanError

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
"""The range of the two scalars: upstream's kernel takes them as int32 (spec section 4 item 4)."""

_ENTRIES = (
    ErrorEntry("pool-without-valid-lens",
               "kv-canary: launch_plan_entries_kernel requires "
               "req_to_verify_expected_tokens_valid_lens when req_to_verify_expected_tokens is set",
               "§4 item 1 (upstream entries_kernel.py, verbatim)", "launcher"),
    ErrorEntry("rank", "kv-canary: {name} must be {rank}-D, got shape {shape}", "§4 item 2a",
               "launcher"),
    ErrorEntry("dtype", "kv-canary: {name} must have dtype {expected_dtype}, got {actual_dtype}",
               "§4 item 2b", "launcher"),
    ErrorEntry("length", "kv-canary: {name} length must be {expected}, got {actual}",
               "§4 item 2c", "launcher"),
    ErrorEntry("contiguous", "kv-canary: {name} must be contiguous", "§4 item 2d", "launcher"),
    ErrorEntry("device", "kv-canary: {name} must be on req_pool_indices's device "
               "{expected_device}, got {actual_device}", "§4 item 2e", "launcher"),
    ErrorEntry("scratch-min-length",
               "kv-canary: verify_offsets_scratch length must be >= bs + 1 = {minimum}, "
               "got {actual}", "§4 item 3 (upstream: 'must be >= bs_padded + 1')", "launcher"),
    ErrorEntry("scalar-int32",
               "kv-canary: {name} must be an int in [-2147483648, 2147483647], got {value}",
               "§4 item 4 (upstream's int32 kernel parameters)", "launcher"),
)

CATALOG: dict[str, ErrorEntry] = {entry.id: entry for entry in _ENTRIES}
"""Every documented entries message by id, in the order of spec section 4."""

_FIELDS = {"name": r"\w+", "expected_dtype": r"\S+", "actual_dtype": r"\S+", "shape": r"\(.*\)",
           "expected_device": r"\S+", "actual_device": r"\S+", "value": r".*"}


def _regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile("".join(_FIELDS.get(p, r"-?\d+") if i % 2 else re.escape(p)
                              for i, p in enumerate(parts)))


_REGEXES = tuple((e.id, _regex(e.template)) for e in _ENTRIES)


def raise_error(error_id: str, **fields: object) -> NoReturn:
    """Raise :class:`PlanError` for entries catalog entry ``error_id`` with its fields filled in."""
    raise PlanError(error_id, CATALOG[error_id].format(**fields))


def identify(message: str) -> str | None:
    """The entries catalog id whose template matches ``message`` exactly, or None."""
    for error_id, regex in _REGEXES:
        if regex.fullmatch(message):
            return error_id
    return None
