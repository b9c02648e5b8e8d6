"""Processes of a planner that outlived every harness-made process above them.

The isolation workers' shepherd is a child subreaper that kills what the worker leaves, and in a
sandbox the end of a PID namespace kills the rest; but without the namespaces (``--sandbox
none``, a GPU run by default, a kernel that refuses them) an orphan whose own reaper is gone is
re-parented to init and lives on: a ``setsid`` + double-fork daemon left by the availability
probe (the probe is killed with its process group; a daemon in a session of its own is in no
such group), or one that SIGKILLed the worker's shepherd, its reaper. After pytest has exited it
can rewrite the results file, which then reads a failed run as complete and green
(tests/test_hostile22.py).

So pytest's process is itself a child subreaper for the run (:func:`adopt`): such an orphan
becomes pytest's child, and before the results file's final write every child of pytest in
another session than pytest's own is killed (:func:`kill_strays`), with whatever it leaves in turn.
The rule: pytest starts the probe and the workers each in a session of its own
(``start_new_session``), every descendant of theirs stays in a session other than pytest's (no
process can join another session), and by then every probe and worker has ended; pytest's own
children in its session (pytest-xdist's workers) are never touched.
"""

from __future__ import annotations

import os
import time

from conformance.robustness import sandbox


def adopt() -> str | None:
    """Make this process the reaper of its orphaned descendants; None on success, else why not."""
    return sandbox.child_subreaper()


def release(was: bool | None) -> None:
    """Undo :func:`adopt` after :func:`kill_strays` where this process was no subreaper before
    (``was``: :func:`conformance.robustness.sandbox.is_child_subreaper` read before
    :func:`adopt`; True or None leaves it one): a caller that ran the run in-process (a test)
    gets its process back as it was, its later orphans re-parented as before."""
    if was is False:
        sandbox.child_subreaper(False)


def _strays(session: int, spare: frozenset[int]) -> list[int]:
    out = []
    for pid in sandbox.children():
        if pid in spare:
            continue
        try:
            if os.getsid(pid) == session:
                continue
        except OSError:  # a zombie, or gone: reaped below either way
            pass
        out.append(pid)
    return out


def kill_strays(rounds: int = 1000, spare: frozenset[int] = frozenset()) -> int:
    """SIGKILL and reap every child of this process that is in another session than its own
    (:func:`adopt` made the orphans of the run its children), until none is left, except the
    pids of ``spare`` (children this process had before the run: ``python -m conformance fuzz``
    called in a process that runs other workers, as a test does); returns how many were
    killed."""
    session, killed = os.getsid(0), set()
    for _ in range(rounds):
        pids = _strays(session, spare)
        if not pids:
            break
        killed |= sandbox.sigkill(pids)
        for pid in pids:  # only these: pytest-xdist's workers are reaped by their own parent
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        time.sleep(0.001)
    return len(killed)
