"""Planted planners of the seventeenth hostile review (tests/test_hostile17.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed where
tests/test_hostile16.py's checks did not read (:data:`HARMS`), or past the checks themselves
(:func:`changes_umask_after_its_last_call`, :func:`forges_its_state_report`,
:func:`prepends_a_shadowing_folder`).
"""

from __future__ import annotations

import builtins
import logging
import os
import random
import signal
import socket
import sys
import tempfile
import threading
import time
import types
import warnings

import numpy

from impls.offsets_planner.python_planner import launch as _launch


_SINK = open(os.devnull, "w")  # noqa: SIM115 - kept open for the process: never collected unclosed
"""The ``/dev/null`` that :data:`HARMS`'s ``silences_stdout`` makes ``sys.stdout``: one file for
the process, so that no ``ResourceWarning`` of an unclosed file fires when the harness has set
the stream back (collected during an import, it lands in the import system's globals)."""


def _swallow(*args) -> None:
    """An exception hook that prints nothing."""


HARMS = {
    "lowers_recursion_limit": lambda: sys.setrecursionlimit(200),
    "starves_other_threads": lambda: sys.setswitchinterval(50.0),
    "shortens_int_text": lambda: sys.set_int_max_str_digits(640),
    "shrinks_thread_stacks": lambda: threading.stack_size(64 * 1024),
    "swallows_uncaught_errors": lambda: setattr(sys, "excepthook", _swallow),
    "swallows_thread_errors": lambda: setattr(threading, "excepthook", _swallow),
    "silences_stdout": lambda: setattr(sys, "stdout", _SINK),
    "disables_logging": lambda: logging.disable(logging.CRITICAL),
    "times_out_sockets": lambda: socket.setdefaulttimeout(0.001),
    "blocks_sigterm": lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}),
    "arms_an_alarm": lambda: signal.alarm(3600),
    "rebinds_random_seed": lambda: setattr(random, "seed", lambda *a, **k: None),
    "rebinds_numpy_seed": lambda: setattr(numpy.random, "seed", lambda *a, **k: None),
    "turns_warnings_into_errors": lambda: warnings.simplefilter("error"),
    "replaces_json": lambda: sys.modules.__setitem__("json", types.ModuleType("json")),
    "adds_a_builtins_int_key": lambda: vars(builtins).__setitem__(1, "one"),
}
"""Planner name -> what it does to its process after the right plan:

* the recursion limit at 200 (its server's deep calls raise ``RecursionError``), the thread
  switch interval at 50 s (its other threads starve), ``str`` of an int of more than 640 digits
  refused, new threads on 64 KiB stacks;
* ``sys.excepthook`` / ``threading.excepthook`` that print nothing (its crashes vanish),
  ``sys.stdout`` on ``/dev/null``, every log record dropped (``logging.disable``), every new
  socket timing out after a millisecond;
* ``SIGTERM`` blocked on the calling thread (the processes it starts inherit the mask: its
  ``Popen.terminate()`` no longer stops them), ``SIGALRM`` due in an hour (its process then
  dies);
* ``random.seed`` and ``numpy.random.seed`` no-ops (``random.getstate`` unchanged: its seeded
  draws are no longer reproducible), every warning an exception, ``sys.modules["json"]`` an
  empty module (its next ``import json``), ``builtins`` given the key ``1`` (``dir(builtins)``
  raises ``TypeError``)."""


def harm_planners(harms: dict) -> dict:
    """A planner per entry of ``harms`` (name -> the harm, called after the right plan), by name."""
    def planner(name: str):
        def launch(**kwargs):
            _launch(**kwargs)
            harms[name]()
        launch.__name__ = launch.__qualname__ = name
        return launch
    return {name: planner(name) for name in harms}


globals().update(harm_planners(HARMS))

_LAST_CALL: list[float] = []


def changes_umask_after_its_last_call(**kwargs):
    """The right plan; a thread of its own sets the umask to 0 once no call came for 0.3 s: after
    the last case of the worker, whose state was read at that case's end."""
    _launch(**kwargs)
    first = not _LAST_CALL
    _LAST_CALL[:] = [time.monotonic()]
    if first:
        threading.Thread(target=_clear_umask_when_idle, daemon=True).start()


def _clear_umask_when_idle() -> None:
    while time.monotonic() - _LAST_CALL[0] < 0.3:
        time.sleep(0.05)
    os.umask(0)


def forges_its_state_report(**kwargs):
    """The right plan; then the umask is 0, and where the worker's state check is loaded (the
    isolation worker: the planner's own process) it reports nothing."""
    _launch(**kwargs)
    os.umask(0)
    checks = sys.modules.get("conformance.robustness.torch_state")
    if checks is not None:
        checks.changes = lambda before, after: []


SHADOW = os.path.join(tempfile.gettempdir(), "hostile17-shadow")
"""The folder :func:`prepends_a_shadowing_folder` puts first on ``sys.path``."""


def prepends_a_shadowing_folder(**kwargs):
    """The right plan; then a folder of its own, holding a ``statistics.py``, first on
    ``sys.path``: its caller's next ``import statistics`` runs the planner's file."""
    _launch(**kwargs)
    os.makedirs(SHADOW, exist_ok=True)
    with open(os.path.join(SHADOW, "statistics.py"), "w") as f:
        f.write("SHADOWED = True\n")
    if SHADOW not in sys.path:
        sys.path.insert(0, SHADOW)
