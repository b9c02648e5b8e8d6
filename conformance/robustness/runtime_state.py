"""Yet more process state a server runs on, read and set back for
:data:`conformance.robustness.torch_state.SETTINGS` beside
:mod:`conformance.robustness.process_settings` (tests/test_hostile19.py): each was left changed
by a planner right in every byte, and its run was green.

* the objects ``gc.freeze`` moved out of the collector's reach (``gc.get_freeze_count``: the
  cycles its caller made garbage before are never collected; tests/test_hostile20.py);
* code the process runs later on its own: ``gc.callbacks`` (run at every collection of its
  caller), the number of ``atexit`` handlers (``atexit._ncallbacks``: one registered runs at its
  caller's exit, ``os._exit(0)`` there turns a failed server's exit status into success), the
  hooks ``warnings.showwarning`` / ``warnings.formatwarning`` (every warning of the caller),
  ``sys.displayhook`` and ``sys.breakpointhook`` (its ``breakpoint()``);
* the Python threads that are not daemons (the interpreter waits for each at exit: one a planner
  leaves running holds its caller's exit; it cannot be stopped from outside);
* the child processes of the process (``/proc/self/task/*/children``, Linux ``proc(5)``): a
  child a planner forked and left running, or left unreaped, is found by its caller's
  ``os.wait()`` and holds every descriptor it inherited (a listening socket's port stays bound);
  a new one is killed and reaped to set it back;
* the calling thread's locale (every category: ``LC_CTYPE`` set to ``C`` makes the caller's next
  ``open(path, "w")`` ASCII) and ``decimal``'s context (its precision, rounding, exponent
  limits and traps, and those of ``decimal.DefaultContext``: its signals raised or not; the
  flags a computation raises are not compared);
* ``logging``'s configuration and what each logger does with a record
  (:mod:`conformance.robustness.logging_state`);
* the signal wakeup descriptor (``signal.set_wakeup_fd``: asyncio's loop learns of its signals
  there; read and set back on the main thread only).

Each is read in the planner's own process (as every setting there: a planner that rebinds the
check can hide a change); a logger a planner module makes while it is first imported is taken
in by the isolation worker (:func:`with_import_additions`), an ``atexit`` handler it registers
then is named as the import's change (:mod:`conformance.robustness.first_import`).
"""

from __future__ import annotations

import atexit
import decimal
import gc
import locale
import os
import signal
import sys
import threading
import warnings

from conformance.robustness.logging_state import (logging_changed, logging_state,
                                                  set_logging_state)


def gc_callbacks() -> tuple[object, tuple]:
    """(the ``gc.callbacks`` list, its entries)."""
    return gc.callbacks, tuple(gc.callbacks)


def set_gc_callbacks(value) -> None:
    gc.callbacks = value[0]
    gc.callbacks[:] = value[1]


def set_freeze_count(value: int) -> None:
    """Unfreeze what a case froze (``gc.freeze``) where nothing was frozen at its start; the
    objects frozen before cannot be told from those it froze."""
    if value == 0 and gc.get_freeze_count():
        gc.unfreeze()


def list_changed(before, after) -> list[str]:
    """``replaced`` or ``N -> M entries`` between two (list, entries) values, by identity."""
    if before[0] is not after[0]:
        return ["the list replaced"]
    if len(before[1]) != len(after[1]) or any(a is not b for a, b in zip(before[1], after[1])):
        return [f"{len(before[1])} -> {len(after[1])} entries"]
    return []


def atexit_count() -> int:
    """How many ``atexit`` handlers were registered (CPython's ``atexit._ncallbacks``: Python lists
    none of them). CPython keeps the slot of a handler unregistered, so the count only grows (but
    ``atexit._clear``): a handler registered is seen, one of the caller's unregistered is not."""
    return atexit._ncallbacks()


def _no_setter(value) -> None:
    raise RuntimeError("cannot be set back from outside")


HOOKS = (("warnings", warnings, "showwarning"), ("warnings", warnings, "formatwarning"),
         ("sys", sys, "displayhook"), ("sys", sys, "breakpointhook"))


def hooks() -> tuple:
    return tuple(getattr(owner, attr) for _, owner, attr in HOOKS)


def set_hooks(value: tuple) -> None:
    for (_, owner, attr), obj in zip(HOOKS, value):
        setattr(owner, attr, obj)


def hooks_changed(before, after) -> list[str]:
    return [f"{name}.{attr}" for (name, _, attr), a, b in zip(HOOKS, before, after) if a is not b]


def threads() -> frozenset:
    """The Python threads alive now that are not daemons (the main thread aside): the
    interpreter joins each at exit, so one a planner leaves running holds its caller's exit."""
    main = threading.main_thread()
    return frozenset(t for t in threading.enumerate() if t is not main and _joined_at_exit(t))


def _joined_at_exit(thread: threading.Thread) -> bool:
    """Whether the interpreter joins ``thread`` at exit: not a daemon, or one whose ``daemon``
    flag was set after it started (``thread._daemonic = True``: CPython 3.11-3.12 took its lock
    into ``threading._shutdown_locks`` at its start, and ``threading._shutdown`` waits on each)."""
    if not thread.daemon:
        return True
    locks = getattr(threading, "_shutdown_locks", None)
    lock = getattr(thread, "_tstate_lock", None)
    return locks is not None and lock is not None and lock in locks


def threads_changed(before: frozenset, after: frozenset) -> list[str]:
    """``'name' left running`` for each thread ``after`` holds that ``before`` did not."""
    return [f"{t.name!r} left running" for t in sorted(after - before, key=lambda t: t.name)]


def child_processes() -> frozenset[int]:
    """The pids of this process's children (every thread's ``children`` file), running or not
    yet reaped."""
    out: set[int] = set()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as handle:
                out.update(int(p) for p in handle.read().split())
        except OSError:
            continue
    return frozenset(out)


def end_new_children(value: frozenset[int]) -> None:
    """Kill and reap every child that ``value`` does not hold (the call's own)."""
    for pid in child_processes() - value:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            continue


def children_changed(before: frozenset[int], after: frozenset[int]) -> list[str]:
    """``pid N left running`` for each child ``after`` holds that ``before`` did not (one that
    ended during the call is no change)."""
    return [f"pid {pid} left running (or unreaped)" for pid in sorted(after - before)]


CATEGORIES = tuple(name for name in ("LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
                                     "LC_MONETARY", "LC_MESSAGES") if hasattr(locale, name))


def locales() -> tuple[tuple[str, str], ...]:
    """(category, locale) of every category of :data:`CATEGORIES` (``setlocale(cat)`` only
    queries)."""
    return tuple((name, locale.setlocale(getattr(locale, name))) for name in CATEGORIES)


def locales_changed(before, after) -> list[str]:
    """``LC_CTYPE 'C.UTF-8' -> 'C'`` for each category that differs."""
    return [f"{name} {a!r} -> {b!r}" for (name, a), (_, b) in zip(before, after) if a != b]


def set_locales(value) -> None:
    for name, setting in value:
        locale.setlocale(getattr(locale, name), setting)


_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp")


def _context_fields(context: decimal.Context) -> tuple:
    return (*(getattr(context, f) for f in _FIELDS),
            tuple(sorted(s.__name__ for s, on in context.traps.items() if on)))


def decimal_contexts() -> tuple:
    """(the calling thread's context object, its fields and traps, ``DefaultContext``'s)."""
    context = decimal.getcontext()
    return context, _context_fields(context), _context_fields(decimal.DefaultContext)


def _set_fields(context: decimal.Context, fields: tuple) -> None:
    for name, value in zip(_FIELDS, fields):
        setattr(context, name, value)
    context.traps = {s: s.__name__ in fields[-1] for s in context.traps}


def set_decimal_contexts(value) -> None:
    decimal.setcontext(value[0])
    _set_fields(value[0], value[1])
    _set_fields(decimal.DefaultContext, value[2])


def decimal_changed(before, after) -> list[str]:
    out = [] if before[0] is after[0] else ["the context replaced (decimal.setcontext)"]
    for which, i in (("the context", 1), ("DefaultContext", 2)):
        out += [f"{which}.{name} {a!r} -> {b!r}" for name, a, b
                in zip((*_FIELDS, "traps"), before[i], after[i]) if a != b]
    return out


def wakeup_fd() -> int:
    """``signal.set_wakeup_fd``'s descriptor, read by setting it and setting it back (its only
    reader); ValueError off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        raise ValueError("the wakeup descriptor is read on the main thread only")
    fd = signal.set_wakeup_fd(-1)
    if fd != -1:
        signal.set_wakeup_fd(fd)
    return fd


def set_wakeup_fd(fd: int) -> None:
    signal.set_wakeup_fd(fd)


def import_settings() -> dict:
    """The settings of :data:`IMPORT_SETTINGS` now (read around a planner module's import)."""
    out = {}
    for name in IMPORT_SETTINGS:
        try:
            out[name] = SETTINGS[name][0]()
        except Exception:  # noqa: BLE001 - unreadable: nothing taken in
            out[name] = None
    return out


def with_import_additions(before: dict, imported_from: dict, imported_to: dict) -> dict:
    """``before`` (a case's starting snapshot) with what a planner module's first import did to
    :data:`IMPORT_SETTINGS` taken in (read around the import): ``atexit`` handlers it registered,
    loggers it made, are its libraries' own."""
    out = dict(before)
    if all(isinstance(d.get(ATEXIT), int) for d in (before, imported_from, imported_to)):
        out[ATEXIT] = before[ATEXIT] + imported_to[ATEXIT] - imported_from[ATEXIT]
    if all(isinstance(d.get(LOGGING), tuple) for d in (before, imported_from, imported_to)):
        made = {n: s for n, s in imported_to[LOGGING][1].items()
                if n not in imported_from[LOGGING][1]}
        handlers = {k: h for k, h in imported_to[LOGGING][2].items()
                    if k not in imported_from[LOGGING][2]}
        out[LOGGING] = (before[LOGGING][0], {**before[LOGGING][1], **made},
                        {**before[LOGGING][2], **handlers})
    return out


ATEXIT = "atexit handlers (how many)"
LOGGING = "logging configuration (loggers, their levels and handlers)"
IMPORT_SETTINGS = (ATEXIT, LOGGING)
"""The settings of :func:`with_import_additions`."""
SETTINGS = {
    "gc.callbacks": (gc_callbacks, set_gc_callbacks),
    "gc frozen objects (gc.freeze)": (gc.get_freeze_count, set_freeze_count),
    ATEXIT: (atexit_count, _no_setter),
    "warnings and sys hooks (showwarning, formatwarning, displayhook, breakpointhook)": (
        hooks, set_hooks),
    "child processes": (child_processes, end_new_children),
    "Python threads (not daemons)": (threads, _no_setter),
    "locale (this thread)": (locales, set_locales),
    "decimal context (this thread, DefaultContext)": (decimal_contexts, set_decimal_contexts),
    LOGGING: (logging_state, set_logging_state),
    "signal wakeup fd": (wakeup_fd, set_wakeup_fd),
}
"""Name -> (getter, setter): :data:`conformance.robustness.torch_state.SETTINGS` adds them."""
NAMED_CHANGES = {
    "gc.callbacks": ("changed:", list_changed),
    "warnings and sys hooks (showwarning, formatwarning, displayhook, breakpointhook)": (
        "replaced:", hooks_changed),
    "child processes": ("changed:", children_changed),
    "Python threads (not daemons)": ("changed:", threads_changed),
    "locale (this thread)": ("changed:", locales_changed),
    "decimal context (this thread, DefaultContext)": ("changed:", decimal_changed),
    LOGGING: ("changed:", logging_changed),
}
"""The settings above whose values hold the planner's objects, or name what differs."""
