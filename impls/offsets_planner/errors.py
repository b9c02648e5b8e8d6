"""The catalog of documented errors (spec section 4), one stable id per message.

Every planner raises the same :class:`PlanError` (a ``ValueError``) through the shared validator, and
cases and reports refer to messages by id. :func:`identify` maps any message back to its id, so a
planner that raises plain ``ValueError`` with the right text (upstream's launcher, say) is judged the
same way as ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn


class PlanError(ValueError):
    """A documented planner error: ``ValueError`` with the exact spec text and a catalog id.

    Attributes:
        error_id: the catalog id (a key of :data:`CATALOG`), e.g. ``"bs-range"``.
    """

    def __init__(self, error_id: str, message: str) -> None:
        super().__init__(message)
        self.error_id = error_id


@dataclass(frozen=True)
class ErrorEntry:
    """One documented message.

    Attributes:
        id: stable catalog id used by cases and reports.
        template: the f-string template of spec section 4, fields in braces.
        spec: where the rule comes from (spec section and item).
        reach: how a case reaches it: ``"launcher"`` (a call of the planner), ``"validator"`` (only
            by calling :func:`impls.offsets_planner.validate.validate_offsets_inputs` with derived integers) or
            ``"allocate"`` (:meth:`impls.offsets_planner.buffers.PlanBuffers.allocate`).
    """

    id: str
    template: str
    spec: str
    reach: str

    def format(self, **fields: object) -> str:
        """The message with ``fields`` filled in; raises ``KeyError`` for a missing field."""
        return self.template.format(**fields)


# Field patterns used to turn a template into a regex in identify(); numbers are the default.
_FIELD_PATTERNS = {
    "name": r"\w+",
    "expected_dtype": r"\S+",
    "actual_dtype": r"\S+",
    "type_name": r"\S+",
    "shape": r"\(.*\)",
    "expected_device": r"\S+",
    "actual_device": r"\S+",
}

_ENTRIES = (
    ErrorEntry("swa-lut-required", "kv-canary: launch_canary_plan_kernels requires "
               "full_to_swa_index_mapping when swa_window_size > 0", "§4 item 0", "launcher"),
    ErrorEntry("contiguous", "kv-canary: {name} must be contiguous", "§4 item 1", "launcher"),
    ErrorEntry("dtype", "kv-canary: {name} must have dtype {expected_dtype}, got {actual_dtype}",
               "§4 item 2", "launcher"),
    ErrorEntry("bs-range", "kv-canary: offsets kernel bs must be in [0, {block_size}], got {bs}",
               "§4 item 3", "launcher"),
    ErrorEntry("write-offsets-len-positive",
               "kv-canary: write_offsets_len must be positive, got {write_offsets_len}",
               "§4 item 4", "launcher"),
    ErrorEntry("write-req-capacity-non-negative",
               "kv-canary: write_req_capacity must be non-negative, got {write_req_capacity}",
               "§4 item 5", "validator"),
    ErrorEntry("verify-capacity-non-negative",
               "kv-canary: verify_capacity must be non-negative, got {n}",
               "§4 item 6", "launcher"),
    ErrorEntry("stride-positive",
               "kv-canary: req_to_token_stride0 must be positive, got {req_to_token_stride0}",
               "§4 item 7", "validator"),
    ErrorEntry("lut-len-non-negative", "kv-canary: lut_len must be non-negative, got {lut_len}",
               "§4 item 8", "validator"),
    ErrorEntry("has-swa-lut-bool", "kv-canary: has_swa_lut must be bool, got {type_name}",
               "§4 item 9", "validator"),
    ErrorEntry("lut-len-positive", "kv-canary: lut_len must be positive when has_swa_lut is True",
               "§4 item 10", "launcher"),
    ErrorEntry("lut-len-zero", "kv-canary: lut_len must be 0 when has_swa_lut is False",
               "§4 item 11", "validator"),
    ErrorEntry("not-1d", "kv-canary: {name} must be 1-D, got shape {shape}", "§4 item 12",
               "launcher"),
    ErrorEntry("not-2d", "kv-canary: {name} must be 2-D, got shape {shape}", "§4 item 12",
               "launcher"),
    ErrorEntry("length", "kv-canary: {name} length must be {expected}, got {actual}", "§4 item 12",
               "launcher"),
    ErrorEntry("min-length", "kv-canary: {name} length must be >= {minimum}, got {actual}",
               "§4 item 12", "launcher"),
    ErrorEntry("write-offsets-len-mismatch", "kv-canary: write_offsets_len must equal "
               "write_req_capacity + 1, got {write_offsets_len} and {write_req_capacity}",
               "§4 item 13", "launcher"),
    ErrorEntry("bs-exceeds-capacity",
               "kv-canary: bs={bs} exceeds write_req_capacity={write_req_capacity}",
               "§4 item 14", "launcher"),
    ErrorEntry("stride-mismatch", "kv-canary: req_to_token_stride0={given} does not match "
               "req_to_token.stride(0)={actual}", "§4 item 15", "validator"),
    ErrorEntry("device", "kv-canary: {name} must be on out_verify_offsets_scratch's device "
               "{expected_device}, got {actual_device}", "§4 item 16", "launcher"),
    ErrorEntry("write-plan-capacity",
               "kv-canary: WritePlan write_req_capacity must be positive, got {n}",
               "§4 buffer allocation", "allocate"),
    ErrorEntry("verify-plan-capacity",
               "kv-canary: VerifyPlan verify_capacity must be positive, got {n}",
               "§4 buffer allocation", "allocate"),
)

CATALOG: dict[str, ErrorEntry] = {entry.id: entry for entry in _ENTRIES}
"""Every documented message by id, in the order of spec section 4."""


def _template_regex(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    out = []
    for i, part in enumerate(parts):
        out.append(_FIELD_PATTERNS.get(part, r"-?\d+") if i % 2 else re.escape(part))
    return re.compile("".join(out))


_REGEXES = tuple((entry.id, _template_regex(entry.template)) for entry in _ENTRIES)


def raise_error(error_id: str, **fields: object) -> NoReturn:
    """Raise :class:`PlanError` for catalog entry ``error_id`` with its message filled in."""
    raise PlanError(error_id, CATALOG[error_id].format(**fields))


def identify(message: str) -> str | None:
    """The catalog id whose template matches ``message`` exactly, or None if none does."""
    for error_id, regex in _REGEXES:
        if regex.fullmatch(message):
            return error_id
    return None
