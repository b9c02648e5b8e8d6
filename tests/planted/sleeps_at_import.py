"""A planner module whose top level sleeps 600 s: its import must time out like a call, failing
its cases, never hanging the run."""

from __future__ import annotations

import time

time.sleep(600)


def launch(**kwargs) -> None:
    """Never reached."""
