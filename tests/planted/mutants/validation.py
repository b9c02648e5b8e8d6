"""Mutants of the launcher's checks (spec section 4: exact messages, ``ValueError``, checks in
order, the first failing one raised): each overrides :meth:`Planner.validate` around the shared
validator, so that every other check stays as it is.

One is equivalent under the contract profile (``tests/planted/mutants/__init__.py`` says why): the
error of a step with a 0-d tensor is decided by this project's 0-d rule (spec section 6).
"""

from __future__ import annotations

import torch

from impls.offsets_planner.buffer_set import BufferSet
from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE
from impls.offsets_planner.contract import (DEVICE_REFERENCE, LUT_NAME, LUT_TENSOR_NAME, REQUEST_INPUT_NAMES,
                            TABLE_NAME)
from impls.offsets_planner.errors import CATALOG, PlanError
from impls.offsets_planner.validate import leading_len
from tests.planted.mutants.base import Planner, launcher

CHECK_ORDER = list(CATALOG)
"""Catalog ids in the order spec section 4 checks them."""
SEEDS, OFFSETS = "out_write_seed_slot_indices", "out_write_offsets"


def _bs_and_capacity(kwargs: dict) -> tuple[int, int]:
    return leading_len(kwargs["req_pool_indices"]), leading_len(kwargs[SEEDS])


def _error(error_id: str, **fields) -> PlanError:
    return PlanError(error_id, CATALOG[error_id].format(**fields))


class _ExtraRefusal(Planner):
    """Not a mutant: a check that also refuses ``refuses(kwargs)`` at catalog id ``error_id``'s
    place in the order (before every later check, after every earlier one)."""

    error_id = ""

    def refuses(self, kwargs: dict) -> PlanError | None:
        raise NotImplementedError

    def validate(self, kwargs):
        try:
            validated = super().validate(kwargs)
        except PlanError as exc:
            extra = (self.refuses(kwargs) if CHECK_ORDER.index(exc.error_id)
                     > CHECK_ORDER.index(self.error_id) else None)
            if extra is not None:
                raise extra from None
            raise
        extra = self.refuses(kwargs)
        if extra is not None:
            raise extra
        return validated


class _BsBoundOffByOne(_ExtraRefusal):
    """Bug: the bs upper bound check is bs >= 4096 (bs == PLAN_BS_BLOCK_SIZE refused)."""

    error_id = "bs-range"

    def refuses(self, kwargs):
        bs, _ = _bs_and_capacity(kwargs)
        return _error("bs-range", block_size=PLAN_BS_BLOCK_SIZE, bs=bs) \
            if bs == PLAN_BS_BLOCK_SIZE else None


class _BsCapacityInclusive(_ExtraRefusal):
    """Bug: the capacity check is bs >= write_req_capacity (bs == capacity refused)."""

    error_id = "bs-exceeds-capacity"

    def refuses(self, kwargs):
        bs, capacity = _bs_and_capacity(kwargs)
        return _error("bs-exceeds-capacity", bs=bs, write_req_capacity=capacity) \
            if bs == capacity else None


class _MessageTypo(Planner):
    """Bug: the contiguity message has a typo ("must be contigous")."""

    def validate(self, kwargs):
        try:
            return super().validate(kwargs)
        except PlanError as exc:
            if exc.error_id == "contiguous":
                raise ValueError(str(exc).replace("contiguous", "contigous")) from None
            raise


class _ChecksSwapped(Planner):
    """Bug: bs > write_req_capacity is checked before write_offsets_len == capacity + 1."""

    def validate(self, kwargs):
        try:
            return super().validate(kwargs)
        except PlanError as exc:
            bs, capacity = _bs_and_capacity(kwargs)
            if exc.error_id == "write-offsets-len-mismatch" and bs > capacity:
                raise _error("bs-exceeds-capacity", bs=bs, write_req_capacity=capacity) from None
            raise


class _TypeErrorForBsRange(Planner):
    """Bug: a bs out of [0, 4096] raises TypeError (right message) instead of ValueError."""

    def validate(self, kwargs):
        try:
            return super().validate(kwargs)
        except PlanError as exc:
            if exc.error_id == "bs-range":
                raise TypeError(str(exc)) from None
            raise


class _ZeroDAccepted(Planner):
    """Bug: a 0-d tensor where a 1-D one is expected is viewed as 1-D (reshape(-1)), no error."""

    def launch(self, kwargs):
        super().launch({name: value.reshape(-1) if isinstance(value, torch.Tensor)
                        and value.dim() == 0 and name != TABLE_NAME else value
                        for name, value in kwargs.items()})


class _ZeroDIndexError(Planner):
    """Bug: reads shape[0] before validating, so a 0-d tensor raises IndexError."""

    def validate(self, kwargs):
        for name in (*REQUEST_INPUT_NAMES, TABLE_NAME, LUT_NAME):
            if isinstance(kwargs[name], torch.Tensor) and kwargs[name].dim() == 0:
                raise IndexError("tuple index out of range")
        return super().validate(kwargs)


class _Skips(Planner):
    """Not a mutant: one check never raises; validation goes on as if it had passed."""

    def skipped(self, exc: PlanError) -> str | None:
        """The argument whose check ``exc`` is skipped, or None."""
        raise NotImplementedError

    def stand_in(self, tensor: torch.Tensor, kwargs: dict) -> torch.Tensor:
        raise NotImplementedError

    def validate(self, kwargs):
        probe = dict(kwargs)
        while True:
            try:
                plan, _ = super().validate(probe)
            except PlanError as exc:
                name = self.skipped(exc)
                if name is None:
                    raise
                probe[name] = self.stand_in(probe[name], kwargs)
                continue
            return plan, BufferSet(kwargs, plan)  # plans on the arguments as given


class _DtypeCheckSkipped(_Skips):
    """Bug: the dtype of out_verify_enable is never checked (an int64 one is written as given)."""

    def skipped(self, exc):
        name = "out_verify_enable"
        return name if exc.error_id == "dtype" and f" {name} " in str(exc) else None

    def stand_in(self, tensor, kwargs):
        return torch.empty_like(tensor, dtype=torch.int32)


class _DeviceCheckSkipped(_Skips):
    """Bug: never checks that the tensors share out_verify_offsets_scratch's device."""

    def skipped(self, exc):
        if exc.error_id != "device":
            return None
        name = str(exc).split()[1]  # "kv-canary: NAME must be on ..."
        return LUT_NAME if name == LUT_TENSOR_NAME else name

    def stand_in(self, tensor, kwargs):
        return torch.empty_like(tensor, device=kwargs[DEVICE_REFERENCE].device)


bs_bound_off_by_one = launcher(_BsBoundOffByOne)
bs_capacity_inclusive = launcher(_BsCapacityInclusive)
message_typo = launcher(_MessageTypo)
checks_swapped = launcher(_ChecksSwapped)
type_error_for_bs_range = launcher(_TypeErrorForBsRange)
zero_d_accepted = launcher(_ZeroDAccepted)
zero_d_index_error = launcher(_ZeroDIndexError)
dtype_check_skipped = launcher(_DtypeCheckSkipped)
device_check_skipped = launcher(_DeviceCheckSkipped)
