"""Planted planners of the fifteenth hostile review (tests/test_hostile15.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed in a way
conformance/robustness/process_state.py did not read (tests/test_hostile14.py's checks read
``gc.isenabled()``, not the collector's thresholds; no Python-level hook).

* :func:`zero_gc_threshold`: ``gc.set_threshold(0)``: "setting threshold0 to zero disables
  collection" (the ``gc`` module's documentation) while ``gc.isenabled()`` stays True: a
  server's reference cycles are never collected, as with ``gc.disable()``.
* :func:`leaves_a_profile_hook`: ``sys.setprofile(hook)`` on the calling thread: every later
  Python call and return of the server's thread runs the planner's hook (it sees the server's
  frames and arguments, and slows every call).
* :func:`swallows_sigterm_equal_to_anything`: tests/test_hostile14.py's ``SIGTERM`` ignored, by
  a handler object whose ``__eq__`` says it is the default handler: the settings were compared
  with ``==``, so the change read as none.
"""

from __future__ import annotations

import gc
import signal
import sys

from impls.offsets_planner.python_planner import launch as _launch

SEEN = []
"""What the hook saw: the name of every function called on the thread after the planner's call."""


def zero_gc_threshold(**kwargs):
    """The right plan; then the collector's first threshold is 0 (no automatic collection)."""
    _launch(**kwargs)
    gc.set_threshold(0)


def _hook(frame, event, arg):
    if event == "call" and len(SEEN) < 1000:
        SEEN.append(frame.f_code.co_name)


def leaves_a_profile_hook(**kwargs):
    """The right plan; then a profile hook of the planner's on the calling thread."""
    _launch(**kwargs)
    sys.setprofile(_hook)


class EqualToAnyHandler:
    """A signal handler that does nothing (the signal is swallowed) and says it equals every
    object: ``SIG_DFL == handler`` is True, so a comparison of the handlers before and after a
    call by ``==`` sees no change."""

    def __call__(self, signum, frame):
        return None

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def swallows_sigterm_equal_to_anything(**kwargs):
    """The right plan; then ``SIGTERM`` is handled by :class:`EqualToAnyHandler` (the server no
    longer stops when told to), a handler equal to the default it replaced."""
    _launch(**kwargs)
    signal.signal(signal.SIGTERM, EqualToAnyHandler())
