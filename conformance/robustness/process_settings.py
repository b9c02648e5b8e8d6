"""More process state a server's own code runs on, read and set back for
:data:`conformance.robustness.torch_state.SETTINGS` beside
:mod:`conformance.robustness.process_state` (tests/test_hostile17.py): each was left changed by a planner right in every byte, and its run
was green.

* the interpreter's limits: the recursion limit (lowered: a server's deep calls raise
  ``RecursionError``), the thread switch interval (raised: its other threads starve), the
  longest int ``str`` converts (lowered: its ``str`` of a large int raises), the stack size of
  new threads (shrunk: its next threads overflow);
* what the process does with its errors, its output and its sockets: ``sys.excepthook``,
  ``threading.excepthook`` and ``sys.unraisablehook`` (replaced: its crashes are swallowed), the
  standard streams (replaced: its prints go elsewhere), ``logging.disable`` (its logs vanish),
  the default socket timeout (its sockets time out);
* signals that are not handlers: the calling thread's signal mask (``SIGTERM`` blocked: every
  process the server starts inherits it, and its ``terminate()`` stops none) and the interval
  timers (``signal.alarm(3600)``: the process dies of ``SIGALRM`` an hour later), read as armed
  or not and their interval;
* the warnings filters (``simplefilter("error")``: its next warning raises) and the modules of
  ``sys.modules`` (one replaced or removed; one imported since is no change, nor Triton's
  ``__triton_launcher``: :data:`LOADER_MODULES`);
* the bindings of the public callables of ``random`` and ``numpy.random``: ``random.seed``
  rebound to a no-op leaves :func:`random.getstate` as it was (tests/test_hostile16.py reads
  that), yet the caller's ``random.seed(7)`` no longer seeds;
* the parent-death signal (``prctl(PR_SET_PDEATHSIG)``, tests/test_hostile20.py);
* the flags every later extension module is loaded with (``sys.setdlopenflags``:
  ``RTLD_GLOBAL`` makes the symbols of the caller's next extensions interpose on every library
  loaded after them; tests/test_hostile21.py).
"""

from __future__ import annotations

import ctypes
import logging
import random
import signal
import socket
import sys
import threading
import warnings

import numpy.random

from conformance.robustness.torch_settings import (Fingerprint, public_callables, rebound_callables,
                                                  set_public_callables)


def thread_stack_size() -> int:
    """The stack size of threads started later (``threading.stack_size()``, which resets it to
    the default when read: set back at once)."""
    size = threading.stack_size()
    threading.stack_size(size)
    return size


def int_max_str_digits() -> int | None:
    """``sys.get_int_max_str_digits()`` (Python 3.11 on; None before)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return None if get is None else get()


def set_int_max_str_digits(value: int | None) -> None:
    if value is not None:
        sys.set_int_max_str_digits(value)


ERROR_HOOKS = ("sys.excepthook", "threading.excepthook", "sys.unraisablehook")
STREAMS = ("sys.stdin", "sys.stdout", "sys.stderr")


_OWNERS = {"sys": sys, "threading": threading}


def _objects(names: tuple[str, ...]) -> tuple:
    """The objects ``names`` (``"sys.stdout"``, ...) bind now."""
    return tuple(getattr(_OWNERS[o], a) for o, a in (n.split(".") for n in names))


def _setter(names: tuple[str, ...]):
    def set_back(value: tuple) -> None:
        for name, obj in zip(names, value):
            owner, attr = name.split(".")
            setattr(_OWNERS[owner], attr, obj)
    return set_back


def _lister(names: tuple[str, ...]):
    """The names whose object differs between two values, by identity (the planner's objects)."""
    return lambda before, after: [n for n, a, b in zip(names, before, after) if a is not b]


def error_hooks() -> tuple:
    return _objects(ERROR_HOOKS)


def streams() -> tuple:
    return _objects(STREAMS)


set_error_hooks, error_hooks_changed = _setter(ERROR_HOOKS), _lister(ERROR_HOOKS)
set_streams, streams_changed = _setter(STREAMS), _lister(STREAMS)


def logging_disabled() -> int:
    """The level ``logging.disable`` set (0: none)."""
    return logging.root.manager.disable


def signal_mask() -> tuple[str, ...]:
    """The calling thread's blocked signals, by name."""
    return tuple(sorted(s.name if isinstance(s, signal.Signals) else str(s)
                        for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))


def set_signal_mask(value: tuple[str, ...]) -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK,
                           [getattr(signal, n) if n.startswith("SIG") else int(n) for n in value])


TIMERS = ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")


def timers() -> tuple[tuple[str, bool, float], ...]:
    """(timer, armed, interval) of every interval timer (``signal.getitimer``): what remains of
    an armed one's delay is not compared (it runs down), whether it is armed is."""
    return tuple((name, *_armed(signal.getitimer(getattr(signal, name)))) for name in TIMERS)


def _armed(value: tuple[float, float]) -> tuple[bool, float]:
    return value[0] > 0, value[1]


def timers_changed(before, after) -> list[str]:
    """``ITIMER_REAL armed`` (or ``disarmed``, or ``interval 0.0 -> 5.0``) for each timer that
    differs between two :func:`timers` values."""
    out = []
    for (name, armed, interval), (_, now_armed, now_interval) in zip(before, after):
        if armed != now_armed:
            out.append(f"{name} {'armed' if now_armed else 'disarmed'}")
        if interval != now_interval:
            out.append(f"{name} interval {interval} -> {now_interval}")
    return out


def set_timers(value: tuple[tuple[str, bool, float], ...]) -> None:
    """Disarm a timer the case armed; one it disarmed cannot be set back (its delay is lost)."""
    for name, armed, interval in value:
        which = getattr(signal, name)
        if _armed(signal.getitimer(which)) != (armed, interval):
            if armed:
                raise RuntimeError(f"{name}: a timer the case disarmed")
            signal.setitimer(which, 0)


def warning_filters() -> tuple:
    """(the ``warnings.filters`` list, its entries): ``simplefilter("error")`` makes every later
    warning of the process an exception, ``"ignore"`` hides them all."""
    return warnings.filters, tuple(warnings.filters)


def set_warning_filters(value: tuple) -> None:
    warnings.filters = value[0]
    warnings.filters[:] = value[1]
    warnings._filters_mutated()


def warning_filters_changed(before, after) -> list[str]:
    """What differs between two :func:`warning_filters` values, by identity."""
    if before[0] is not after[0]:
        return ["the list replaced"]
    if len(before[1]) != len(after[1]) or any(a is not b for a, b in zip(before[1], after[1])):
        return [f"{len(before[1])} -> {len(after[1])} filters, the first now "
                f"{after[1][0][0] if after[1] else None!r}"]
    return []


def modules() -> dict:
    """``sys.modules`` by identity: a module imported later is no change, one replaced or removed
    is (``sys.modules["json"]`` replaced: the caller's next ``import json`` gets the planner's)."""
    return dict(sys.modules)


def set_modules(value: dict) -> None:
    for name, module in value.items():
        if sys.modules.get(name) is not module and name not in LOADER_MODULES:
            sys.modules[name] = module


LOADER_MODULES = frozenset({"__triton_launcher"})
"""Names a library rebinds in ``sys.modules`` on its own, which no caller's ``import`` names:
Triton 3.6 loads each newly compiled kernel's launcher as the module ``__triton_launcher``,
replacing the last one, on every first launch of a kernel (a compiled run's first case of each
design failed on it: ``reports/gpu/2026-12-06-f/``). Not compared."""


def modules_changed(before: dict, after: dict) -> list[str]:
    """The modules of ``before`` that ``after`` no longer holds as the same object, but
    :data:`LOADER_MODULES`."""
    return sorted(name for name, module in before.items()
                  if after.get(name) is not module and name not in LOADER_MODULES)


RANDOM_MODULES = (("random", random), ("numpy.random", numpy.random))
"""The modules of the global generators whose public callables a planner must not rebind."""


def random_bindings() -> Fingerprint:
    """Every public callable of :data:`RANDOM_MODULES`, by (module, name), by identity."""
    return public_callables(RANDOM_MODULES)


_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_GET_PDEATHSIG = 1, 2


def death_signal() -> int | None:
    """The parent-death signal (``prctl(PR_GET_PDEATHSIG)``, Linux; None elsewhere): cleared, a
    server its supervisor started with one outlives it (and a worker its shepherd)."""
    value = ctypes.c_int(0)
    if _LIBC.prctl(PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0) != 0:
        return None
    return value.value


def set_death_signal(value: int | None) -> None:
    if value is not None:
        _LIBC.prctl(PR_SET_PDEATHSIG, value, 0, 0, 0)


def set_random_bindings(state: Fingerprint) -> None:
    set_public_callables(RANDOM_MODULES, state)


random_rebound = rebound_callables


SETTINGS = {
    "recursion limit": (sys.getrecursionlimit, sys.setrecursionlimit),
    "thread switch interval": (sys.getswitchinterval, sys.setswitchinterval),
    "int max str digits": (int_max_str_digits, set_int_max_str_digits),
    "thread stack size": (thread_stack_size, threading.stack_size),
    "error hooks": (error_hooks, set_error_hooks),
    "standard streams": (streams, set_streams),
    "logging disabled level": (logging_disabled, logging.disable),
    "socket default timeout": (socket.getdefaulttimeout, socket.setdefaulttimeout),
    "signal mask (this thread)": (signal_mask, set_signal_mask),
    "interval timers": (timers, set_timers),
    "random and numpy.random bindings": (random_bindings, set_random_bindings),
    "warnings filters": (warning_filters, set_warning_filters),
    "sys.modules": (modules, set_modules),
    "parent death signal (prctl)": (death_signal, set_death_signal),
    "dlopen flags (sys.getdlopenflags)": (sys.getdlopenflags, sys.setdlopenflags),
}
"""Name -> (getter, setter): :data:`conformance.robustness.torch_state.SETTINGS` adds them."""
NAMED_CHANGES = {"error hooks": ("replaced:", error_hooks_changed),
                 "standard streams": ("replaced:", streams_changed),
                 "interval timers": ("changed:", timers_changed),
                 "random and numpy.random bindings": ("rebound", random_rebound),
                 "warnings filters": ("changed:", warning_filters_changed),
                 "sys.modules": ("replaced or removed", modules_changed)}
"""The settings above whose values hold the planner's objects: compared by identity, the
change naming what was replaced (:data:`conformance.robustness.torch_state.NAMED_CHANGES`)."""
