"""Thirteenth hostile review: wrong planners aimed at the newest parts of the harness (the linger
that attributes a worker's death after its case's last call, the plain run, the divergence
profile). Each computes the pure-Python planner's plan (so only its one bug can fail it) and adds
one bug the spec, or the harness's own rule, forbids (tests/test_hostile13.py says what the harness
made of each).

* :func:`stops_itself_after_the_case`: a thread that, once a second has passed without a call,
  stops its own process (SIGSTOP): in a server the process freezes after the step. Not a death,
  so the linger (conformance/robustness/worker_process.py) waits for nothing.
* :func:`stops_its_parent_after_the_case`: a thread that, once idle, stops the worker's parent
  (the shepherd) with SIGSTOP: tampering that the harness fails as ``crash`` when it is seen
  after a reply (``WorkerProcess.tampered``), done when no reply is pending.
* :func:`validates_only_on_poison`: raises the documented errors only when the outputs hold the
  harness's poison (``out_verify_enable`` neither 0 nor 1, the scratch's never-written last
  element not 0: no caller leaves either there);
  on buffers as a server hands them over it swallows every documented error and returns, e.g.
  a step of bs 3 on a write plan of capacity 2 plans nothing and raises nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time

from impls.offsets_planner.python_planner import launch as _launch

IDLE_SECONDS = 1.0
"""How long without a call before the idle threads act: longer than any gap between two cases of
a short run, shorter than the harness's 2 s linger."""

_LAST_CALL = [0.0]
_WATCHERS: dict[str, threading.Thread] = {}


def _when_idle(name: str, act) -> None:
    """Start (once per ``name``) a thread that runs ``act`` whenever :data:`IDLE_SECONDS` have
    passed since the last call, at most once per idle spell."""
    _LAST_CALL[0] = time.monotonic()
    if name in _WATCHERS:
        return

    def watch() -> None:
        acted_for = 0.0
        while True:
            time.sleep(0.1)
            last = _LAST_CALL[0]
            if last != acted_for and time.monotonic() - last > IDLE_SECONDS:
                acted_for = last
                act()

    _WATCHERS[name] = threading.Thread(target=watch, daemon=True, name=f"hostile13-{name}")
    _WATCHERS[name].start()


def stops_itself_after_the_case(**kwargs):
    """The right plan; a thread started at the first call stops this process (SIGSTOP) once a
    second has passed without a call: after a case's last call, when the harness has its answers.
    The process is then frozen for good (in a server: hung after the step)."""
    _launch(**kwargs)
    _when_idle("stop-self", lambda: os.kill(os.getpid(), signal.SIGSTOP))


def stops_its_parent_after_the_case(**kwargs):
    """The right plan; a thread started at the first call sends SIGSTOP to this process's parent
    (in the harness: the shepherd; in a server: whatever supervises the process) once a second
    has passed without a call."""
    _launch(**kwargs)
    _when_idle("stop-parent", lambda: os.kill(os.getppid(), signal.SIGSTOP))


def _poisoned(kwargs) -> bool:
    """Whether the outputs hold a fill no caller leaves there: ``out_verify_enable`` neither 0 nor
    1 (upstream allocates it as ones and the planner only ever stores 0 or 1), or the scratch's
    last element (past any plan of fewer than 4096 requests, never written: zero on fresh memory)
    not 0. The harness's poisoned runs fill both with random values. Anything unreadable counts
    as poisoned."""
    try:
        enable = int(kwargs["out_verify_enable"].reshape(-1)[0])
        last = int(kwargs["out_verify_offsets_scratch"].reshape(-1)[-1])
        return enable not in (0, 1) or last != 0
    except Exception:  # noqa: BLE001 - no element, not a tensor: behave
        return True


def validates_only_on_poison(**kwargs):
    """The pure-Python planner (it validates first, spec section 4), whose documented
    ``ValueError`` is raised only when the outputs are poisoned (:func:`_poisoned`): on buffers as
    a server hands them over every documented error is swallowed and the call returns None."""
    poisoned = _poisoned(kwargs)
    try:
        _launch(**kwargs)
    except ValueError:
        if poisoned:
            raise
