"""Planners of tests/test_hostile22.py that write the worker's reply themselves: the reply pipe's
descriptor is on the worker's command line (``--reply-fd N``), readable in ``/proc/self/cmdline``.
Each plans nothing (every valid case fails)."""

from __future__ import annotations

import json
import os
import time


def _reply_fd() -> int:
    with open("/proc/self/cmdline", "rb") as handle:
        argv = [a.decode() for a in handle.read().split(b"\0")]
    return int(argv[argv.index("--reply-fd") + 1])


def crash_reply_then_hangs(**kwargs) -> None:
    """Replies ``{"status": "crash"}`` for its call, then never ends: the harness waited for the
    worker's exit without a limit after a crash reply, and the run hung past every timeout."""
    os.write(_reply_fd(), (json.dumps({"status": "crash", "reason": "forged"}) + "\n").encode())
    while True:
        time.sleep(1)
