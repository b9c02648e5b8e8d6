"""The one validator every entries planner calls before it launches (spec section 4).

:func:`validate_entries_launch` takes the launcher's 14 keyword arguments, checks them in the spec's
order (the first failing check is raised) and returns the integers a planner launches with. It reads
metadata only (shapes, dtypes, strides, devices), never a tensor value, so it is safe inside CUDA-graph
capture. Raises :class:`impls.offsets_planner.errors.PlanError` (a ``ValueError``) with the exact text of
:mod:`impls.entries_planner.errors`.

Source of each rule: item 1 is upstream's Python check (``entries_kernel.py``); items 2-3 restate the
host checks of ``PlanEntriesKernel::run`` (``canary_plan_entries.cuh``) in this project's words;
item 4 is upstream's int32 kernel parameters made an explicit check.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import torch

from impls.entries_planner.contract import (
    ARGUMENT_NAMES,
    BY_NAME,
    DEVICE_REFERENCE,
    LUT_NAME,
    POOL_NAME,
    SCALAR_NAMES,
    SCRATCH_NAME,
    TABLE_NAME,
    VALID_LENS_NAME,
    VISIT_ORDER,
)
from impls.entries_planner.errors import INT32_MAX, INT32_MIN, raise_error


@dataclass(frozen=True, slots=True)
class EntriesLaunch:
    """What a planner launches with once :func:`validate_entries_launch` has passed.

    Attributes:
        bs: requests, ``req_pool_indices.shape[0]`` (>= 0).
        verify_capacity: ``out_verify_slot_indices.shape[0]`` (>= 0).
        max_reqs, max_seq_len: the shape of ``req_to_token``.
        has_lut: whether slots are translated through the LUT; ``lut_len`` its length (0 without).
        has_pool: whether expected tokens are gathered; ``pool_rows``, ``pool_cols`` its shape.
        kv_token_id_vs_position_offset, swa_window_size: the two scalars as Python ints.
    """

    bs: int
    verify_capacity: int
    max_reqs: int
    max_seq_len: int
    has_lut: bool
    lut_len: int
    has_pool: bool
    pool_rows: int
    pool_cols: int
    kv_token_id_vs_position_offset: int
    swa_window_size: int


def _check_keywords(given: dict) -> None:
    missing = [n for n in ARGUMENT_NAMES if n not in given]
    unknown = [n for n in given if n not in BY_NAME]
    if missing:
        raise TypeError(f"launch_plan_entries_kernel() missing keyword argument(s): "
                        f"{', '.join(missing)}")
    if unknown:
        raise TypeError(f"launch_plan_entries_kernel() got unexpected keyword argument(s): "
                        f"{', '.join(unknown)}")


def _check_tensor(name: str, tensor: torch.Tensor, derived: dict[str, int],
                  device: torch.device) -> None:
    """Spec section 4 item 2 for one tensor: rank, dtype, length, contiguity, device."""
    arg = BY_NAME[name]
    if tensor.dim() != arg.rank:
        raise_error("rank", name=name, rank=arg.rank, shape=tuple(tensor.shape))
    if tensor.dtype != arg.dtype:
        raise_error("dtype", name=name, expected_dtype=arg.dtype, actual_dtype=tensor.dtype)
    rule, actual = arg.length, int(tensor.shape[0])
    if isinstance(rule, str) and rule.startswith("defines "):
        derived[rule.removeprefix("defines ")] = actual
    elif isinstance(rule, int) or rule in derived:
        expected = rule if isinstance(rule, int) else derived[rule]
        if actual != expected:
            raise_error("length", name=name, expected=expected, actual=actual)
    if not tensor.is_contiguous():
        raise_error("contiguous", name=name)
    if tensor.device != device:
        raise_error("device", name=name, expected_device=device, actual_device=tensor.device)


def _scalar(name: str, value: object) -> int:
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number is None or not INT32_MIN <= number <= INT32_MAX:
        raise_error("scalar-int32", name=name, value=repr(value))
    return number


def validate_entries_launch(**kwargs) -> EntriesLaunch:
    """Check the launcher's keyword arguments (spec section 4, in order) and derive the integers.

    Raises:
        PlanError: ``pool-without-valid-lens`` (item 1); ``rank``, ``dtype``, ``length``,
            ``contiguous``, ``device`` per tensor in :data:`VISIT_ORDER` (item 2);
            ``scratch-min-length`` (item 3); ``scalar-int32`` (item 4).
        TypeError: a missing or unknown keyword argument.
    """
    _check_keywords(kwargs)
    pool = kwargs[POOL_NAME]
    if pool is not None and kwargs[VALID_LENS_NAME] is None:
        raise_error("pool-without-valid-lens")
    derived: dict[str, int] = {}
    device = kwargs[DEVICE_REFERENCE].device if isinstance(
        kwargs[DEVICE_REFERENCE], torch.Tensor) else None
    for name in VISIT_ORDER:
        tensor = kwargs[name]
        if tensor is None and BY_NAME[name].optional:
            continue
        if name == VALID_LENS_NAME and pool is None:
            continue  # never read without a pool (upstream checks it only with one)
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"kv-canary: {name} must be a torch.Tensor, got {type(tensor).__name__}")
        _check_tensor(name, tensor, derived, device)
    bs = derived["bs"]
    scratch_len = int(kwargs[SCRATCH_NAME].shape[0])
    if scratch_len < bs + 1:
        raise_error("scratch-min-length", minimum=bs + 1, actual=scratch_len)
    offset, window = (_scalar(name, kwargs[name]) for name in SCALAR_NAMES)
    table, lut = kwargs[TABLE_NAME], kwargs[LUT_NAME]
    return EntriesLaunch(
        bs=bs, verify_capacity=derived["verify_capacity"],
        max_reqs=int(table.shape[0]), max_seq_len=int(table.shape[1]),
        has_lut=lut is not None, lut_len=int(lut.shape[0]) if lut is not None else 0,
        has_pool=pool is not None,
        pool_rows=int(pool.shape[0]) if pool is not None else 0,
        pool_cols=int(pool.shape[1]) if pool is not None else 0,
        kv_token_id_vs_position_offset=offset, swa_window_size=window)


def writes_nothing(total: int, enable: int, verify_capacity: int) -> bool:
    """Spec section 5's gate: True when no entry may be written this launch.

    ``total`` is ``verify_offsets_scratch[bs]``, ``enable`` is ``verify_enable[0]``. Nothing is
    written when ``total <= 0``, ``enable == 0``, or ``total > verify_capacity`` (the
    offsets/entries contract broken: spec section 7, project rule ``overflow-writes-nothing``).
    The GPU planners evaluate the same condition on the device.
    """
    return total <= 0 or enable == 0 or total > verify_capacity
