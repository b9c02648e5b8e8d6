"""Planted planners of the twentieth hostile review (tests/test_hostile20.py): each computes the
pure-Python planner's plan, right in every byte, and leaves its caller's process changed where
tests/test_hostile19.py's checks did not read (:data:`HARMS`, now read), where they read already
(:data:`CAUGHT`), or where nothing reads (:data:`HOLES`).
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import logging
import os
import resource
import threading

from tests.planted.hostile17_state import harm_planners

_LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG, PR_SET_NAME = 1, 15
THREAD_LIFETIME = [3600.0]
"""Seconds the thread of ``flips_a_thread_to_daemon`` lives (a test shortens it)."""
STOP = threading.Event()
"""Set to end that thread at once."""
PREMADE = "hostile20.premade"
"""A logger made when this module is imported (its caller's, in a server)."""
logging.getLogger(PREMADE)
GRANDCHILDREN: list[int] = []
"""The pid of the daemon ``double_forks_a_daemon`` leaves."""
LEAKED: list[int] = []
"""The descriptors ``leaks_descriptors`` keeps open."""


def _flip_a_thread() -> None:
    """A thread that is not a daemon, its flag set afterwards: ``threading.enumerate`` shows a
    daemon, the interpreter still joins it at exit (its lock is in ``_shutdown_locks``)."""
    thread = threading.Thread(target=STOP.wait, args=(THREAD_LIFETIME[0],), name="hostile20")
    thread.start()
    thread._daemonic = True


def _pin_to_one_cpu() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _redirect_stdout() -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)


def _replace_a_logger() -> None:
    logging.root.manager.loggerDict[PREMADE] = logging.Logger(PREMADE, logging.CRITICAL)


def _lower_the_hard_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, soft - 1))


def _double_fork() -> None:
    """A grandchild that lives 120 s (or until its grandparent is gone), its parent reaped at
    once: it is reparented to the nearest subreaper (init outside the harness)."""
    grandparent = os.getpid()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        pid = os.fork()
        if pid == 0:
            import time
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # a daemon's: holds none of its caller's pipes
                os.dup2(null, fd)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and os.path.exists(f"/proc/{grandparent}"):
                time.sleep(0.1)
            os._exit(0)
        os.write(write, str(pid).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    GRANDCHILDREN[:] = [int(os.read(read, 32))]
    os.close(read)


def _clear_atexit_keep_the_count() -> None:
    count = atexit._ncallbacks()
    atexit._clear()  # its caller's handlers gone ...
    for _ in range(count):  # ... and as many registered: the count is the same
        atexit.register(os._exit, 0)


def _exit_in_forked_children() -> None:
    os.register_at_fork(after_in_child=lambda: os._exit(0))


def _leak_descriptors() -> None:
    LEAKED.extend(os.open(os.devnull, os.O_RDONLY) for _ in range(200))


HARMS = {
    "flips_a_thread_to_daemon": _flip_a_thread,
    "freezes_the_collector": gc.freeze,
    "pins_to_one_cpu": _pin_to_one_cpu,
    "lowers_its_priority": lambda: os.nice(5),
    "leaves_its_process_group": lambda: os.setpgid(0, 0),
    "renames_its_process": lambda: _LIBC.prctl(PR_SET_NAME, b"kworker/0:1", 0, 0, 0),
    "redirects_stdout": _redirect_stdout,
    "closes_stdin": lambda: os.close(0),
    "clears_its_death_signal": lambda: _LIBC.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0),
}
"""Planner name -> what it does after the right plan (read since this review):

* a thread that is not a daemon left running an hour, its ``daemon`` flag flipped after its
  start (its caller's exit waits for it; the check of daemons was fooled);
* ``gc.freeze()`` (its caller's garbage cycles are never collected);
* its main thread pinned to one CPU, its nice value raised by 5, a process group of its own
  (its caller's terminal's Ctrl-C and ``killpg`` miss it), its name ``kworker/0:1``;
* its standard output redirected to ``/dev/null`` (its caller's output, and every child's, lost),
  its standard input closed (its caller's next ``input()`` fails; the next file it opens
  becomes its stdin);
* its parent-death signal cleared (a server started with one outlives its supervisor)."""
CAUGHT = {
    "replaces_a_logger": _replace_a_logger,
    "lowers_the_hard_file_limit": _lower_the_hard_limit,
    "double_forks_a_daemon": _double_fork,
}
"""Planner name -> a harm an earlier check reads already: a logger made before replaced in
``loggerDict`` (its caller's ``getLogger`` returns another, at ``CRITICAL``), the hard limit of
open files lowered (its caller cannot raise the soft one back), a daemon double-forked (the
shepherd, a subreaper, adopts it)."""
HOLES = {
    "clears_atexit_keeps_the_count": _clear_atexit_keep_the_count,
    "exits_forked_children": _exit_in_forked_children,
    "leaks_descriptors": _leak_descriptors,
}
"""Planner name -> a harm nothing reads (docs/robustness.md, "What is still not guaranteed"):
``atexit._clear()`` and as many ``os._exit(0)`` handlers registered (the count read is the same;
its caller's handlers never run, its exit status is 0), an ``os.register_at_fork`` hook that
ends every forked child at once (Python lists none), 200 descriptors left open."""

globals().update(harm_planners({**HARMS, **CAUGHT, **HOLES}))
