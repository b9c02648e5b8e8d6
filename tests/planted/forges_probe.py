"""A planner module whose top level forges the availability probe's answer
(:mod:`impls.offsets_planner.probe`): it forks a child that, after the probe has printed its own answer and exited,
prints one more ``conformance-probe:`` line claiming a compiled Triton kernel and another source
digest. The harness reads the probe's output to EOF and takes the last such line
(:func:`impls.offsets_planner.registry._finish_probe`), so the forged mode wins (``tests/test_sandbox.py`` keeps it
as a strict xfail: the mode is the module's own word); the forged digest does not, since the
harness reads the module's file itself (:mod:`impls.source_file`)."""

from __future__ import annotations

import json
import os
import time

from impls.offsets_planner.python_planner import launch  # noqa: F401 - the planner itself is right
from impls.offsets_planner.registry import PROBE_MARK

FORGED = {"available": True, "mode": "external (triton compiled)", "reason": None,
          "source": "forged-digest"}

_PROBE_PID = os.getpid()
if os.environ.get("CONFORMANCE_FORGE_PROBE") and os.fork() == 0:
    deadline = time.monotonic() + 60
    while os.getppid() == _PROBE_PID and time.monotonic() < deadline:
        time.sleep(0.01)  # until the probe has answered and exited (this child is reparented);
        # a fixed sleep lost the race on a loaded machine and the xfail passed by luck
    os.write(1, ("\n" + PROBE_MARK + json.dumps(FORGED) + "\n").encode())
    os._exit(0)
