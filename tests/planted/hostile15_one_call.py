"""Planted launches of the fifteenth hostile review for the one-call engine
(conformance/engine/one_call.py, tests/test_hostile15.py): each writes nothing (every output
keeps its fill: a wrong plan on every valid case) and, during its call, changes what one of the
engine's own functions runs without rebinding any name: it sets the function's ``__code__`` in
place, so every module and class namespace the engine snapshots still binds the very same
object. Each launch has ``undo()`` (the test process's own functions set back).
"""

from __future__ import annotations

from conformance.engine import one_call, verdict


def _nothing(self, diff):
    return None


def _no_outputs(data, run, got, poison, golden, rules, raised=False, allowed=None):
    return None


def _swapping(function, code):
    real = function.__code__

    def launch(**kw):
        function.__code__ = code

    def undo():
        function.__code__ = real
    launch.undo = undo
    return launch


def swaps_the_verdicts_add():
    """Writes nothing; gives ``VerdictData.add`` a body that records nothing (every difference of
    this and every later judgement in the process is dropped)."""
    return _swapping(verdict.VerdictData.add, _nothing.__code__)


def swaps_the_output_judge():
    """Writes nothing; gives the engine's ``_judge_outputs`` a body that judges no element."""
    return _swapping(one_call._judge_outputs, _no_outputs.__code__)
