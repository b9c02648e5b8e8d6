"""Process state beyond torch that a server's own computation on the calling thread and in its
process depends on (tests/test_hostile14.py), read and set back for
:data:`conformance.robustness.torch_state.SETTINGS`: the thread's floating-point environment
(rounding mode, subnormals flushed: ``torch.set_flush_denormal``, ``fesetround``), read on the
thread that calls the planner; whether Python's cyclic garbage collector runs, and its
thresholds; the Python profile and trace hooks of the calling thread and of every thread started
later; and every signal's Python handler (how a server stops: ``SIGTERM`` ignored, ``SIGINT``
swallowed), set back only from the main thread (``signal.signal`` raises ValueError elsewhere).
"""

from __future__ import annotations

import ctypes
import gc
import signal
import sys
import threading

import torch

_LIBC = ctypes.CDLL(None)
"""The process's C library (``fegetround`` / ``fesetround``: C99 ``<fenv.h>``)."""
_SUBNORMAL = [5e-324]
"""The smallest subnormal double, kept in a list so that no compiler folds :func:`float_env`'s
product."""


def float_env() -> tuple[int, bool]:
    """This thread's floating-point environment: (``fegetround()``, whether subnormals are
    flushed to zero). The smallest subnormal times 1 is itself unless FTZ or DAZ is set (x86
    MXCSR, AArch64 FPCR), as ``torch.set_flush_denormal(True)`` does."""
    return (_LIBC.fegetround(), _SUBNORMAL[0] * 1.0 == 0.0)


def set_float_env(value: tuple[int, bool]) -> None:
    if _LIBC.fesetround(value[0]) != 0:
        raise RuntimeError("fesetround refused the rounding mode")
    torch.set_flush_denormal(value[1])


def set_gc(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()


def gc_thresholds() -> tuple[int, ...]:
    """The cyclic collector's thresholds (``gc.get_threshold``). ``gc.set_threshold(0)``
    "disables collection" (the ``gc`` module's documentation) while ``gc.isenabled()`` stays
    True: a server's reference cycles are then never collected, as after ``gc.disable()``
    (tests/test_hostile15.py)."""
    return gc.get_threshold()


def set_gc_thresholds(value: tuple[int, ...]) -> None:
    gc.set_threshold(*value)


def python_hooks() -> tuple[object, object, object, object]:
    """(``sys.getprofile()``, ``sys.gettrace()``) of the calling thread, then
    (``threading.getprofile()``, ``threading.gettrace()``), the hooks of every thread started
    later: a hook a planner leaves runs its code at every later Python call of its caller's
    thread (or threads), sees their frames and arguments, and slows each call
    (tests/test_hostile15.py)."""
    return sys.getprofile(), sys.gettrace(), threading.getprofile(), threading.gettrace()


HOOKS = ("profile (this thread)", "trace (this thread)", "profile (new threads)",
         "trace (new threads)")
"""The hooks :func:`python_hooks` reads, in its order."""


def hooks_changed(before, after) -> list[str]:
    """The names of the hooks (:data:`HOOKS`) that differ between two :func:`python_hooks`
    values, by identity (a hook is the planner's object: its ``__eq__`` may say anything)."""
    return [name for name, a, b in zip(HOOKS, before, after) if a is not b]


def set_python_hooks(value: tuple[object, object, object, object]) -> None:
    sys.setprofile(value[0])
    sys.settrace(value[1])
    threading.setprofile(value[2])
    threading.settrace(value[3])


def handlers() -> tuple[tuple[int, object], ...]:
    """Every signal's Python-level handler (``signal.getsignal``), by signal number: a planner
    that installs one (``SIGTERM`` ignored, ``SIGINT`` swallowed) changes how its server stops."""
    out = []
    for sig in sorted(signal.valid_signals()):
        try:
            out.append((int(sig), signal.getsignal(sig)))
        except (OSError, ValueError):
            continue
    return tuple(out)


def set_handlers(value: tuple[tuple[int, object], ...]) -> None:
    """Install ``value``'s handlers again (main thread only: ``signal.signal`` raises elsewhere;
    a handler installed from C, ``None``, cannot be)."""
    now = dict(handlers())
    for number, handler in value:
        if now.get(number) is not handler:
            if handler is None:
                raise ValueError(f"{_signal_name(number)}: a handler installed outside Python")
            signal.signal(number, handler)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def handlers_changed(before, after) -> list[str]:
    """The names of the signals whose handler differs between two :func:`handlers` values."""
    was, now = dict(before), dict(after)
    return [_signal_name(n) for n in sorted(set(was) | set(now)) if was.get(n) is not now.get(n)]
