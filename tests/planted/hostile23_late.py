"""Planners that are right while their call runs and wrong after it returned
(tests/test_hostile23.py): the outputs the judge reads when the call returns are the pure-Python
planner's, then a daemon thread of the planner's worker writes into them (``late_write``) or
ends the worker (``late_exit``). In a server the next step reads the corrupted plan, or the
process is gone. ``pytest conformance/`` fails such a case (its storages are read once more and
the worker's death is watched until the next case, conformance/robustness/after_last_call.py);
``python -m conformance fuzz`` read neither."""

from __future__ import annotations

import os
import threading
import time

from impls.offsets_planner.python_planner import launch as python_launch


def _later(action, delay: float) -> None:
    threading.Thread(target=lambda: (time.sleep(delay), action()), daemon=True).start()


def late_write(**kwargs) -> None:
    """Right at return; on the plain run (outputs zero-filled, the last run of a step, so no later
    call of the case sees it) ``out_write_num_valid_reqs`` (how many requests the step writes)
    is overwritten with 12345 0.5 s after the call returned: long after the judge's read of
    the call's outputs (milliseconds, even on a loaded machine) and well inside the linger
    (``LINGER_SECONDS``, 2 s), so that the write is found as a write after the last call, not
    as the call's own divergence. (At 50 ms a loaded 2-core machine read after the write.)"""
    out = kwargs["out_write_num_valid_reqs"]
    plain = not bool(out.any())
    python_launch(**kwargs)
    if plain:
        _later(lambda: out.view(-1).fill_(12345), 0.5)


def late_exit(**kwargs) -> None:
    """Right at return; 50 ms later the worker exits with status 0."""
    python_launch(**kwargs)
    _later(lambda: os._exit(0), 0.05)
