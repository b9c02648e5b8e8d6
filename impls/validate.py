"""The one validator every planner calls before it launches (spec section 4).

Two entry points:

* :func:`validate_launch` takes the launcher's keyword arguments (spec section 3): through
  :func:`inner_args` (the wrapper's part) it applies item 0, resolves the LUT and derives the
  integers (bs, lengths, stride) from the tensors, then calls the inner validator. Every planner
  calls it first and launches with what it returns.
* :func:`validate_offsets_inputs` is the inner validator: the 11 tensors plus the derived integers.
  Checks that the launcher can never reach (a negative length, a stride that disagrees with the
  tensor, a non-bool ``has_swa_lut``) are reached by calling it directly; cases with
  ``"entry": "validator"`` do that.

Both raise :class:`impls.errors.PlanError` (a ``ValueError``) with the exact text of spec section 4,
checks in the spec's order, the first failing one raised.

Derivations the spec leaves open, decided here: ``bs`` and the output lengths are ``shape[0]``
(upstream's launcher does the same); a 0-d tensor counts as length 1 and a tensor with fewer than one
dimension has stride 1, so that such a tensor fails the 1-D / 2-D check with a documented message
instead of an ``IndexError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from impls.constants import PLAN_BS_BLOCK_SIZE, SCRATCH_MIN_LEN
from impls.errors import raise_error

TENSOR_DTYPES: tuple[tuple[str, torch.dtype], ...] = (
    ("req_pool_indices", torch.int64),
    ("prefix_lens", torch.int64),
    ("extend_seq_lens", torch.int64),
    ("req_to_token", torch.int32),
    ("lut_tensor", torch.int64),
    ("out_verify_offsets_scratch", torch.int64),
    ("out_write_offsets", torch.int64),
    ("out_write_seed_slot_indices", torch.int64),
    ("out_verify_num_valid", torch.int32),
    ("out_verify_enable", torch.int32),
    ("out_write_num_valid_reqs", torch.int32),
)
""""The 11 tensors" of spec section 4, in the order the checks visit them, with their dtypes."""

TENSOR_NAMES: tuple[str, ...] = tuple(name for name, _ in TENSOR_DTYPES)

_ZERO_LUTS: dict[torch.device, torch.Tensor] = {}


@dataclass(frozen=True, slots=True)
class LaunchPlan:
    """What a planner launches with once :func:`validate_launch` has passed.

    Attributes:
        lut_tensor: int64 [max(lut_len, 1)]: the LUT, or a cached one-element zero tensor when the
            launcher got ``full_to_swa_index_mapping=None``. Never write to it.
        bs: number of requests, ``req_pool_indices.shape[0]``, in [0, 4096].
        lut_len: LUT length (0 when there is none).
        has_swa_lut: whether seeds are translated through the LUT.
        req_to_token_stride0: elements between rows of ``req_to_token`` (its ``stride(0)``).
        max_reqs: rows of ``req_to_token``.
        max_seq_len: columns of ``req_to_token``.
        write_req_capacity: ``out_write_seed_slot_indices.shape[0]``.
        swa_window_size: W as given (<= 0 means full attention).
        verify_capacity: as given.
    """

    lut_tensor: torch.Tensor
    bs: int
    lut_len: int
    has_swa_lut: bool
    req_to_token_stride0: int
    max_reqs: int
    max_seq_len: int
    write_req_capacity: int
    swa_window_size: int
    verify_capacity: int


def zero_lut(device: torch.device) -> torch.Tensor:
    """The one-element int64 zero tensor that stands for "no LUT" on ``device`` (spec section 4).

    Cached per device so that a launch inside CUDA-graph capture allocates nothing.
    """
    lut = _ZERO_LUTS.get(device)
    if lut is None:
        lut = _ZERO_LUTS[device] = torch.zeros(1, dtype=torch.int64, device=device)
    return lut


def leading_len(tensor: torch.Tensor) -> int:
    """``tensor.shape[0]``, or 1 for a 0-d tensor (see the module docstring)."""
    return int(tensor.shape[0]) if tensor.dim() else 1


def inner_args(
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
) -> dict[str, object]:
    """The wrapper's part: check item 0, resolve the LUT and derive the inner validator's integers.

    Returns the keyword arguments of :func:`validate_offsets_inputs` (the 11 tensors, ``lut_tensor``
    being the LUT or the zero stand-in, and bs, req_to_token_stride0, lut_len, has_swa_lut,
    write_offsets_len, write_req_capacity, verify_capacity). Reads metadata only.

    Raises:
        PlanError: ``swa-lut-required`` (spec section 4, item 0).
    """
    if full_to_swa_index_mapping is None:
        if swa_window_size > 0:
            raise_error("swa-lut-required")
        lut_tensor = zero_lut(out_verify_offsets_scratch.device)
        lut_len, has_swa_lut = 0, False
    else:
        lut_tensor = full_to_swa_index_mapping
        lut_len, has_swa_lut = leading_len(lut_tensor), True
    return {
        "req_pool_indices": req_pool_indices,
        "prefix_lens": prefix_lens,
        "extend_seq_lens": extend_seq_lens,
        "req_to_token": req_to_token,
        "lut_tensor": lut_tensor,
        "out_verify_offsets_scratch": out_verify_offsets_scratch,
        "out_write_offsets": out_write_offsets,
        "out_write_seed_slot_indices": out_write_seed_slot_indices,
        "out_verify_num_valid": out_verify_num_valid,
        "out_verify_enable": out_verify_enable,
        "out_write_num_valid_reqs": out_write_num_valid_reqs,
        "bs": leading_len(req_pool_indices),
        "req_to_token_stride0": int(req_to_token.stride(0)) if req_to_token.dim() else 1,
        "lut_len": lut_len,
        "has_swa_lut": has_swa_lut,
        "write_offsets_len": leading_len(out_write_offsets),
        "write_req_capacity": leading_len(out_write_seed_slot_indices),
        "verify_capacity": verify_capacity,
    }


def validate_launch(**launcher_kwargs) -> LaunchPlan:
    """Check the launcher's arguments as spec section 4 says, and derive what the launch needs.

    Takes exactly the launcher's keyword arguments (spec section 3). Reads shapes, strides, dtypes
    and devices only: no tensor values, no device-to-host copy, so it is safe inside CUDA-graph
    capture.

    Returns:
        The :class:`LaunchPlan` to launch with.

    Raises:
        PlanError: (a ``ValueError``) the first failing check of spec section 4, items 0 to 16.
        TypeError: a missing or unknown keyword argument.
    """
    inner = inner_args(**launcher_kwargs)
    validate_offsets_inputs(**inner)
    req_to_token = inner["req_to_token"]
    return LaunchPlan(
        lut_tensor=inner["lut_tensor"],
        bs=inner["bs"],
        lut_len=inner["lut_len"],
        has_swa_lut=inner["has_swa_lut"],
        req_to_token_stride0=inner["req_to_token_stride0"],
        max_reqs=int(req_to_token.shape[0]),
        max_seq_len=int(req_to_token.shape[1]),
        write_req_capacity=inner["write_req_capacity"],
        swa_window_size=int(launcher_kwargs["swa_window_size"]),
        verify_capacity=int(inner["verify_capacity"]),
    )


def _require_1d(tensor: torch.Tensor, name: str) -> None:
    if tensor.dim() != 1:
        raise_error("not-1d", name=name, shape=tuple(tensor.shape))


def _require_len(tensor: torch.Tensor, name: str, expected: int) -> None:
    _require_1d(tensor, name)
    if tensor.shape[0] != expected:
        raise_error("length", name=name, expected=expected, actual=int(tensor.shape[0]))


def _require_min_len(tensor: torch.Tensor, name: str, minimum: int) -> None:
    _require_1d(tensor, name)
    if tensor.shape[0] < minimum:
        raise_error("min-length", name=name, minimum=minimum, actual=int(tensor.shape[0]))


def validate_offsets_inputs(
    *,
    req_pool_indices: torch.Tensor,
    prefix_lens: torch.Tensor,
    extend_seq_lens: torch.Tensor,
    req_to_token: torch.Tensor,
    lut_tensor: torch.Tensor,
    out_verify_offsets_scratch: torch.Tensor,
    out_write_offsets: torch.Tensor,
    out_write_seed_slot_indices: torch.Tensor,
    out_verify_num_valid: torch.Tensor,
    out_verify_enable: torch.Tensor,
    out_write_num_valid_reqs: torch.Tensor,
    bs: int,
    req_to_token_stride0: int,
    lut_len: int,
    has_swa_lut: object,
    write_offsets_len: int,
    write_req_capacity: int,
    verify_capacity: int,
) -> None:
    """The inner validator: spec section 4, items 1 to 16, in order.

    Tensors as in spec section 3 (``lut_tensor`` is the LUT or the zero stand-in); the integers are
    those the launcher derives (see :func:`validate_launch`), passed explicitly so that every check
    can be reached, including those the launcher never fails.

    Raises:
        PlanError: the first failing check, with its catalog id and exact message.
    """
    tensors = (
        req_pool_indices, prefix_lens, extend_seq_lens, req_to_token, lut_tensor,
        out_verify_offsets_scratch, out_write_offsets, out_write_seed_slot_indices,
        out_verify_num_valid, out_verify_enable, out_write_num_valid_reqs,
    )
    for tensor, name in zip(tensors, TENSOR_NAMES):
        if not tensor.is_contiguous():
            raise_error("contiguous", name=name)
    for tensor, (name, dtype) in zip(tensors, TENSOR_DTYPES):
        if tensor.dtype != dtype:
            raise_error("dtype", name=name, expected_dtype=dtype, actual_dtype=tensor.dtype)

    if bs < 0 or bs > PLAN_BS_BLOCK_SIZE:
        raise_error("bs-range", block_size=PLAN_BS_BLOCK_SIZE, bs=bs)
    if write_offsets_len <= 0:
        raise_error("write-offsets-len-positive", write_offsets_len=write_offsets_len)
    if write_req_capacity < 0:
        raise_error("write-req-capacity-non-negative", write_req_capacity=write_req_capacity)
    if verify_capacity < 0:
        raise_error("verify-capacity-non-negative", verify_capacity=verify_capacity)
    if req_to_token_stride0 <= 0:
        raise_error("stride-positive", req_to_token_stride0=req_to_token_stride0)
    if lut_len < 0:
        raise_error("lut-len-non-negative", lut_len=lut_len)
    if not isinstance(has_swa_lut, bool):
        raise_error("has-swa-lut-bool", type_name=type(has_swa_lut).__name__)
    if has_swa_lut and lut_len <= 0:
        raise_error("lut-len-positive")
    if not has_swa_lut and lut_len != 0:
        raise_error("lut-len-zero")

    _require_len(req_pool_indices, "req_pool_indices", bs)
    _require_len(prefix_lens, "prefix_lens", bs)
    _require_len(extend_seq_lens, "extend_seq_lens", bs)
    if req_to_token.dim() != 2:
        raise_error("not-2d", name="req_to_token", shape=tuple(req_to_token.shape))
    _require_min_len(lut_tensor, "lut_tensor", max(lut_len, 1))
    _require_min_len(out_verify_offsets_scratch, "out_verify_offsets_scratch", SCRATCH_MIN_LEN)
    _require_len(out_write_offsets, "out_write_offsets", write_offsets_len)
    _require_len(out_write_seed_slot_indices, "out_write_seed_slot_indices", write_req_capacity)
    _require_len(out_verify_num_valid, "out_verify_num_valid", 1)
    _require_len(out_verify_enable, "out_verify_enable", 1)
    _require_len(out_write_num_valid_reqs, "out_write_num_valid_reqs", 1)
    _require_1d(lut_tensor, "lut_tensor")

    if write_offsets_len != write_req_capacity + 1:
        raise_error("write-offsets-len-mismatch", write_offsets_len=write_offsets_len,
                    write_req_capacity=write_req_capacity)
    if bs > write_req_capacity:
        raise_error("bs-exceeds-capacity", bs=bs, write_req_capacity=write_req_capacity)
    actual_stride0 = int(req_to_token.stride(0))
    if req_to_token_stride0 != actual_stride0:
        raise_error("stride-mismatch", given=req_to_token_stride0, actual=actual_stride0)

    device = out_verify_offsets_scratch.device
    for tensor, name in zip(tensors, TENSOR_NAMES):
        if tensor.device != device:
            raise_error("device", name=name, expected_device=device, actual_device=tensor.device)
