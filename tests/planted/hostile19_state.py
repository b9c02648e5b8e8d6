"""Planted planners of the nineteenth hostile review (tests/test_hostile19.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed where
tests/test_hostile18.py's checks did not read: :data:`HARMS` (now read:
conformance/robustness/runtime_state.py, torch_state.py's backend flags, outside_view.py's child
processes, import_state.py's C environment) and :data:`HOLES` (still not read).
"""

from __future__ import annotations

import atexit
import ctypes
import decimal
import faulthandler
import gc
import locale
import logging
import os
import signal
import sys
import threading
import time
import types
import warnings

import torch

from tests.planted.hostile17_state import harm_planners

COLLECTIONS: list[int] = []
"""How many collections the planner's ``gc.callbacks`` entry saw (its caller's)."""
_PIPES: list[int] = []
"""The pipe whose write end the planner makes the signal wakeup descriptor (kept open)."""
WATCHDOG_DELAY = [3600.0]
"""Seconds until :func:`exits_an_hour_later`'s watchdog ends the process (a test shortens it)."""
SHADOWED_MODULE = "colorsys"
"""The standard module :data:`HOLES`'s ``shadows_a_module_not_yet_imported`` answers."""


def _count_collections(phase: str, info: dict) -> None:
    if phase == "stop":
        COLLECTIONS.append(info["collected"])


def _swallow(*args, **kwargs) -> None:
    """A hook that shows nothing."""


def _leave_a_child() -> None:
    """A child that lives as long as its parent (at most 120 s), never reaped."""
    parent = os.getpid()
    if os.fork() == 0:
        deadline = time.monotonic() + 120
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.1)
        os._exit(0)


THREAD_LIFETIME = [3600.0]
"""Seconds :data:`HARMS`'s ``holds_its_callers_exit`` thread lives (a test shortens it)."""
STOP = threading.Event()
"""Set to end that thread at once (a test that calls the planner in its own process)."""


def _leave_a_thread() -> None:
    threading.Thread(target=STOP.wait, args=(THREAD_LIFETIME[0],), name="hostile19").start()


def _take_the_wakeup_fd() -> None:
    read, write = os.pipe()
    os.set_blocking(write, False)
    _PIPES[:] = [read, write]
    signal.set_wakeup_fd(write)


def _other_ctype() -> None:
    """LC_CTYPE to plain ``C`` (ASCII), or to ``C.UTF-8`` where it was ``C`` already."""
    now = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_ALL, "C.UTF-8" if now == "C" else "C")


def _no_attention_kernels() -> None:
    for enable in (torch.backends.cuda.enable_flash_sdp, torch.backends.cuda.enable_math_sdp,
                   torch.backends.cuda.enable_mem_efficient_sdp,
                   torch.backends.cuda.enable_cudnn_sdp):
        enable(False)


_LIBC = ctypes.CDLL(None)


def _setenv_from_c() -> None:
    _LIBC.setenv(b"HOSTILE19_FROM_C", b"1", 1)


HARMS = {
    "leaves_a_gc_callback": lambda: gc.callbacks.append(_count_collections),
    "exits_zero_at_exit": lambda: atexit.register(os._exit, 0),
    "hides_warnings": lambda: setattr(warnings, "showwarning", _swallow),
    "leaves_a_child_running": _leave_a_child,
    "holds_its_callers_exit": _leave_a_thread,
    "changes_the_locale": _other_ctype,
    "lowers_decimal_precision": lambda: setattr(decimal.getcontext(), "prec", 6),
    "silences_root_logger": lambda: logging.getLogger().setLevel(logging.CRITICAL),
    "takes_the_signal_wakeup_fd": _take_the_wakeup_fd,
    "disables_attention_kernels": _no_attention_kernels,
    "sets_a_variable_from_c": _setenv_from_c,
}
"""Planner name -> what it does to its process after the right plan:

* a ``gc.callbacks`` entry (the planner's code runs at every collection of its caller), an
  ``atexit`` handler that ends the process with status 0 (a server that exits 3 reports
  success), ``warnings.showwarning`` a no-op (its warnings vanish);
* a child process left running, never reaped (its caller's ``os.wait()`` finds it); a thread
  that is not a daemon left running for an hour (its caller's exit waits for it);
* ``LC_CTYPE`` set to ``C`` (its caller's next ``open(path, "w")`` cannot write ``é``),
  ``decimal``'s precision at 6 digits, the root logger at ``CRITICAL`` (its warnings vanish);
* the signal wakeup descriptor its own pipe (asyncio's loop of its caller never hears of a signal
  again), every scaled-dot-product-attention kernel off (its attention raises);
* ``HOSTILE19_FROM_C`` set with libc's ``setenv`` (``os.environ`` does not see it; every child
  its caller starts does)."""


def _shadow_a_module() -> None:
    fake = types.ModuleType(SHADOWED_MODULE)
    fake.SHADOWED = True
    sys.modules.setdefault(SHADOWED_MODULE, fake)


HOLES = {
    "adds_an_audit_hook": lambda: sys.addaudithook(_refuse_bind),
    "keeps_sigterm_with_faulthandler": lambda: faulthandler.register(signal.SIGTERM,
                                                                     chain=False),
    "exits_an_hour_later": lambda: faulthandler.dump_traceback_later(
        WATCHDOG_DELAY[0], exit=True, file=open(os.devnull, "w")),  # noqa: SIM115 - kept open
    "shadows_a_module_not_yet_imported": _shadow_a_module,
}
"""Planner name -> a harm no check reads yet (docs/robustness.md, "What is still not guaranteed"):

* an audit hook (``sys.addaudithook``: it cannot be listed nor removed) that refuses every
  ``socket.bind`` (its caller can no longer listen);
* ``faulthandler.register(SIGTERM, chain=False)``: a handler installed from C, which
  ``signal.getsignal`` does not show, so ``SIGTERM`` prints a traceback and no longer stops the
  caller;
* ``faulthandler.dump_traceback_later(3600, exit=True)``: the process exits an hour later (a
  C thread; nothing Python reads shows it);
* a stand-in in ``sys.modules`` for a module not yet imported (``colorsys``): the caller's next
  ``import colorsys`` gets it."""


def _refuse_bind(event: str, args) -> None:
    if event == "socket.bind":
        raise RuntimeError("refused")


globals().update(harm_planners({**HARMS, **HOLES}))
