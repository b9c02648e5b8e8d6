"""Fourteenth hostile review: wrong planners that compute the right plan in the harness's bytes
and harm their caller's process another way (tests/test_hostile14.py says what the harness made
of each). Each computes the pure-Python planner's plan, so only its one harm can fail it.

* :func:`squeezes_the_scalars`: leaves the caller's three one-element outputs 0-d
  (``squeeze_``): their values are right, but the caller's next ``out_verify_num_valid[0]`` raises
  IndexError. A change of the caller's tensor *objects*, not of their bytes: the judge reads its
  own tensors, and the isolation worker hands the planner the same object again.
* :func:`rebinds_functional`: rebinds ``torch.nn.functional.softmax`` (a wrong softmax) in the
  process it runs in: every later model of a server computes with it.
* :func:`flushes_denormals`: ``torch.set_flush_denormal(True)``: the calling thread's later float
  arithmetic (a server's model on that thread) flushes subnormals to zero.
* :func:`rounds_upward`: ``fesetround(FE_UPWARD)`` through ctypes: the calling thread's later
  float arithmetic rounds up, not to nearest.
* :func:`disables_gc`: ``gc.disable()``: a server's reference cycles are never collected.
* :func:`changes_directory`: ``os.chdir("/")``: a server's relative paths (its logs, its model
  files) now name other files.
* :func:`ignores_sigterm`: ``SIGTERM`` ignored: the server no longer stops when told to.
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal

import torch

from impls.offsets_planner.python_planner import launch as _launch

SCALARS = ("out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs")
FE_UPWARD = 0x800
"""glibc's x86-64 ``FE_UPWARD`` (``<fenv.h>``)."""


def squeezes_the_scalars(**kwargs):
    """The right plan; then each of the caller's three one-element output tensors is made 0-d in
    place (``squeeze_``): same storage, same value, but ``t[0]`` on it now raises. On a later call
    with an object it squeezed (the same object comes again) it plans through a 1-D view of it,
    so every step of a case is right; every other argument is planned on as given."""
    views = {name: kwargs[name].view(1) for name in SCALARS if id(kwargs[name]) in _SQUEEZED}
    _launch(**{**kwargs, **views})
    for name in SCALARS:
        tensor = kwargs[name]
        if tensor.shape == (1,):
            tensor.squeeze_()
            _SQUEEZED[id(tensor)] = tensor  # kept alive: its id stays its own


_SQUEEZED: dict[int, torch.Tensor] = {}


def _wrong_softmax(input, dim=None, *args, **kwargs):
    return torch.zeros_like(input)


def rebinds_functional(**kwargs):
    """The right plan; then ``torch.nn.functional.softmax`` is a function returning zeros."""
    _launch(**kwargs)
    torch.nn.functional.softmax = _wrong_softmax


def flushes_denormals(**kwargs):
    """The right plan; then subnormal floats flush to zero on this thread (FTZ/DAZ)."""
    _launch(**kwargs)
    torch.set_flush_denormal(True)


def rounds_upward(**kwargs):
    """The right plan; then this thread's floating-point rounding mode is upward (libm's
    ``fesetround``)."""
    _launch(**kwargs)
    ctypes.CDLL(None).fesetround(FE_UPWARD)


def disables_gc(**kwargs):
    """The right plan; then Python's cyclic garbage collector is off for the whole process."""
    _launch(**kwargs)
    gc.disable()


def changes_directory(**kwargs):
    """The right plan; then the process's working directory is ``/``."""
    _launch(**kwargs)
    os.chdir("/")


def ignores_sigterm(**kwargs):
    """The right plan; then ``SIGTERM`` is ignored by the whole process (main thread only: where
    ``signal.signal`` raises, the planner is harmless and stays so)."""
    _launch(**kwargs)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:
        pass
