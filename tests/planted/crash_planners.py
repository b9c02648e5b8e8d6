"""Planners that crash or hang on one input, for the crash-isolation self-test
(``tests/test_isolate.py``). Never run them without ``--isolate`` (or on non-hazard cases).

    pytest conformance/ --planner tests.planted.crash_planners:crashy --isolate --isolate-timeout 5
"""

from __future__ import annotations

import ctypes
import time

import torch

from impls.offsets_planner.python_planner import launch as python_launch

HANG_PREFIX = 13
"""A request with this prefix makes :func:`crashy` hang."""


def crashy(**kwargs) -> None:
    """The pure-Python planner, except:

    * a live request whose prefix is past its row (prefix > max_seq_len, spec section 6) reads
      address 0, as an upstream-style kernel reads past the table: SIGSEGV;
    * a live request with prefix :data:`HANG_PREFIX` spins forever (a kernel that never finishes).
    """
    max_seq_len = kwargs["req_to_token"].shape[1]
    rows, prefix = kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist()
    for row, p in zip(rows, prefix):
        if row != 0 and p > max_seq_len:
            ctypes.string_at(0)  # segfault: the process dies with SIGSEGV
        if row != 0 and p == HANG_PREFIX:
            while True:
                time.sleep(0.05)
    python_launch(**kwargs)


def illegal_address(**kwargs) -> None:
    """On CUDA: the pure-Python planner, except that a live request whose prefix is past its row
    makes a kernel read 2^40 elements past ``prefix_lens`` (an illegal address: the CUDA context
    is lost). On the CPU it is :func:`crashy`."""
    prefix = kwargs["prefix_lens"]
    if prefix.device.type != "cuda":
        crashy(**kwargs)
        return
    max_seq_len = kwargs["req_to_token"].shape[1]
    rows, values = kwargs["req_pool_indices"].tolist(), prefix.tolist()
    if any(row != 0 and p > max_seq_len for row, p in zip(rows, values)):
        out = torch.empty(1, dtype=prefix.dtype, device=prefix.device)
        _read_far[(1,)](prefix, out)
        torch.cuda.synchronize(prefix.device)
    python_launch(**kwargs)


try:
    import triton
    import triton.language as tl

    @triton.jit
    def _read_far(ptr, out):
        """Reads 2^40 elements past ``ptr``: an illegal address on the GPU."""
        tl.store(out, tl.load(ptr + (1 << 40)))
except ImportError:  # without triton, illegal_address cannot run on CUDA (its test is GPU-only)
    _read_far = None


TRIGGER_PREFIX = 7
"""A request with this prefix sets off :func:`exits_zero` and :func:`interrupts`."""


def _triggered(kwargs) -> bool:
    return TRIGGER_PREFIX in kwargs["prefix_lens"].tolist()[: kwargs["req_pool_indices"].numel()]


def exits_zero(**kwargs) -> None:
    """The pure-Python planner, except that a request with prefix :data:`TRIGGER_PREFIX` ends the
    process with ``os._exit(0)`` mid-corpus: a run must not end green because of it."""
    if _triggered(kwargs):
        import os

        os._exit(0)
    python_launch(**kwargs)


def interrupts(**kwargs) -> None:
    """The pure-Python planner, except that a request with prefix :data:`TRIGGER_PREFIX` raises
    KeyboardInterrupt (as if the user pressed Ctrl-C): that case fails, the run goes on."""
    if _triggered(kwargs):
        raise KeyboardInterrupt("planted")
    python_launch(**kwargs)


def exits_badly_at_exit(**kwargs) -> None:
    """The pure-Python planner; its first call replaces ``os._exit`` in its process by one that
    ends with code 7, so the worker, told to end after its last case, exits 7: a process that
    does not end cleanly is that case's failure."""
    import os

    if not getattr(os._exit, "planted", False):
        real = os._exit

        def _exit(code: int) -> None:
            real(7)

        _exit.planted = True
        os._exit = _exit
    python_launch(**kwargs)
