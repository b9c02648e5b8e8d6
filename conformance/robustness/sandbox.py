"""Linux process-isolation primitives for the judge and the isolation worker (``prctl``,
``unshare``, ``mount``, ``capset`` through ctypes on libc; every function is a no-op returning a
reason where the platform lacks it). What each one guarantees:

* :func:`non_dumpable` (``PR_SET_DUMPABLE`` 0): another process of the same uid can no longer
  ``ptrace`` this one nor open its ``/proc/<pid>/mem``, ``maps``, ``environ`` or ``fd`` entries
  (``ptrace_may_access`` in the kernel, ``man 2 ptrace`` "Ptrace access mode checking"). It does not
  stop a process that holds ``CAP_SYS_PTRACE`` in this process's user namespace (root in the
  initial namespace): that one is stopped by :func:`new_user_pid_namespaces` plus
  :func:`drop_capabilities`, which leave the worker no capability outside its own namespace.
* :func:`child_subreaper` (``PR_SET_CHILD_SUBREAPER``): an orphaned descendant (a
  ``setsid`` + double-fork daemon) is re-parented to this process, not to init, so that
  :func:`kill_children` can end it (``man 2 prctl``).
* :func:`new_user_pid_namespaces` (``unshare(CLONE_NEWUSER | CLONE_NEWPID)``, ``man 7
  pid_namespaces``): the caller's *next child* is PID 1 of a new PID namespace. A process inside
  sees and signals only processes inside (``kill`` takes a pid of the caller's namespace), and when
  PID 1 ends the kernel SIGKILLs every other process in the namespace, daemons included.
* :func:`private_proc` (``unshare(CLONE_NEWNS)`` and a fresh ``proc`` mount): ``/proc`` lists the
  namespace's processes only.

Legacy CUDA IPC handles cannot be opened across PID namespaces (openucx/ucx#11512,
NVIDIA/nccl#360): :mod:`conformance.robustness.isolation` uses the namespaces on the CPU only,
unless asked (``--sandbox namespace``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_REC, MS_PRIVATE = 0x4000, 0x40000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522  # linux/capability.h
NAMESPACE = "user+pid namespace"
"""The sandbox's name in the results fingerprint and the summary when the worker got one."""


def _libc():
    if not sys.platform.startswith("linux"):
        raise OSError("not Linux")
    return ctypes.CDLL(None, use_errno=True)


def _call(name: str, *args) -> str | None:
    """Call libc's ``name``; None on success, else ``"name: strerror"``."""
    try:
        func = getattr(_libc(), name)
    except (OSError, AttributeError) as exc:
        return f"{name}: {exc}"
    if func(*args) != 0:
        err = ctypes.get_errno()
        return f"{name}: {os.strerror(err)}"
    return None


def prctl(option: int, value: int) -> str | None:
    """``prctl(option, value, 0, 0, 0)``; None on success, else why not."""
    return _call("prctl", option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                 ctypes.c_ulong(0))


def non_dumpable() -> str | None:
    """Make this process non-dumpable (no core file either); None on success."""
    return prctl(PR_SET_DUMPABLE, 0)


def is_dumpable() -> bool | None:
    """``PR_GET_DUMPABLE`` (3): whether this process is dumpable, None where unknown."""
    try:
        return bool(_libc().prctl(3, 0, 0, 0, 0))
    except (OSError, AttributeError):
        return None


def child_subreaper(on: bool = True) -> str | None:
    """Make this process the reaper of its orphaned descendants (``on`` False: no longer, orphans
    go to the next subreaper above or init again); None on success."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0)


def is_child_subreaper() -> bool | None:
    """``PR_GET_CHILD_SUBREAPER`` (37): whether this process reaps its orphaned descendants,
    None where unknown."""
    flag = ctypes.c_int(0)
    try:
        if _libc().prctl(37, ctypes.byref(flag), 0, 0, 0) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return bool(flag.value)


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent exits (``PR_SET_PDEATHSIG``).
    False where that is not available, or the parent already died."""
    return prctl(PR_SET_PDEATHSIG, sig) is None and os.getppid() != 1


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def new_user_pid_namespaces() -> str | None:
    """Move this process into a new user namespace (this uid and gid mapped to themselves, so files
    keep their owner) and make its next child PID 1 of a new PID namespace. None on success, else
    why not (``unshare: Operation not permitted`` where unprivileged user namespaces are off)."""
    uid, gid = os.geteuid(), os.getegid()
    why = _call("unshare", ctypes.c_int(CLONE_NEWUSER | CLONE_NEWPID))
    if why:
        return why
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    except OSError as exc:
        return f"uid_map: {exc.strerror or exc}"
    return None


def private_proc() -> str | None:
    """In a new mount namespace (propagation private), mount a fresh ``/proc`` for this process's
    PID namespace. Called by PID 1 of the namespace; None on success."""
    why = _call("unshare", ctypes.c_int(CLONE_NEWNS))
    if why:
        return why
    why = _call("mount", None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None)
    if why:
        return why
    return _call("mount", b"proc", b"/proc", b"proc",
                 ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC), None)


def protected_paths() -> list[str]:
    """The folders a sandboxed process must not write: the harness's checkout (or, installed, the
    site-packages folder that holds it: the corpus, the harness's code, ``reports/``, the
    ``__pycache__`` folders pytest reads next), the interpreter's prefixes and site-packages
    (the bytecode of every module pytest imports later), and every other folder on this
    process's import path (``PYTHONPATH`` entries, the planner folders: a module written into
    one is imported by the judge or a later child; ``tests/test_hostile8.py``) but the root and
    the temporary folder, where the sandboxed process keeps its own files. Existing folders,
    outermost first."""
    import site
    import tempfile

    from conformance.paths import REPO_ROOT

    temporary = os.path.realpath(tempfile.gettempdir())
    on_path = {p for p in (os.path.realpath(e) for e in sys.path if isinstance(e, str) and e)
               if p != "/" and not (temporary == p or temporary.startswith(p.rstrip("/") + "/"))}
    found = {str(REPO_ROOT), sys.prefix, sys.base_prefix, sys.exec_prefix,
             *site.getsitepackages(), site.getusersitepackages(), *on_path}
    found = sorted((os.path.realpath(p) for p in found if p and os.path.isdir(p)), key=len)
    return [p for i, p in enumerate(found)
            if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in found[:i])]


def read_only(paths: list[str]) -> str | None:
    """In this process's own mount namespace (after :func:`private_proc`), bind every folder of
    ``paths`` onto itself read-only: a write under it fails with EROFS, for this process and
    every child, while files opened elsewhere and passed in (the shared tensors' memory, the
    log) stay writable. None when every folder was made read-only, else the first failure."""
    for path in paths:
        target = path.encode()
        why = _call("mount", target, target, None, ctypes.c_ulong(MS_BIND | MS_REC), None)
        if why is None:  # the remount keeps the flags the kernel locks in a user namespace
            kept = _locked_flags(os.statvfs(path).f_flag)
            why = _call("mount", None, target, None,
                        ctypes.c_ulong(MS_BIND | MS_REMOUNT | MS_RDONLY | kept), None)
        if why:
            return f"{path}: {why}"
    return None


_ST_TO_MS = {2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}
"""statvfs ``f_flag`` bits (ST_NOSUID, ST_NODEV, ST_NOEXEC, ST_NOATIME, ST_NODIRATIME,
ST_RELATIME) -> the mount flag that keeps each on a remount (``man 2 mount``: a remount in a user
namespace may not clear them)."""


def _locked_flags(f_flag: int) -> int:
    flags = 0
    for st, ms in _ST_TO_MS.items():
        if f_flag & st:
            flags |= ms
    return flags


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> str | None:
    """Set ``no_new_privs`` and clear every capability of this process (effective, permitted,
    inheritable): it can no longer unmount the private ``/proc``, nor regain capabilities by
    ``execve`` of a root-owned or setuid program. None on success."""
    why = prctl(PR_SET_NO_NEW_PRIVS, 1)
    if why:
        return why
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    return _call("capset", ctypes.byref(header), data)


def reap_until(child: int) -> int:
    """As PID 1 of a namespace (SIGCHLD blocked): reap every process that ends, the orphans the
    namespace re-parents to it included, until ``child`` does; returns ``child``'s wait status.
    Exits (code 1) when no child is left to wait for."""
    while True:
        signal.sigwaitinfo({signal.SIGCHLD})
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                os._exit(1)
            if pid == 0:
                break
            if pid == child:
                return status


def children(pid: int | None = None) -> list[int]:
    """The pids of ``pid``'s children (this process's by default) from
    ``/proc/<pid>/task/<pid>/children``; [] when it is gone or the kernel lacks the file."""
    pid = os.getpid() if pid is None else pid
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        return []


def sigkill(pids: list[int]) -> set[int]:
    """SIGKILL each of ``pids``; those that were still there to kill."""
    killed = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        except ProcessLookupError:
            pass
    return killed


def kill_children(rounds: int = 10000) -> int:
    """SIGKILL and reap every child of this process until none is left (a subreaper's children
    include the orphans it adopted; a killed child's own children are adopted in turn). Returns
    how many were killed."""
    killed: set[int] = set()
    for _ in range(rounds):
        killed |= sigkill(children())
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            if not children():
                return len(killed)
        time.sleep(0.001)
    return len(killed)
