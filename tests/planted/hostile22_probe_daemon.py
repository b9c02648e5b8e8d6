"""A planner that writes nothing and, imported in the harness's availability probe, leaves a
daemon that forges the run's results file once pytest has exited (tests/planted/hostile22_daemons.py)."""

import os

from tests.planted.hostile22_daemons import _leave_a_daemon, in_the_probe, launch

__all__ = ["launch"]  # the planner

if in_the_probe():
    _leave_a_daemon(os.getppid())
