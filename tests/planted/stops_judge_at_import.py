"""A module whose top level finds the pytest process among its ancestors and sends it SIGSTOP
(``tests/test_sandbox.py``): it runs first in the availability probe (:mod:`impls.offsets_planner.probe`), then in
the isolation worker. Without a PID namespace around the probe the whole run hangs at configure
time. What it found is appended to ``$CONFORMANCE_SANDBOX_MARKS/stops_judge_at_import``. Its
``launch`` writes ``out_verify_num_valid`` one too high, so its cases must fail."""

from __future__ import annotations

import os
import signal

from tests.planted.sandbox_attacks import _judge_pid, _mark, _unmount_proc, _wrong

NAME = "stops_judge_at_import"

_unmount_proc(NAME)
_pid = _judge_pid()
if _pid is None:
    _mark(NAME, "no pytest among my ancestors")
else:
    try:
        os.kill(_pid, signal.SIGSTOP)
        _mark(NAME, f"stopped pytest {_pid}")
    except OSError as exc:
        _mark(NAME, f"kill pytest {_pid}: {exc.strerror}")


def launch(**kwargs) -> None:
    """The pure-Python planner's plan with a wrong count (the case must fail)."""
    _wrong(kwargs)
