"""A validated buffer set of the offsets planner: what stays the same between serving steps, its
memo key, and the per-step checks of the request tensors against it.

Spec section 4 reads only tensor *metadata* and two plain ints, never values. A server keeps the
*buffer set* (``req_to_token``, the LUT, the six outputs, the window and the capacity:
:data:`STABLE_NAMES`) between steps and hands the planner three new request tensors of a new
length bs every step. So:

* a buffer set is keyed (:func:`stable_key_of`) on ``(data_ptr, dtype, shape, stride)`` of the
  table and ``(data_ptr, dtype, shape, is_contiguous())`` of the LUT (or None) and of each output
  (the device where there is no data pointer) and on the two ints: every input of every check of
  spec section 4 that does not involve a request tensor. The memo of buffer sets
  (:mod:`impls.offsets_planner.validate_cache`) reads the key afresh on every call, so a tensor
  resized, re-strided, re-typed, moved or given new storage in place misses and is validated
  again in full;
* the request tensors are re-checked on every call by :meth:`BufferSet.plan_for`: int64, 1-D,
  contiguous, equal lengths bs, ``bs <= min(PLAN_BS_BLOCK_SIZE, write_req_capacity)``, on the
  buffer set's device. These are exactly the checks of spec section 4 that read a request tensor
  (items 1, 2, 3, 12, 15 and 16), given that the rest passed for this buffer set. When one fails, the
  full validator runs on the call's arguments and raises its error: the first failing check and its
  message are always the validator's own. A new bs or new request tensors never cost a full
  validation; the plan of each bs is built once per buffer set;
* :func:`bind_set` validates a buffer set once, without request tensors (for
  :func:`impls.offsets_planner.bind`).

A buffer set also holds the memo's fast-path guard (one C call,
:mod:`impls.offsets_planner.metadata_guard`; built again after :data:`_REBUILD_AFTER` failures in
a row) and keeps its tensors alive (so a data pointer in a key cannot be reused by another tensor
while the memo holds it). Planners keep their per-buffer-set launch records (Triton's prepared
launch, Numba's packed parameters) in :attr:`BufferSet.records`, so they are evicted with it.
"""

from __future__ import annotations

from dataclasses import fields
from operator import itemgetter

import torch

from impls.offsets_planner.constants import PLAN_BS_BLOCK_SIZE
from impls.offsets_planner.contract import (
    DEVICE_REFERENCE,
    LUT_NAME,
    OUTPUT_NAMES,
    REQUEST_INPUT_NAMES,
    SCALAR_NAMES,
    TABLE_NAME,
)
from impls.offsets_planner.metadata_guard import guard_for
from impls.offsets_planner.validate import LaunchPlan, validate_launch, zero_lut

STABLE_TENSOR_NAMES: tuple[str, ...] = (TABLE_NAME, LUT_NAME) + OUTPUT_NAMES
"""The buffer set's tensors in kernel-argument order: the table, the LUT, the six outputs."""
STABLE_NAMES: tuple[str, ...] = STABLE_TENSOR_NAMES + SCALAR_NAMES
"""Every launcher argument except the three request tensors."""

_INT64 = torch.int64
_STABLE = itemgetter(*STABLE_NAMES)  # one C call for the ten buffer-set arguments
_DATA_PTR = torch.Tensor.data_ptr
_REBUILD_AFTER = 16
"""Fast-path failures in a row (same objects, guard False) after which the guard is built again:
a grad mode or inference mode other than the one it was built in fails every check."""
# The memo's counters (impls.offsets_planner.validate_cache.stats); plan_for counts request_misses.
_STATS = {"misses": 0, "bypass": 0, "request_misses": 0}  # hits: see stats()


def stable_key(kw: dict) -> tuple:
    """The memo key of a buffer set (a dict holding at least :data:`STABLE_NAMES`): see
    :func:`stable_key_of`.

    Raises:
        TypeError, AttributeError, KeyError: as :func:`stable_key_of`, or a missing name.
    """
    return stable_key_of(*_STABLE(kw))


def stable_key_of(t, lut, a, b, c, d, e, f, swa, cap) -> tuple:
    """The memo key of a buffer set given positionally in :data:`STABLE_NAMES` order: for the
    table its data pointer (or, for a tensor with none, such as an empty one, its device), dtype,
    shape and stride; for the LUT (None when missing) and each output its data pointer (or device),
    dtype, shape and ``is_contiguous()``; then ``swa_window_size`` and ``verify_capacity``.

    That is every input of every check of spec section 4 that reads a buffer-set tensor, and all
    the launch reads of them: a 1-D tensor's stride matters only through its contiguity (the
    kernels index the LUT and the outputs as dense vectors), while the table's ``stride(0)`` is a
    kernel argument. A non-zero data pointer names the device too: CUDA's unified virtual
    addressing gives host memory and every device's memory distinct addresses, so a tensor moved
    to another device in place always changes its pointer.

    Raises:
        TypeError: a scalar that is not a plain ``int`` (its value could change under the key).
        AttributeError: an argument that is not a tensor.
    """
    if type(swa) is not int or type(cap) is not int:
        raise TypeError("memo keys plain ints only")
    # Flat and unrolled: these attribute reads are the whole cost of a hit.
    return (
        t.data_ptr() or t.device, t.dtype, t.shape, t.stride(),
        None if lut is None else (lut.data_ptr() or lut.device, lut.dtype, lut.shape,
                                  lut.is_contiguous()),
        a.data_ptr() or a.device, a.dtype, a.shape, a.is_contiguous(),
        b.data_ptr() or b.device, b.dtype, b.shape, b.is_contiguous(),
        c.data_ptr() or c.device, c.dtype, c.shape, c.is_contiguous(),
        d.data_ptr() or d.device, d.dtype, d.shape, d.is_contiguous(),
        e.data_ptr() or e.device, e.dtype, e.shape, e.is_contiguous(),
        f.data_ptr() or f.device, f.dtype, f.shape, f.is_contiguous(),
        swa, cap,
    )


class BufferSet:
    """One validated buffer set: what stays the same between serving steps.

    Attributes:
        kwargs: the ten launcher arguments other than the request tensors, as given.
        tensors: (req_to_token, lut_tensor, six outputs), the LUT resolved to the zero stand-in when
            None (spec section 4): the kernel-argument order after the request tensors.
        device: the outputs' device; request tensors must be on it.
        max_bs: ``min(PLAN_BS_BLOCK_SIZE, write_req_capacity)``: the largest bs that passes.
        records: per-planner launch records for this buffer set (keys chosen by the planner).
    """

    __slots__ = ("kwargs", "tensors", "device", "max_bs", "records", "used", "_plans", "_fields",
                 "objects", "scalars", "ptrs", "guard", "fast_misses")

    def __init__(self, kwargs: dict, plan: LaunchPlan) -> None:
        self.kwargs = {name: kwargs[name] for name in STABLE_NAMES}
        self.tensors = (kwargs[TABLE_NAME], plan.lut_tensor,
                        *[kwargs[name] for name in OUTPUT_NAMES])
        self.device = kwargs[DEVICE_REFERENCE].device
        self.max_bs = min(PLAN_BS_BLOCK_SIZE, plan.write_req_capacity)
        self.records: dict = {}
        self.used = 0
        self._fields = [(f.name, getattr(plan, f.name)) for f in fields(LaunchPlan)]
        # plan of each bs in [0, max_bs] (a validated plan's bs is in range), built on first use
        self._plans: list[LaunchPlan | None] = [None] * (self.max_bs + 1)
        self._plans[plan.bs] = plan
        # the fast path (module docstring): the objects as given, their data pointers, the guard
        self.objects = tuple(kwargs[name] for name in STABLE_TENSOR_NAMES)
        self.scalars = tuple(kwargs[name] for name in SCALAR_NAMES)
        present = [x for x in self.objects if x is not None]
        self.ptrs = tuple(_DATA_PTR(x) for x in present)
        self.fast_misses = 0
        self.guard = self._guard(present)

    def _guard(self, present: list) -> object:
        stand_in = torch.empty(0, dtype=_INT64, device=self.device)
        return guard_for([*present, stand_in, stand_in, stand_in],
                         [list(x.shape) for x in present] + [[None]] * 3,
                         [list(x.stride()) for x in present] + [[1]] * 3)

    def fast_failed(self) -> None:
        """Count a fast-path failure with the same objects; rebuild the guard after
        :data:`_REBUILD_AFTER` in a row (the grad mode it was built in has changed, say)."""
        self.fast_misses += 1
        if self.fast_misses >= _REBUILD_AFTER:
            self.fast_misses = 0
            self.guard = self._guard([x for x in self.objects if x is not None])

    def plan_for(self, req_pool_indices, prefix_lens, extend_seq_lens) -> LaunchPlan:
        """The plan for these request tensors: the per-step checks, else the full validator.

        Args:
            req_pool_indices, prefix_lens, extend_seq_lens: int64 [bs] on :attr:`device`.

        Raises:
            PlanError: the first failing check of spec section 4 for the whole call (the full
                validator's own error), when a per-step check fails.
        """
        a, b, c, dev = req_pool_indices, prefix_lens, extend_seq_lens, self.device
        try:
            shape = a.shape
            ok = (a.dtype is _INT64 and b.dtype is _INT64 and c.dtype is _INT64
                  and len(shape) == 1 and b.shape == shape and c.shape == shape
                  and a.is_contiguous() and b.is_contiguous() and c.is_contiguous()
                  and a.device == dev and b.device == dev and c.device == dev
                  and shape[0] <= self.max_bs)
        except Exception:  # not tensors: the validator says what is wrong
            ok = False
        if not ok:
            _STATS["request_misses"] += 1
            return validate_launch(**dict(zip(REQUEST_INPUT_NAMES, (a, b, c))), **self.kwargs)
        bs = shape[0]
        plan = self._plans[bs]  # 0 <= bs <= max_bs: a 1-D shape, checked above
        if plan is None:
            plan = self._plans[bs] = self._plan_of(bs)
        return plan

    def _plan_of(self, bs: int) -> LaunchPlan:
        # The validated plan with another bs: built without LaunchPlan.__init__'s frozen-dataclass
        # setattr path, which costs several us, since a varying-bs server meets many new bs.
        plan = object.__new__(LaunchPlan)
        for name, value in self._fields:
            object.__setattr__(plan, name, bs if name == "bs" else value)
        return plan


def _stand_ins(device: torch.device) -> dict:
    empty = torch.empty(0, dtype=_INT64, device=device)
    return dict.fromkeys(REQUEST_INPUT_NAMES, empty)


def bind_set(**stable) -> BufferSet:
    """Validate a buffer set once, without request tensors (for :func:`impls.offsets_planner.bind`).

    Runs the full validator with empty int64 request tensors on the outputs' device: every check
    of spec section 4 that does not read a request tensor, in order; the empty stand-ins pass every
    check that does. Also creates the zero stand-in LUT now, not during a later capture.

    Args:
        stable: the ten launcher arguments other than the request tensors (:data:`STABLE_NAMES`).

    Raises:
        PlanError: the first failing check of spec section 4 (item 0 and the buffer-set checks).
        TypeError: a missing or unknown argument.
    """
    missing = [n for n in STABLE_NAMES if n not in stable]
    extra = [n for n in stable if n not in STABLE_NAMES]
    if missing or extra:
        raise TypeError(f"bind_set: missing {missing}, unexpected {extra}")
    device = stable[DEVICE_REFERENCE].device
    zero_lut(device)
    return BufferSet(stable, validate_launch(**_stand_ins(device), **stable))
