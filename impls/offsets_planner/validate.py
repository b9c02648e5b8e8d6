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

Every list of names and every length rule comes from the contract table (:mod:`impls.offsets_planner.contract`).
Both raise :class:`impls.offsets_planner.errors.PlanError` (a ``ValueError``) with the exact text of spec section 4,
checks in the spec's order, the first failing one raised.

Derivations the spec leaves open, decided here: ``bs`` and the output lengths are ``shape[0]``
(upstream's launcher does the same); a 0-d tensor counts as length 1 and a tensor with fewer than one
dimension has stride 1, so that such a tensor fails the 1-D / 2-D check with a documented message
instead of an ``IndexError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE
from impls.offsets_planner.contract import (
    ARGUMENT_NAMES,
    DEVICE_REFERENCE,
    LUT_NAME,
    LUT_TENSOR_NAME,
    SHAPE_CHECKS,
    SWA_WINDOW_NAME,
    TABLE_NAME,
    VALIDATED_TENSOR_NAMES,
    VALIDATED_TENSORS,
    VERIFY_CAPACITY_NAME,
)
from impls.offsets_planner.errors import raise_error

DERIVED_NAMES: tuple[str, ...] = ("bs", "req_to_token_stride0", "lut_len", "has_swa_lut",
                                  "write_offsets_len", "write_req_capacity", VERIFY_CAPACITY_NAME)
"""The inner validator's integers, derived from the tensors by :func:`inner_args`."""

LENGTH_SOURCES: dict[str, str] = {check[1]: name for name, check in reversed(SHAPE_CHECKS)
                                  if check[0] == "len" and isinstance(check[1], str)}
"""Derived integer -> the tensor whose ``shape[0]`` it is: the first tensor whose length rule
names it (``bs`` is ``req_pool_indices.shape[0]``, spec section 3; ``write_offsets_len`` and
``write_req_capacity`` are the two write outputs' lengths)."""

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


def _exact_keywords(function: str, given, expected: tuple[str, ...]) -> None:
    """Raise the TypeError Python raises for a keyword-only call with missing / unknown names."""
    missing = [n for n in expected if n not in given]
    unknown = [n for n in given if n not in expected]
    if missing:
        raise TypeError(f"{function}() missing keyword argument(s): {', '.join(missing)}")
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword argument(s): {', '.join(unknown)}")


def inner_args(**launcher_kwargs) -> dict[str, object]:
    """The wrapper's part: check item 0, resolve the LUT and derive the inner validator's integers.

    Takes exactly the launcher's 13 keyword arguments (:data:`impls.offsets_planner.contract.ARGUMENT_NAMES`).
    Returns the keyword arguments of :func:`validate_offsets_inputs` (the 11 tensors by
    :data:`impls.offsets_planner.contract.VALIDATED_TENSOR_NAMES`, ``lut_tensor`` being the LUT or the zero
    stand-in, and the integers of :data:`DERIVED_NAMES`). Reads metadata only.

    Raises:
        PlanError: ``swa-lut-required`` (spec section 4, item 0).
        TypeError: a missing or unknown keyword argument.
    """
    if len(launcher_kwargs) != len(ARGUMENT_NAMES) or not all(
            name in launcher_kwargs for name in ARGUMENT_NAMES):
        _exact_keywords("inner_args", launcher_kwargs, ARGUMENT_NAMES)
    lut = launcher_kwargs[LUT_NAME]
    if lut is None:
        if launcher_kwargs[SWA_WINDOW_NAME] > 0:
            raise_error("swa-lut-required")
        lut_tensor = zero_lut(launcher_kwargs[DEVICE_REFERENCE].device)
        lut_len, has_swa_lut = 0, False
    else:
        lut_tensor, lut_len, has_swa_lut = lut, leading_len(lut), True
    inner = {name: lut_tensor if name == LUT_TENSOR_NAME else launcher_kwargs[name]
             for name in VALIDATED_TENSOR_NAMES}
    table = launcher_kwargs[TABLE_NAME]
    inner.update(zip(DERIVED_NAMES, (
        leading_len(launcher_kwargs[LENGTH_SOURCES["bs"]]),
        int(table.stride(0)) if table.dim() else 1,
        lut_len,
        has_swa_lut,
        leading_len(launcher_kwargs[LENGTH_SOURCES["write_offsets_len"]]),
        leading_len(launcher_kwargs[LENGTH_SOURCES["write_req_capacity"]]),
        launcher_kwargs[VERIFY_CAPACITY_NAME],
    )))
    return inner


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
    req_to_token = inner[TABLE_NAME]
    return LaunchPlan(
        lut_tensor=inner[LUT_TENSOR_NAME],
        bs=inner["bs"],
        lut_len=inner["lut_len"],
        has_swa_lut=inner["has_swa_lut"],
        req_to_token_stride0=inner["req_to_token_stride0"],
        max_reqs=int(req_to_token.shape[0]),
        max_seq_len=int(req_to_token.shape[1]),
        write_req_capacity=inner["write_req_capacity"],
        **{SWA_WINDOW_NAME: int(launcher_kwargs[SWA_WINDOW_NAME]),
           VERIFY_CAPACITY_NAME: int(inner[VERIFY_CAPACITY_NAME])},
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


def _check_shape(tensor: torch.Tensor, name: str, check: tuple, derived: dict) -> None:
    """One length rule of spec section 4 item 12 (see :attr:`impls.offsets_planner.contract.Argument.shape_check`)."""
    kind = check[0]
    if kind == "2-D":
        if tensor.dim() != 2:
            raise_error("not-2d", name=name, shape=tuple(tensor.shape))
        return
    bound = check[1] if isinstance(check[1], int) else derived[check[1]]
    if kind == "len":
        _require_len(tensor, name, bound)
    else:
        _require_min_len(tensor, name, max(bound, 1))


def validate_offsets_inputs(
    *,
    bs: int,
    req_to_token_stride0: int,
    lut_len: int,
    has_swa_lut: object,
    write_offsets_len: int,
    write_req_capacity: int,
    verify_capacity: int,
    **tensors: torch.Tensor,
) -> None:
    """The inner validator: spec section 4, items 1 to 16, in order.

    ``tensors`` are the 11 tensors of spec section 4 by their names
    (:data:`impls.offsets_planner.contract.VALIDATED_TENSOR_NAMES`; ``lut_tensor`` is the LUT or the zero stand-in);
    the integers are those the launcher derives (see :func:`inner_args`), passed explicitly so that
    every check can be reached, including those the launcher never fails.

    Raises:
        PlanError: the first failing check, with its catalog id and exact message.
        TypeError: a tensor name missing or unknown.
    """
    if len(tensors) != len(VALIDATED_TENSOR_NAMES) or not all(
            name in tensors for name in VALIDATED_TENSOR_NAMES):
        _exact_keywords("validate_offsets_inputs", tensors, VALIDATED_TENSOR_NAMES)
    ordered = [(tensors[name], name) for name in VALIDATED_TENSOR_NAMES]
    for tensor, name in ordered:
        if not tensor.is_contiguous():
            raise_error("contiguous", name=name)
    for (tensor, name), (_, dtype) in zip(ordered, VALIDATED_TENSORS):
        if tensor.dtype != dtype:
            raise_error("dtype", name=name, expected_dtype=dtype, actual_dtype=tensor.dtype)

    if bs < 0 or bs > PLAN_BS_BLOCK_SIZE:
        raise_error("bs-range", block_size=PLAN_BS_BLOCK_SIZE, bs=bs)
    if write_offsets_len <= 0:
        raise_error("write-offsets-len-positive", write_offsets_len=write_offsets_len)
    if write_req_capacity < 0:
        raise_error("write-req-capacity-non-negative", write_req_capacity=write_req_capacity)
    if verify_capacity < 0:
        raise_error("verify-capacity-non-negative", n=verify_capacity)
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

    derived = {"bs": bs, "lut_len": lut_len, "write_offsets_len": write_offsets_len,
               "write_req_capacity": write_req_capacity}
    for (tensor, name), (_, check) in zip(ordered, SHAPE_CHECKS):
        _check_shape(tensor, name, check, derived)
    lut_tensor = tensors[LUT_TENSOR_NAME]
    _require_1d(lut_tensor, LUT_TENSOR_NAME)

    if write_offsets_len != write_req_capacity + 1:
        raise_error("write-offsets-len-mismatch", write_offsets_len=write_offsets_len,
                    write_req_capacity=write_req_capacity)
    if bs > write_req_capacity:
        raise_error("bs-exceeds-capacity", bs=bs, write_req_capacity=write_req_capacity)
    actual_stride0 = int(tensors[TABLE_NAME].stride(0))
    if req_to_token_stride0 != actual_stride0:
        raise_error("stride-mismatch", given=req_to_token_stride0, actual=actual_stride0)

    device = tensors[DEVICE_REFERENCE].device
    for tensor, name in ordered:
        if tensor.device != device:
            raise_error("device", name=name, expected_device=device, actual_device=tensor.device)
