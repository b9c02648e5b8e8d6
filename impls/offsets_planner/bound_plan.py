"""A bound plan: validate the buffer set once, then plan each serving step from its three tensors.

A server keeps ``req_to_token``, the LUT, the six output buffers, the window and the capacity for
its whole life and hands the planner new ``req_pool_indices``, ``prefix_lens`` and
``extend_seq_lens`` every step. :func:`bind` validates the first group once (spec section 4, with
empty request tensors standing in) and returns a :class:`BoundPlan`, whose call re-checks only what
can change per step (:meth:`impls.offsets_planner.buffer_set.BufferSet.plan_for`: dtype, 1-D, contiguity,
lengths, bs range and capacity, device of the three tensors; on a failure the full validator runs
and raises the spec's first error with its exact message) and then launches.

The buffer set must not be changed in place (resized, re-strided, given new storage) after binding:
bind again instead. Values may change freely (the table and LUT are read on the device at each
launch, so a CUDA graph that captured a bound call sees new values on replay).

:class:`BoundLauncher` is the same thing in the launcher's shape (spec section 3): it binds on first
use per buffer set and calls the bound plan; ``triton-bound`` and ``numba-cuda-bound`` are built
from it (:mod:`impls.offsets_planner.triton_bound_planner`, :mod:`impls.offsets_planner.numba_cuda_bound_planner`) so that the
whole corpus runs through the bound path.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from types import ModuleType

import torch

from impls.offsets_planner.buffer_set import STABLE_NAMES, BufferSet, bind_set, stable_key, stable_key_of
from impls.offsets_planner.contract import ARGUMENT_NAMES, REQUEST_INPUT_NAMES
from impls.offsets_planner.validate import validate_launch


class BoundPlan:
    """A planner bound to one buffer set; call it with the three request tensors of a step.

    Attributes:
        buffers: the validated :class:`~impls.offsets_planner.buffer_set.BufferSet`.
        planner: the planner module (exports ``launch_validated``).
        check: ``check(req_pool_indices, prefix_lens, extend_seq_lens) -> LaunchPlan``, the
            per-step validation alone (what a call does before it launches): the buffer set's
            :meth:`~impls.offsets_planner.buffer_set.BufferSet.plan_for` itself, so that a server's per-step
            check costs no extra call. Raises PlanError, the first failing check of spec section 4
            for the whole call.
    """

    __slots__ = ("buffers", "planner", "check", "_launch")

    def __init__(self, planner: ModuleType, buffers: BufferSet) -> None:
        self.planner, self.buffers = planner, buffers
        self._launch = planner.launch_validated
        self.check = buffers.plan_for

    def __call__(self, req_pool_indices: torch.Tensor, prefix_lens: torch.Tensor,
                 extend_seq_lens: torch.Tensor) -> None:
        """Plan one step: int64 [bs] tensors on the buffer set's device, bs <= write capacity.

        Raises:
            PlanError: the first failing check of spec section 4 (nothing is launched).
        """
        plan = self.check(req_pool_indices, prefix_lens, extend_seq_lens)
        self._launch((plan, self.buffers), req_pool_indices, prefix_lens, extend_seq_lens)


def planner_module(planner: str | ModuleType) -> ModuleType:
    """The built-in planner module of ``planner`` (a name such as ``triton``, or the module).

    Raises:
        UnknownPlanner, PlannerUnavailable: as :func:`impls.offsets_planner.registry.get_planner`.
        TypeError: the planner has no ``launch_validated`` entry (it cannot be bound).
    """
    if isinstance(planner, str):
        from impls.offsets_planner.registry import get_planner

        planner = inspect.getmodule(get_planner(planner))
    if not callable(getattr(planner, "launch_validated", None)):
        raise TypeError(f"planner {getattr(planner, '__name__', planner)!r} cannot be bound: it "
                        f"has no launch_validated(validated, req_pool_indices, prefix_lens, "
                        f"extend_seq_lens)")
    return planner


def bind(planner: str | ModuleType, **buffer_set) -> BoundPlan:
    """Bind ``planner`` to a buffer set, validated once.

    Args:
        planner: ``triton``, ``numba-cuda``, ``python`` or such a module.
        buffer_set: the ten launcher arguments other than the request tensors, by their names in
            spec section 3 (``req_to_token``, ``full_to_swa_index_mapping``, the six ``out_*``
            buffers, ``swa_window_size``, ``verify_capacity``).

    Returns:
        A :class:`BoundPlan`: ``bound(req_pool_indices, prefix_lens, extend_seq_lens)``.

    Raises:
        PlanError: the first failing check of spec section 4 that does not read a request tensor.
        TypeError: a missing or unexpected argument, or a planner that cannot be bound.
    """
    module = planner_module(planner)
    return BoundPlan(module, bind_set(**buffer_set))


class BoundLauncher:
    """A launcher (spec section 3) that binds ``planner`` on first use per buffer set, then calls
    the bound plan. Bound plans are kept in an LRU of :data:`MAX_BOUND` entries (by
    :func:`impls.offsets_planner.buffer_set.stable_key`, so a buffer set changed in place binds again)."""

    MAX_BOUND = 64

    def __init__(self, planner: ModuleType) -> None:
        self.planner = planner_module(planner)
        self._bound: OrderedDict[tuple, BoundPlan] = OrderedDict()

    def __call__(self, launcher_kwargs: dict) -> None:
        """Plan the 13 arguments of spec section 3 (a dict) through a bound plan.

        Raises:
            PlanError: the first failing check of spec section 4, as the unbound planner raises it.
        """
        request = [launcher_kwargs[name] for name in REQUEST_INPUT_NAMES]
        try:
            key = stable_key(launcher_kwargs)
        except Exception:  # not keyable: bind fresh (the validator then reports what is wrong)
            key = None
        bound = None if key is None else self._bound.get(key)
        if bound is None:
            bound = self._bind(key, launcher_kwargs)
        else:
            self._bound.move_to_end(key)
        bound(*request)

    def plan_args(self, rpi, prefix, extend, t, lut, a, b, c, d, e, f, swa, cap) -> None:
        """:meth:`__call__` of the 13 arguments given positionally in the order of
        :data:`impls.offsets_planner.contract.ARGUMENT_NAMES`: a hit costs the memo key and the per-step checks,
        as the unbound planner's :func:`impls.offsets_planner.validate_cache.lookup_args` does (no dict, no LRU
        reordering; the LRU order is kept by misses only)."""
        try:
            bound = self._bound.get(stable_key_of(t, lut, a, b, c, d, e, f, swa, cap))
        except Exception:  # not keyable: the dict path says what is wrong
            bound = None
        if bound is None:
            self(dict(zip(ARGUMENT_NAMES, (rpi, prefix, extend, t, lut, a, b, c, d, e, f, swa,
                                           cap))))
            return
        bound(rpi, prefix, extend)

    def _bind(self, key: tuple | None, launcher_kwargs: dict) -> BoundPlan:
        stable = {name: launcher_kwargs[name] for name in STABLE_NAMES}
        try:
            bound = bind(self.planner, **stable)
        except Exception:
            # Spec section 4 orders request-tensor checks between buffer-set checks: the full
            # validator on the whole call raises the error the unbound planner would.
            validate_launch(**launcher_kwargs)
            raise
        if key is not None:
            self._bound[key] = bound
            while len(self._bound) > self.MAX_BOUND:
                self._bound.popitem(last=False)
        return bound


def bound_launcher(planner: ModuleType):
    """``planner``'s launcher through a :class:`BoundLauncher`: the same keyword-only signature
    (spec section 3, checked against the planner's own), arguments, outputs and errors; what the
    ``*-bound`` planners of :mod:`impls.offsets_planner.registry` export as ``launch``. Its parameters are passed
    on positionally (:meth:`BoundLauncher.plan_args`), so that a call in the launcher's shape costs
    what the unbound planner's does."""
    through = BoundLauncher(planner)
    plan_args = through.plan_args

    def launch(*, req_pool_indices, prefix_lens, extend_seq_lens, req_to_token,
               full_to_swa_index_mapping, out_verify_offsets_scratch, out_write_offsets,
               out_write_seed_slot_indices, out_verify_num_valid, out_verify_enable,
               out_write_num_valid_reqs, swa_window_size, verify_capacity) -> None:
        plan_args(req_pool_indices, prefix_lens, extend_seq_lens, req_to_token,
                  full_to_swa_index_mapping, out_verify_offsets_scratch, out_write_offsets,
                  out_write_seed_slot_indices, out_verify_num_valid, out_verify_enable,
                  out_write_num_valid_reqs, swa_window_size, verify_capacity)

    if tuple(inspect.signature(launch).parameters) != ARGUMENT_NAMES:
        raise AssertionError("bound_launcher's parameters are not spec section 3's, in order")
    launch.__signature__ = inspect.signature(planner.launch)
    launch.__annotations__ = dict(planner.launch.__annotations__)
    launch.__doc__ = (f":func:`{planner.__name__}.launch` through "
                      f":class:`impls.offsets_planner.bound_plan.BoundLauncher` (spec sections 3 to 5).")
    launch.__module__ = planner.__name__.replace("_planner", "_bound_planner")
    launch.through = through  # its bound plans (tests read them)
    return launch
