"""Ninth hostile review: planners that hide compute-sanitizer's report of their own access error.

On the CPU, tests/test_hostile9.py stands a fake ``compute-sanitizer`` around the isolation worker
that, like the real one, prints its memcheck block into the worker's log (the file its stdout and
the worker's share) from its own process, when the "kernel" faults: here when the planner creates
the file ``$H9_TRIGGER`` (the fake prints and removes it). Every planner computes the right plan
(the pure-Python planner's) and faults once per call.

* ``faults``: the honest stand-in: reported, ``oob``.
* ``faults_after_a_partial_line``: writes ``x`` (no newline) to its stdout before the kernel, so
  the sanitizer's head line reads ``x========= Invalid __global__ read ...`` and
  :func:`conformance.robustness.sanitizer.parse_memcheck` (which reads only lines that START with
  ``=========``) skips the whole block.
* ``faults_then_truncates_the_log``: after the report, ``ftruncate``s its stdout (the log, one
  open file description with the harness's): the harness reads the log from its pre-case offset
  to its (now smaller) size, i.e. nothing.
* ``faults_then_blanks_the_block``: after the report, writes spaces over the sanitizer's lines in
  place through a file description of its own (the log keeps its size).
"""

from __future__ import annotations

import os
import time

from impls.offsets_planner.python_planner import launch as python_launch


def _fault() -> None:
    """The kernel's out-of-bounds access: the (fake) sanitizer reports it before this returns."""
    trigger = os.environ["H9_TRIGGER"]
    with open(trigger, "w"):
        pass
    deadline = time.monotonic() + 10
    while os.path.exists(trigger) and time.monotonic() < deadline:
        time.sleep(0.01)


def faults(**kwargs) -> None:
    python_launch(**kwargs)
    _fault()


def faults_after_a_partial_line(**kwargs) -> None:
    python_launch(**kwargs)
    os.write(1, b"x")
    _fault()


def faults_then_truncates_the_log(**kwargs) -> None:
    python_launch(**kwargs)
    _fault()
    time.sleep(0.05)
    os.ftruncate(1, 0)


def faults_then_blanks_the_block(**kwargs) -> None:
    """After the report, opens its own stdout anew (``/proc/self/fd/1``: a file description of its
    own, without ``O_APPEND``) and writes spaces over every byte of the sanitizer's lines in
    place: the log keeps its size, so no truncation is seen."""
    python_launch(**kwargs)
    _fault()
    time.sleep(0.05)
    with open("/proc/self/fd/1", "r+b") as log:
        text = log.read()
        start = 0
        while (at := text.find(b"=========", start)) >= 0:
            end = text.find(b"\n", at)
            end = len(text) if end < 0 else end
            log.seek(at)
            log.write(b" " * (end - at))
            start = end
