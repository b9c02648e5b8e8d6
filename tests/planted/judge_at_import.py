"""A planner module whose top level rebinds the harness's judge, in whatever process imports it,
to one that finds no fault; its ``launch`` writes nothing. The judge must never be in that
process. When ``CONFORMANCE_PLANTED_MARK`` names a file, the import also writes ``pytest`` there
if the importing process has pytest loaded (the harness's process; the isolation worker and the
availability probe never load it)."""

from __future__ import annotations

import os
import sys

from conformance.engine import judge as _judge
from conformance.engine import runner as _runner


def _finds_nothing(*args, **kwargs):
    return None


_judge.judge = _runner.judge = _finds_nothing
_judge._Judging.fail = _finds_nothing
if os.environ.get("CONFORMANCE_PLANTED_MARK") and "_pytest" in sys.modules:
    with open(os.environ["CONFORMANCE_PLANTED_MARK"], "a") as mark:
        mark.write(f"pytest {os.getpid()}\n")


def launch(**kwargs) -> None:
    """Writes nothing."""
