"""A planner module's first import, judged like a call (tests/test_hostile20.py): before, an
environment variable (``LD_PRELOAD``, ``PYTHONPATH``) or an ``atexit`` handler (``os._exit(0)``:
a failing server's exit status becomes 0) that the module added while it was first imported was
taken for its libraries' own and no change, so a planner did its harm at import and stayed green.

The isolation worker now imports the heavy libraries an honest planner uses itself, before the
first case's state is read (:func:`warm_up`): torch, then Triton, Numba and ``numba.cuda`` where
installed, each in the mode the planners of :mod:`impls.kernel_modes` choose (``TRITON_INTERPRET``
and ``NUMBA_ENABLE_CUDASIM`` set by the same rule, before the framework reads them), and the
standard library's own ``atexit`` users (``logging``, ``multiprocessing.util``,
``weakref.finalize``). What these do on import is theirs, and done before any reading. What the
planner module's own import then adds (:func:`import_changes`) is a change of its first case,
named as the import's: a variable set in ``os.environ`` or from C (but
:data:`~conformance.robustness.import_state.LIBRARY_VARIABLES`), an ``atexit`` handler
registered. Loggers it makes stay no change (a library's ``logging.getLogger(__name__)``); any
other setting its import changes is read as before, at the end of the case.

A library of a planner that the worker does not import first and that registers an ``atexit``
handler or sets a variable when imported (``jax``, ``cupy``) fails the planner's first case, the
message naming the import: import it lazily, or name it in ``CONFORMANCE_IMPORT_FIRST``
(:data:`~conformance.engine.rerun.IMPORT_FIRST_ENV`, comma-separated module names: the worker
imports them after :data:`LIBRARIES`, and the run's results and rerun lines carry the variable).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys

from conformance.engine.rerun import IMPORT_FIRST_ENV

LIBRARIES = ("triton", "numba", "numba.cuda")
"""Imported by :func:`warm_up` when installed (after :mod:`impls.kernel_modes` chose their
modes): the kernel frameworks of this project's planners."""
STANDARD = ("logging", "multiprocessing.util", "weakref")
"""Standard modules that register an ``atexit`` handler when first imported (or, for
``weakref.finalize``, at the first finalizer): imported, and one finalizer made, by
:func:`warm_up`."""
_KEPT: list[object] = []
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def vouched(value: str | None) -> tuple[str, ...]:
    """The module names of ``CONFORMANCE_IMPORT_FIRST``'s ``value`` (comma-separated, blanks
    around each ignored).

    Raises:
        ValueError: a name is not a dotted Python module name.
    """
    names = tuple(n.strip() for n in (value or "").split(",") if n.strip())
    bad = [n for n in names if not _MODULE.fullmatch(n)]
    if bad:
        raise ValueError(f"{IMPORT_FIRST_ENV}: not a module name: {', '.join(map(repr, bad))}")
    return names


def warm_up() -> list[str]:
    """Import :data:`STANDARD`, :data:`LIBRARIES` (those installed) in the planners' modes, then
    the modules ``CONFORMANCE_IMPORT_FIRST`` names (:func:`vouched`); the names imported (a
    broken or missing one is left to the planner's own import to report).

    Raises:
        ValueError: ``CONFORMANCE_IMPORT_FIRST`` names something that is not a module name.
    """
    import weakref

    from impls.kernel_modes import choose_numba_simulator, choose_triton_mode

    for name in STANDARD:
        importlib.import_module(name)
    _KEPT.append(type("Kept", (), {})())
    weakref.finalize(_KEPT[-1], int)  # finalize registers its atexit hook once, at its first use
    done = []
    choose_triton_mode()
    choose_numba_simulator()
    for name in (*LIBRARIES, *vouched(os.environ.get(IMPORT_FIRST_ENV))):
        try:
            if importlib.util.find_spec(name.partition(".")[0]) is None:
                continue
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - broken install: the planner's own import reports it
            sys.modules.pop(name, None)
            continue
        done.append(name)
    return done


WHILE = "while the planner's module was first imported"
"""What each line of :func:`import_changes` starts with."""


def import_changes(environ_from, environ_to, c_from, c_to, settings_from: dict,
                   settings_to: dict) -> list[str]:
    """``while the planner's module was first imported: LD_PRELOAD set`` for each variable the
    import added (``os.environ``: :func:`~conformance.robustness.import_state.environ` values; C:
    :func:`~conformance.robustness.import_state.c_environ`'s), ``... : 1 atexit handler(s)
    registered`` (:func:`~conformance.robustness.runtime_state.import_settings` values)."""
    from conformance.robustness.runtime_state import ATEXIT

    out = [f"{WHILE}: environment variable {name} set"
           for name in sorted(set(environ_to[1]) - set(environ_from[1]))]
    out += [f"{WHILE}: environment variable {name} set from C (unseen by os.environ)"
            for name in sorted(set(c_to[1]) - set(c_from[1]))]
    was, now = settings_from.get(ATEXIT), settings_to.get(ATEXIT)
    if isinstance(was, int) and isinstance(now, int) and now != was:
        out.append(f"{WHILE}: atexit handlers (how many): {was} -> {now}")
    return out
