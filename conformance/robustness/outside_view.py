"""What the kernel shows of an isolation worker's process state, read by the harness from
``/proc`` (Linux ``proc(5)``), never from the worker (tests/test_hostile18.py).

The worker's own state report (:mod:`conformance.robustness.torch_state`, read in the worker) runs
in the planner's process: a planner can rebind the check there (its function's ``__code__``, the
module's names, ``os.umask`` itself) and report nothing, and a thread of its own can change the
state after the worker's last case ended, when nothing in the worker reads it again. The fields
here are read from outside, so neither hides them:

* ``Umask`` (``/proc/PID/status``, Linux 4.7 on): the modes of every file its caller creates;
* ``SigBlk`` and ``SigIgn`` of the worker's main thread (``/proc/PID/status``: the thread that
  calls the planner): signals blocked (inherited by every process the caller starts: its
  ``terminate()`` stops none) and ignored;
* every resource limit (``/proc/PID/limits``): ``RLIMIT_NOFILE`` lowered, and its sockets fail;
* the main thread's CPU affinity (``Cpus_allowed_list``: ``os.sched_setaffinity`` pins its
  caller's every later computation to one core), ``NoNewPrivs`` and the process name
  (``prctl(PR_SET_NAME)``: its caller is no longer found by name); from ``/proc/PID/stat``
  (:data:`STAT_FIELDS`) its process group, session, nice value and scheduling policy; where its
  standard descriptors 0, 1, 2 lead (``/proc/PID/fd``: :func:`_standard_fds`)
  (tests/test_hostile20.py);
* its child processes, and those of its parent (the shepherd, a subreaper: a daemon the planner
  double-forked is its child) but the worker itself (``/proc/PID/task/TID/children``): a process
  a planner started and left running, or left unreaped, is found by its caller's ``os.wait()``
  and holds every descriptor it inherited (tests/test_hostile19.py). Only a child that was not
  there before is a change.

A field the kernel does not show (an older kernel, a ``/proc`` mounted elsewhere) is left out of
both reads, never a change; a read that fails (the worker is gone) is ``None``. One transition is
the framework's, not the planner's: a signal of :data:`NATIVE_CRASH_SIGNALS` that leaves the
ignored set for a handler (``SigCgt``).
"""

from __future__ import annotations

import os

FIELDS = ("Umask", "SigBlk", "SigIgn", "Cpus_allowed_list", "NoNewPrivs", "Name")
"""The fields of ``/proc/PID/status`` compared (hex masks, an octal umask)."""
CAUGHT = "SigCgt"
"""Read beside :data:`FIELDS`, never compared: the signals with a handler installed (hex mask)."""
NATIVE_CRASH_SIGNALS = frozenset({25})
"""SIGXFSZ: CPython ignores it at start; LLVM's crash handler (Triton's compiler, loaded into the
worker's process at a kernel's first compile) installs a handler for every signal of its
``KillSigs`` list, SIGXFSZ among them (``llvm/lib/Support/Unix/Signals.inc``). So the first case
that compiles a Triton kernel moves it from ignored to caught in every worker, whatever the
planner does (seen on an H100, ``reports/gpu/2026-12-06-g/``): that move alone is not a change.
Made ignored, blocked or set back to its default action it still is."""


def read(pid: int | None) -> dict[str, str] | None:
    """``{"Umask": "0022", "SigBlk": "0000000000000000", "SigIgn": ..., "limit Max open
    files": "1024 4096 files"}`` of process ``pid`` now, or None when it cannot be read."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as handle:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in handle if ":\t" in line)
        with open(f"/proc/{pid}/limits") as handle:
            limits = handle.read().splitlines()[1:]
    except (OSError, ValueError):
        return None
    out = {name: status[name].strip() for name in (*FIELDS, CAUGHT) if name in status}
    out.update(_stat(pid))
    out.update(_standard_fds(pid))
    for line in limits:  # "Max open files            1024                 4096                 files"
        name, values = line[:26].strip(), " ".join(line[26:].split())
        if name:
            out[f"limit {name}"] = values
    kids = _children(pid)
    if kids is not None and "PPid" in status:
        adopted = _children(int(status["PPid"].strip()) or pid) or set()
        out[CHILDREN] = " ".join(str(p) for p in sorted((kids | adopted) - {pid}))
    return out


STAT_FIELDS = (("process group", 2), ("session", 3), ("nice", 16), ("scheduling policy", 38))
"""Fields of ``/proc/PID/stat`` (their index after the command's closing parenthesis: ``proc(5)``
field 5, 6, 19 and 41): a worker moved to its own process group or session no longer gets its
caller's terminal signals nor dies with its group (``os.setpgid``, ``os.setsid``); a nice value
raised or a batch policy slows every later computation of its caller."""


def _stat(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return {}
    return {name: fields[i] for name, i in STAT_FIELDS if i < len(fields)}


def _standard_fds(pid: int) -> dict[str, str]:
    """``fd 0`` -> what ``/proc/PID/fd/0`` links to (``closed`` where it is not open), for the
    standard descriptors: one redirected with ``os.dup2`` or closed (``sys.stdin.close()``)
    loses its caller's input or output, and every child's it starts."""
    try:
        if not os.listdir(f"/proc/{pid}/fd"):
            return {}  # exiting (or a zombie): its descriptors are closed, none by the planner
    except PermissionError:
        return {f"fd {fd}": "unreadable" for fd in (0, 1, 2)}
    except OSError:
        return {}
    out = {}
    for fd in (0, 1, 2):
        try:
            out[f"fd {fd}"] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            out[f"fd {fd}"] = "closed"
        except PermissionError:  # made non-dumpable since: what it hides is a change
            out[f"fd {fd}"] = "unreadable"
        except OSError:
            continue
    try:
        if "closed" in out.values() and not os.listdir(f"/proc/{pid}/fd"):
            return {}  # it exited while read
    except OSError:
        return {}
    return out


CHILDREN = "Children"
"""The pids of the worker's children and of the shepherd's others (space-separated)."""


def _children(pid: int) -> set[int] | None:
    """The children of every thread of ``pid`` (None where the kernel does not show them)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    out: set[int] = set()
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                out.update(int(p) for p in handle.read().split())
        except (OSError, ValueError):
            if tid == str(pid):
                return None
    return out


def _signals(mask: str) -> str:
    """The signal numbers of a hex mask, as ``15`` or ``2, 15`` (``-`` for none)."""
    try:
        bits = int(mask, 16)
    except ValueError:
        return mask
    return ", ".join(str(n) for n in range(1, 65) if bits >> (n - 1) & 1) or "-"


def _native_handlers_only(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """``before`` with the signals of :data:`NATIVE_CRASH_SIGNALS` that left the ignored set for
    a handler (in ``after``'s ``SigCgt``) taken out of its ``SigIgn``."""
    try:
        was, now, caught = (int(d[k], 16) for d, k in ((before, "SigIgn"), (after, "SigIgn"),
                                                        (after, CAUGHT)))
    except (KeyError, ValueError):
        return before
    moved = sum(1 << (n - 1) for n in NATIVE_CRASH_SIGNALS
                if was >> (n - 1) & 1 and not now >> (n - 1) & 1 and caught >> (n - 1) & 1)
    return dict(before, SigIgn=f"{was & ~moved:0{len(before['SigIgn'])}x}") if moved else before


def changed(before: dict[str, str] | None, after: dict[str, str] | None) -> list[str]:
    """``umask 0022 -> 0000``, ``signals blocked (worker's main thread) - -> 15``, ``limit Max
    open files 1024 4096 files -> 16 4096 files`` for each field both reads hold that differs
    (``SigCgt`` never: it only qualifies :data:`NATIVE_CRASH_SIGNALS`); ``[]`` when either read
    is None."""
    if before is None or after is None:
        return []
    before = _native_handlers_only(before, after)
    words = {"Umask": "umask", "SigBlk": "signals blocked (worker's main thread)",
             "SigIgn": "signals ignored", "Cpus_allowed_list": "CPU affinity (main thread)",
             "Name": "process name"}
    out = []
    for name in before:
        if name == CHILDREN and name in after:
            new = sorted(set(after[name].split()) - set(before[name].split()), key=int)
            out += [f"child process {pid} left running (or unreaped)" for pid in new]
        elif name != CAUGHT and name in after and before[name] != after[name]:
            was, now = before[name], after[name]
            if name in ("SigBlk", "SigIgn"):
                was, now = _signals(was), _signals(now)
            out.append(f"{words.get(name, name)}: {was} -> {now}")
    return out


WHERE = "seen by the harness in /proc, whatever the worker reports"
"""What the lines of :func:`changed` are prefixed with in a case's failure."""
