"""Ninth hostile review: a slow planner that makes its yardsticks slower.

``slow``: the pure-Python planner plus 2 ms of work a call (the honest twin).
``slows_the_floors``: the same code, but each call, as it returns, installs a Python profile
function in its thread (``sys.setprofile``) that burns 50 us on every C call of a ``torch.Tensor``
method, and removes it as the next call starts. Between the planner's calls the bench's own loop
makes no such call, so its own figure is unchanged; every figure timed after it in the same
thread (the floors, which run after the planners, ``x.add_(1)`` included, and a later repeat's
pure-Python planner) pays 50 us per tensor op, so its ``x floor`` ratio shrinks by that factor.
Nothing is rebound, nothing written: the bench watches names, not the interpreter's hooks.

``borrows_an_input_through_numpy`` (corpus engine, tests/test_hostile9.py section 4) is here too.
"""

from __future__ import annotations

import sys
import time

import torch

from impls.offsets_planner.python_planner import launch as python_launch


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def slow(**kwargs) -> None:
    python_launch(**kwargs)
    _busy(0.002)


def _hook(frame, event, arg) -> None:
    if event == "c_call" and (isinstance(getattr(arg, "__self__", None), torch.Tensor)
                              or getattr(arg, "__objclass__", None) is torch._C.TensorBase):
        _busy(50e-6)  # a tensor method, bound (x.add_) or not (Tensor.add_(x, 1))


def slows_the_floors(**kwargs) -> None:
    sys.setprofile(None)
    try:
        python_launch(**kwargs)
        _busy(0.002)
    finally:
        sys.setprofile(_hook)


def borrows_an_input_through_numpy(**kwargs) -> None:
    """(corpus engine) Uses ``prefix_lens`` as scratch through numpy -- no version bump -- and puts
    its values back before computing the right plan: another stream reading the inputs meanwhile
    (spec §5: inputs are read-only) sees garbage."""
    view = kwargs["prefix_lens"].numpy()
    kept = view.copy()
    view[:] = -12345
    view[:] = kept
    python_launch(**kwargs)
