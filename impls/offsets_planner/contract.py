"""The launcher contract as one table: the 13 keyword arguments of spec section 3.

Every list of argument names in the project (the validator's order, the input builder, the case
checks, the shrinker, the stream check, the benchmark) is derived from :data:`ARGUMENTS`; only this
table and the planners' own keyword-only signatures (which users copy) spell the names out.
:class:`Launcher` is the same signature as a :class:`typing.Protocol`, for type checkers.

Source: ``docs/spec/offsets-planner.md`` sections 3 and 4, which restate upstream's
``python/sglang/kernels/ops/kv_canary/plan/offsets_kernel.py`` (``launch_plan_offsets_kernel``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from impls.offsets_planner.constants import SCRATCH_MIN_LEN


@dataclass(frozen=True)
class Argument:
    """One launcher argument.

    Attributes:
        name: the keyword, exactly as upstream's launcher spells it.
        role: ``request`` (per-request input, length bs, new every step), ``table`` (input that a
            server keeps between steps: ``req_to_token`` and the LUT), ``output`` (written in place)
            or ``scalar`` (a plain Python int).
        dtype: the torch dtype spec section 3 requires; None for scalars.
        length: the length rule of spec section 3, as the spec writes it.
        shape_check: the same rule as spec section 4 item 12 checks it: ``("len", BOUND)`` (1-D of
            exactly BOUND elements), ``("min", BOUND)`` (1-D of at least max(BOUND, 1)) or
            ``("2-D",)``; BOUND is an int or the name of one of the inner validator's derived
            integers (``bs``, ``lut_len``, ``write_offsets_len``, ``write_req_capacity``). Empty
            for scalars.
        optional: whether None is allowed (only the LUT).
    """

    name: str
    role: str
    dtype: torch.dtype | None
    length: str
    shape_check: tuple = ()
    optional: bool = False

    @property
    def is_tensor(self) -> bool:
        """True for the 11 tensor arguments (the LUT included)."""
        return self.role != "scalar"


ARGUMENTS: tuple[Argument, ...] = (
    Argument("req_pool_indices", "request", torch.int64, "[bs]", ("len", "bs")),
    Argument("prefix_lens", "request", torch.int64, "[bs]", ("len", "bs")),
    Argument("extend_seq_lens", "request", torch.int64, "[bs]", ("len", "bs")),
    Argument("req_to_token", "table", torch.int32, "[max_reqs, max_seq_len], 2-D", ("2-D",)),
    Argument("full_to_swa_index_mapping", "table", torch.int64, "[lut_len]", ("min", "lut_len"),
             optional=True),
    Argument("out_verify_offsets_scratch", "output", torch.int64, "[>= PLAN_BS_BLOCK_SIZE + 1]",
             ("min", SCRATCH_MIN_LEN)),
    Argument("out_write_offsets", "output", torch.int64, "[write_req_capacity + 1]",
             ("len", "write_offsets_len")),
    Argument("out_write_seed_slot_indices", "output", torch.int64, "[write_req_capacity]",
             ("len", "write_req_capacity")),
    Argument("out_verify_num_valid", "output", torch.int32, "[1]", ("len", 1)),
    Argument("out_verify_enable", "output", torch.int32, "[1]", ("len", 1)),
    Argument("out_write_num_valid_reqs", "output", torch.int32, "[1]", ("len", 1)),
    Argument("swa_window_size", "scalar", None, "int"),
    Argument("verify_capacity", "scalar", None, "int"),
)
"""The 13 launcher arguments in spec section 3's order."""

BY_NAME: dict[str, Argument] = {a.name: a for a in ARGUMENTS}
ARGUMENT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS)
REQUEST_INPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "request")
"""``req_pool_indices, prefix_lens, extend_seq_lens``: what changes every step (length bs)."""
TABLE_INPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "table")
"""``req_to_token`` and the LUT: inputs a server keeps between steps."""
INPUT_NAMES: tuple[str, ...] = REQUEST_INPUT_NAMES + TABLE_INPUT_NAMES
"""Every input a planner reads and must never modify (spec section 5)."""
OUTPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "output")
"""Outputs, in the spec's order (section 3)."""
SCALAR_OUTPUT_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS
                                             if a.role == "output" and a.length == "[1]")
"""The three one-element outputs: num_valid, enable, write_num_valid_reqs."""
SCALAR_NAMES: tuple[str, ...] = tuple(a.name for a in ARGUMENTS if a.role == "scalar")
"""``swa_window_size, verify_capacity``: plain ints."""
VERIFY_NUM_VALID_NAME, VERIFY_ENABLE_NAME, WRITE_NUM_VALID_REQS_NAME = SCALAR_OUTPUT_NAMES
"""The three one-element outputs by name (spec section 3's order)."""
ZEROED_BEFORE_EACH_LAUNCH: tuple[str, ...] = ("out_write_offsets",)
"""Outputs a caller zeroes before every launch: upstream's whole-plan wrapper
(``launch_canary_plan_kernels``, ``plan/api.py``) zeroes ``write_offsets`` before it calls the
planner, every forward step."""
SWA_WINDOW_NAME, VERIFY_CAPACITY_NAME = SCALAR_NAMES
"""The window (``W`` of spec section 5) and the verify capacity, by name."""
TABLE_NAME: str = TABLE_INPUT_NAMES[0]
"""``req_to_token``, the KV-slot table."""
LUT_NAME: str = TABLE_INPUT_NAMES[1]
"""The optional LUT argument; the validator calls it ``lut_tensor`` once resolved."""
LUT_TENSOR_NAME = "lut_tensor"
"""Spec section 4's name of the resolved LUT (the LUT, or the one-element zero stand-in)."""
VALIDATED_TENSORS: tuple[tuple[str, torch.dtype], ...] = tuple(
    (LUT_TENSOR_NAME if a.name == LUT_NAME else a.name, a.dtype) for a in ARGUMENTS if a.is_tensor)
""""The 11 tensors" of spec section 4, in the order its checks visit them, with their dtypes."""
VALIDATED_TENSOR_NAMES: tuple[str, ...] = tuple(name for name, _ in VALIDATED_TENSORS)
SHAPE_CHECKS: tuple[tuple[str, tuple], ...] = tuple(
    (name, a.shape_check) for name, a in zip(VALIDATED_TENSOR_NAMES, (a for a in ARGUMENTS
                                                                      if a.is_tensor)))
"""(validated tensor name, shape check) in spec section 4 item 12's order, which is the table's."""
DEVICE_REFERENCE: str = OUTPUT_NAMES[0]
"""The tensor whose device every other tensor must share (spec section 4 item 16)."""


def output_lengths(write_req_capacity: int, scratch_len: int = SCRATCH_MIN_LEN) -> dict[str, int]:
    """{output name: its length} for ``write_req_capacity`` requests, by the table's length rules
    (spec section 3): the one output with a minimum length (the scratch) gets ``scratch_len``."""
    derived = {"write_offsets_len": write_req_capacity + 1,
               "write_req_capacity": write_req_capacity}
    lengths = {}
    for a in ARGUMENTS:
        if a.role == "output":
            kind, bound = a.shape_check
            lengths[a.name] = scratch_len if kind == "min" else (
                bound if isinstance(bound, int) else derived[bound])
    return lengths


class Launcher(Protocol):
    """A planner: keyword-only, returns None, fills the six outputs in place (spec section 3)."""

    def __call__(
        self,
        *,
        req_pool_indices: torch.Tensor,
        prefix_lens: torch.Tensor,
        extend_seq_lens: torch.Tensor,
        req_to_token: torch.Tensor,
        full_to_swa_index_mapping: torch.Tensor | None,
        out_verify_offsets_scratch: torch.Tensor,
        out_write_offsets: torch.Tensor,
        out_write_seed_slot_indices: torch.Tensor,
        out_verify_num_valid: torch.Tensor,
        out_verify_enable: torch.Tensor,
        out_write_num_valid_reqs: torch.Tensor,
        swa_window_size: int,
        verify_capacity: int,
    ) -> None: ...


def golden_lengths(bs: int) -> dict[str, int]:
    """{output name: the leading elements a golden defines} for a batch of ``bs`` requests (spec
    section 5): the scratch and ``write_offsets`` [:bs+1] (exclusive prefix sums and their totals),
    the seeds [:bs], and element 0 of each scalar output; nothing else is written."""
    ends = dict(zip(OUTPUT_NAMES[:3], (bs + 1, bs + 1, bs)))
    return {name: ends.get(name, 1) for name in OUTPUT_NAMES}
