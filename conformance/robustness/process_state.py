"""Process state beyond torch that a server's own computation on the calling thread and in its
process depends on (tests/test_hostile14.py), read and set back for
:data:`conformance.robustness.torch_state.SETTINGS`: the thread's floating-point environment
(rounding mode, subnormals flushed: ``torch.set_flush_denormal``, ``fesetround``), read on the
thread that calls the planner; whether Python's cyclic garbage collector runs, and its
thresholds; the Python profile and trace hooks of the calling thread and of every thread started
later; and every signal's Python handler (how a server stops: ``SIGTERM`` ignored, ``SIGINT``
swallowed), set back only from the main thread (``signal.signal`` raises ValueError elsewhere).
What else a server's process runs on (tests/test_hostile16.py): the umask (the modes of every file
it creates), its resource limits (``RLIMIT_NOFILE`` lowered: its sockets fail), the state of
Python's ``random`` and of numpy's global generator (a planner that draws from them shifts every
later draw of its caller) and the bindings of ``builtins`` (a planner that rebinds ``round`` or
``__import__`` changes every later caller's code).
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import hashlib
import os
import random
import resource
import signal
import sys
import threading

import numpy
import torch

from conformance.robustness.torch_settings import Fingerprint

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


def umask() -> str:
    """The process's umask, in octal (``"0022"``), read by setting it and setting it back
    (``os.umask`` is Python's only reader)."""
    value = os.umask(0o022)
    os.umask(value)
    return f"{value:04o}"


def set_umask(value: str) -> None:
    os.umask(int(value, 8))


RLIMITS = tuple(sorted({getattr(resource, name): name for name in sorted(dir(resource), reverse=True)
                        if name.startswith("RLIMIT_")}.values()))
"""Every resource limit this platform's ``resource`` module names, each once (Linux's
``RLIMIT_OFILE`` is ``RLIMIT_NOFILE``: the first name in sorted order is kept)."""


def rlimits() -> tuple[tuple[str, tuple[int, int]], ...]:
    """``(name, (soft, hard))`` of every limit of :data:`RLIMITS` (``resource.getrlimit``)."""
    return tuple((name, resource.getrlimit(getattr(resource, name))) for name in RLIMITS)


def set_rlimits(value: tuple[tuple[str, tuple[int, int]], ...]) -> None:
    """Set each limit that differs back (raises ValueError where a hard limit was lowered: only a
    privileged process raises one again)."""
    now = dict(rlimits())
    for name, limits in value:
        if now.get(name) != limits:
            resource.setrlimit(getattr(resource, name), limits)


def rlimits_changed(before, after) -> list[str]:
    """``"RLIMIT_NOFILE (1024, 4096) -> (16, 4096)"`` for each limit that differs between two
    :func:`rlimits` values."""
    was, now = dict(before), dict(after)
    return [f"{name} {was.get(name)} -> {now.get(name)}" for name in sorted(set(was) | set(now))
            if was.get(name) != now.get(name)]


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()[:12]


def random_state() -> Fingerprint:
    """Python's ``random`` module's global generator (``random.getstate()``)."""
    state = random.getstate()
    return Fingerprint(_digest(repr(state).encode()), state)


def set_random_state(state: Fingerprint) -> None:
    random.setstate(state.value)


def numpy_state() -> Fingerprint:
    """numpy's global generator (``numpy.random.get_state()``: the legacy ``RandomState`` that
    ``numpy.random.rand`` and its siblings draw from)."""
    state = numpy.random.get_state()
    return Fingerprint(_digest(repr(state[0]).encode() + state[1].tobytes()
                               + repr(state[2:]).encode()), state)


def set_numpy_state(state: Fingerprint) -> None:
    numpy.random.set_state(state.value)


def builtins_bindings() -> Fingerprint:
    """Every key of ``builtins`` (but ``_``, the interactive interpreter's last value) and what it
    binds, fingerprinted by identity (a binding is the planner's object: its ``__eq__`` may say
    anything). A key that is not a plain ``str`` (the planner's object: its ``__hash__`` and
    ``__eq__`` may say anything; ``dir(builtins)`` raises beside it) is named by its class and
    its identity, never hashed or compared (tests/test_hostile17.py)."""
    objects = {}
    for key, value in list(vars(builtins).items()):
        if type(key) is str:
            if key != "_":
                objects[key] = (key, value)
        else:
            objects[f"<a {_class_name(key)} key at {id(key):#x}>"] = (key, value)
    digest = hash(tuple(id(v) for _, v in objects.values())) ^ hash(tuple(objects))
    return Fingerprint(f"{len(objects)} names, hash {digest & 0xFFFF_FFFF:08x}", objects)


def _class_name(value) -> str:
    return type.__dict__["__name__"].__get__(type(value))


def set_builtins_bindings(state: Fingerprint) -> None:
    namespace = vars(builtins)
    for name, (key, _) in builtins_bindings().value.items():
        if name not in state.value:
            del namespace[key]
    for key, value in state.value.values():
        if namespace.get(key, _MISSING) is not value:
            namespace[key] = value


_MISSING = object()


def builtins_rebound(before: Fingerprint, after: Fingerprint) -> list[str]:
    """The names of ``builtins`` bound to another object (or added, or removed) between two
    :func:`builtins_bindings` values."""
    was, now = before.value, after.value
    return sorted(name for name in set(was) | set(now)
                  if was.get(name, (None, _MISSING))[1] is not now.get(name, (None, _MISSING))[1])
