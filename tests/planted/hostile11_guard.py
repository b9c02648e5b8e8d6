"""Eleventh hostile review: planners that attack the hidden guard after every shared CPU storage
(conformance/robustness/shared_tensors.py) from inside the isolation worker. Each computes the
pure-Python planner's plan first, so only the attack can fail it."""

from __future__ import annotations

import ctypes
import mmap
import os

from impls.offsets_planner.python_planner import launch as _launch

SMEAR = 0x4141_4141_4141_4141


def _shared_fds() -> list[int]:
    """The worker's file descriptors of the harness's shared-memory files: each ``mmap`` object
    the worker made keeps a ``dup`` of the descriptor it was given (``/proc/self/fd``)."""
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith(("/dev/shm/", "/memfd:")):
            out.append(int(name))
    return out


def _end(tensor) -> int:
    return tensor.data_ptr() + tensor.numel() * tensor.element_size()


def truncate_shared_files(**kwargs):
    """The right plan, then every shared file cut to nothing (``ftruncate`` on the descriptor the
    worker's ``mmap`` keeps). Before the files were sealed the harness's ``pwrite`` of its guard
    happened to give the file its length back (the storage as zeros: judged ``oob``); sealed, the
    cut raises ``PermissionError`` here."""
    _launch(**kwargs)
    for fd in _shared_fds():
        os.ftruncate(fd, 0)


_SIZES: dict[int, int] = {}
"""Descriptor -> full size of each shared file this planner has seen (recorded before it cuts it)."""
_PAUSED = None


def _keep_truncating() -> None:
    """Cut every shared file seen to nothing, again and again, except while a call runs."""
    import time

    while True:
        if not _PAUSED.is_set():
            for fd in list(_SIZES):
                try:
                    if os.fstat(fd).st_size:
                        os.ftruncate(fd, 0)
                except OSError:
                    _SIZES.pop(fd, None)
        time.sleep(0.00005)


def truncate_between_calls(**kwargs):
    """The right plan, computed on whole files; between calls a thread of the worker cuts every
    shared file to nothing, again and again. Before the files were sealed: the harness restored the
    file's length when it put its hidden guard back (its ``pwrite`` past the storage), but its next
    read of an argument -- the snapshot after the call or before the next one -- met a file with
    no pages, a SIGBUS in pytest's process that ended the run without results (2 runs in 3). Sealed,
    every cut fails and the thread gives up."""
    global _PAUSED
    import threading

    if _PAUSED is None:
        _PAUSED = threading.Event()
        _PAUSED.set()
        threading.Thread(target=_keep_truncating, daemon=True).start()
    _PAUSED.set()
    __import__("time").sleep(0.001)  # the thread sees the pause
    for fd in _shared_fds():
        size = os.fstat(fd).st_size
        _SIZES[fd] = max(size, _SIZES.get(fd, 0))
    for fd, size in list(_SIZES.items()):
        try:
            os.ftruncate(fd, size)  # whole again (what the thread cut reads as zeros)
        except OSError:
            pass
    _launch(**kwargs)
    _PAUSED.clear()


def _mappings() -> list[tuple[int, int, str]]:
    out = []
    for line in open("/proc/self/maps"):
        parts = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        out.append((lo, hi, parts[5].strip() if len(parts) > 5 else ""))
    return out


def _own_page_below(address: int) -> bool:
    """Make sure ``address`` is writable memory of the worker's own, not a mapping of a shared
    storage: the page under a storage's first byte is most often unmapped (the worker's mappings go
    top-down), so map an anonymous page there (``MAP_FIXED_NOREPLACE``) when nothing is."""
    for lo, hi, name in _mappings():
        if lo <= address < hi:
            return not name.startswith("/dev/shm/")  # another argument's storage: seen there
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [
        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    page = address - address % mmap.PAGESIZE
    got = libc.mmap(page, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_WRITE,
                    mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x100000, -1, 0)  # FIXED_NOREPLACE
    return got == page


def _exact(tensor) -> bool:
    return (tensor.storage_offset() == 0
            and tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size())


def underflow_on_plain(**kwargs):
    """The right plan; on the plain run's exact-size buffers also one int64 of :data:`SMEAR` just
    before the first element of an output (``out[-1]``, in a server the end of the allocation
    before it) wherever that byte is not another shared storage's guard: the hidden guard lies only
    after a storage, so nothing sees it. (Runs a and b put a guard zone in front of every output.)"""
    _launch(**kwargs)
    for name, value in kwargs.items():
        if name.startswith("out_") and hasattr(value, "data_ptr") and _exact(value) \
                and value.numel():
            where = value.data_ptr() - 8
            if _own_page_below(where):
                ctypes.memmove(where, ctypes.byref(ctypes.c_int64(SMEAR)), 8)
                return


def correct(**kwargs):
    """The control: the pure-Python planner's plan and nothing else (no false ``oob``)."""
    _launch(**kwargs)


def restores_the_guard(**kwargs):
    """The right plan; two int64 of :data:`SMEAR` past the end of ``out_write_offsets``, then what
    they replaced put back before returning. Nothing remains: the contract is about what a call
    leaves, and the guard must not report a write that left nothing."""
    _launch(**kwargs)
    end = _end(kwargs["out_write_offsets"])
    kept = ctypes.string_at(end, 16)
    ctypes.memmove(end, (ctypes.c_int64 * 2)(SMEAR, SMEAR), 16)
    ctypes.memmove(end, kept, 16)


def writes_into_another_arguments_guard(**kwargs):
    """The right plan; on the plain run, one int64 of :data:`SMEAR` written through
    ``out_write_offsets``'s pointer at the first element past the end of
    ``out_write_seed_slot_indices`` (another argument's neighbouring memory). An input's
    neighbouring memory is no target: its hidden guard is fenced in the worker, and the write
    faults (conformance/robustness/guard_pages.py, tests/test_guard_pages.py)."""
    _launch(**kwargs)
    out, seeds = kwargs["out_write_offsets"], kwargs["out_write_seed_slot_indices"]
    if _exact(out) and _exact(seeds):
        ctypes.c_int64.from_address(out.data_ptr() + (_end(seeds) - out.data_ptr())).value = SMEAR


def _late(address: int, delay: float) -> None:
    import time

    time.sleep(delay)
    ctypes.c_int64.from_address(address).value = SMEAR


def late_write_from_a_thread(**kwargs):
    """The right plan; on the plain run (the case's last call) a thread writes one int64 of
    :data:`SMEAR` past the end of ``out_write_offsets`` 0.3 s after the call returned, when the
    harness has read the guard for the last time."""
    import threading

    _launch(**kwargs)
    out = kwargs["out_write_offsets"]
    if _exact(out):
        threading.Thread(target=_late, args=(_end(out), 0.3), daemon=True).start()


def late_write_inside_an_output(**kwargs):
    """The right plan; on the plain run (the case's last call) a thread writes :data:`SMEAR` into
    ``out_write_offsets[0]`` 0.2 s after the call returned (inside the output: the plan a
    server's next step reads)."""
    import threading

    _launch(**kwargs)
    out = kwargs["out_write_offsets"]
    if _exact(out):
        threading.Thread(target=_late, args=(out.data_ptr(), 0.2), daemon=True).start()
