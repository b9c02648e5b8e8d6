"""The entries planner's contract as one table: its 14 keyword arguments (spec section 3).

Every list of names the entries package uses (the validator's visit order, the outputs, the test
builders) is derived from :data:`ARGUMENTS`; only this table and the planners' keyword-only
signatures spell the names out.

Source: ``docs/spec/entries-planner.md`` sections 3 and 4, which restate upstream's
``python/sglang/kernels/ops/kv_canary/plan/entries_kernel.py`` (``launch_plan_entries_kernel``) and
the host checks of ``python/sglang/kernels/jit/csrc/kv_canary/canary_plan_entries.cuh``
(``PlanEntriesKernel::run``), sglang 0.5.23.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

NO_SLOT: int = -1
"""The slot, previous slot or expected token of an entry that has none (spec section 5)."""


@dataclass(frozen=True)
class Argument:
    """One launcher argument.

    Attributes:
        name: the keyword, exactly as upstream's launcher spells it.
        role: ``request`` (length bs, new every step), ``table`` (kept between steps), ``plan``
            (written by the offsets planner, read here), ``output`` (written in place) or
            ``scalar`` (a plain Python int).
        dtype: the torch dtype spec section 3 requires; None for scalars.
        rank: 1 or 2 dimensions; 0 for scalars.
        length: the length rule of spec section 4: ``"bs"`` / ``"verify_capacity"`` (equal to that
            derived integer), ``"defines bs"`` / ``"defines verify_capacity"`` (the tensor whose
            ``shape[0]`` it is), an int (exact length), ``"bs + 1 minimum"`` or ``""`` (free).
        optional: whether None is allowed.
    """

    name: str
    role: str
    dtype: torch.dtype | None
    rank: int
    length: str | int
    optional: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.role != "scalar"


ARGUMENTS: tuple[Argument, ...] = (
    Argument("req_pool_indices", "request", torch.int64, 1, "defines bs"),
    Argument("prefix_lens", "request", torch.int64, 1, "bs"),
    Argument("req_to_token", "table", torch.int32, 2, ""),
    Argument("full_to_swa_index_mapping", "table", torch.int64, 1, "", optional=True),
    Argument("verify_offsets_scratch", "plan", torch.int64, 1, "bs + 1 minimum"),
    Argument("verify_enable", "plan", torch.int32, 1, 1),
    Argument("req_to_verify_expected_tokens", "table", torch.int32, 2, "", optional=True),
    Argument("req_to_verify_expected_tokens_valid_lens", "request", torch.int64, 1, "bs",
             optional=True),
    Argument("out_verify_slot_indices", "output", torch.int64, 1, "defines verify_capacity"),
    Argument("out_verify_expected_tokens", "output", torch.int64, 1, "verify_capacity"),
    Argument("out_verify_expected_positions", "output", torch.int64, 1, "verify_capacity"),
    Argument("out_verify_prev_slot_indices", "output", torch.int64, 1, "verify_capacity"),
    Argument("kv_token_id_vs_position_offset", "scalar", None, 0, ""),
    Argument("swa_window_size", "scalar", None, 0, ""),
)
"""The 14 launcher arguments in upstream's keyword order (spec section 3)."""

BY_NAME: dict[str, Argument] = {a.name: a for a in ARGUMENTS}
ARGUMENT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS)
OUTPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "output")
"""The four plan outputs: slot, expected token, expected position, previous slot."""
INPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS
                                     if a.is_tensor and a.role != "output")
"""Every tensor a planner reads and must never modify (spec section 5)."""
SCALAR_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "scalar")
LUT_NAME = "full_to_swa_index_mapping"
TABLE_NAME = "req_to_token"
POOL_NAME = "req_to_verify_expected_tokens"
VALID_LENS_NAME = "req_to_verify_expected_tokens_valid_lens"
SCRATCH_NAME = "verify_offsets_scratch"
ENABLE_NAME = "verify_enable"
OFFSET_NAME, WINDOW_NAME = SCALAR_NAMES

VISIT_ORDER: tuple[str, ...] = (
    "req_pool_indices", "prefix_lens", SCRATCH_NAME, ENABLE_NAME, *OUTPUT_NAMES, "req_to_token",
    LUT_NAME, POOL_NAME, VALID_LENS_NAME)
"""The order the validator checks the tensors in (spec section 4 item 2): upstream's host code
(``PlanEntriesKernel::run``) matches them in this order; an absent optional tensor is skipped, and
``valid_lens`` is checked only when the pool is given (without a pool it is never read)."""
assert sorted(VISIT_ORDER) == sorted(a.name for a in ARGUMENTS if a.is_tensor)

DEVICE_REFERENCE: str = VISIT_ORDER[0]
"""The tensor whose device every other tensor must share: the first one checked (spec §4)."""


class EntriesLauncher(Protocol):
    """An entries planner: keyword-only, returns None, fills the four outputs in place."""

    def __call__(
        self,
        *,
        req_pool_indices: torch.Tensor,
        prefix_lens: torch.Tensor,
        req_to_token: torch.Tensor,
        full_to_swa_index_mapping: torch.Tensor | None,
        verify_offsets_scratch: torch.Tensor,
        verify_enable: torch.Tensor,
        req_to_verify_expected_tokens: torch.Tensor | None,
        req_to_verify_expected_tokens_valid_lens: torch.Tensor | None,
        out_verify_slot_indices: torch.Tensor,
        out_verify_expected_tokens: torch.Tensor,
        out_verify_expected_positions: torch.Tensor,
        out_verify_prev_slot_indices: torch.Tensor,
        kv_token_id_vs_position_offset: int,
        swa_window_size: int,
    ) -> None: ...
