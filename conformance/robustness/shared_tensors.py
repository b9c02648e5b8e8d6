"""Tensors the harness owns, handed to the isolation worker without copying: both ends of one call.

The harness builds every input and output allocation of a case in its own process
(:mod:`conformance.engine.steps`); before a call it moves each allocation's storage into shared
memory (:meth:`Sender.describe`) and sends the worker a *descriptor* per tensor argument (dtype,
shape, strides, offset into a numbered storage); the worker maps the same memory
(:class:`Receiver`) and calls the planner on views of it. What the planner writes lands in memory
the harness reads itself, after the call, with its own comparison.

* CPU: each storage gets a *home*, an anonymous, sealed shared-memory file of the harness's own
  (see *Hidden guard* below) whose file descriptor goes to the worker over a Unix socket
  (``SCM_RIGHTS``, :func:`socket.send_fds`), once per storage and case. The harness's storage
  itself is never shared: its bytes are copied into the home before every call
  (:meth:`Sender.describe`) and back after it (:meth:`Sender.after_call`), so the harness's
  tensors (every view of the storage) hold what the planner left, and no memory the harness
  reads from is ever mapped in the worker.
* CUDA: the storage's CUDA IPC handle (``torch.multiprocessing.reductions.reduce_tensor``, the
  mechanism of ``torch.multiprocessing``); the worker opens it on the same device. Needs a device
  run to be trusted: only the CPU path is exercised by the CPU test suite.
* ``meta`` tensors (a case's device override) carry no memory: the worker makes its own.

Hidden guard (CPU): each storage's home (``memfd_create``) is longer than the
storage: a page before it (:data:`FRONT`) and a *slack* after it (to the end of the storage's last
page, then one more page), both filled from the poison seed. The worker maps the whole file but
hands the planner a storage of exactly the storage's size (``torch.frombuffer`` on the mapping, at
:data:`FRONT`). A write outside an argument's memory -- past its end or before its start, on the
plain run's exact-size buffers as much as past the guard zones of the poisoned runs -- lands in
the guard, where the harness reads it after the call (:meth:`Sender.after_call`) from the file it
owns; in a server it would land in the neighbouring allocation. A planner cannot tell the runs
apart by the mapping: every storage of every run has its guards. The file is sealed
(``F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL``) before the worker gets its descriptor: a planner
that finds the descriptor (its ``mmap`` keeps one) cannot cut the file, whose pages the harness's
own mapping would lose (its next copy a SIGBUS in pytest's process), nor seal it against the
harness's writes. CUDA storages have no guard (their memory is the caching
allocator's; compute-sanitizer's memcheck is the check there).

The worker keeps one tensor object per distinct descriptor for the whole case, so a planner sees
the very same tensor object when the harness hands it the same view again (the way a server reuses
its CUDA-graph input buffers), and the same ``data_ptr`` for the same storage.
Messages from the harness to the worker are pickled (the worker trusts the harness); the worker's
replies are JSON, never unpickled by the harness.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import pickle
import random
import socket

import torch

MAX_MESSAGE = 1 << 20
"""Bytes of one message on the socket (descriptors only: no tensor data travels)."""
MAX_FDS = 200
"""File descriptors one message may carry (SCM_RIGHTS allows 253)."""
PAST_END_KEPT = 16
"""Elements written past the end of one storage that one call's record keeps (the first ones)."""


FRONT = mmap.PAGESIZE
"""Bytes of hidden guard before each shared CPU storage (the storage starts there in its file)."""
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
"""What a shared file is sealed against before the worker gets it: shrinking (which would take
pages from under the harness's mapping), growing, and any further seal (``F_SEAL_FUTURE_WRITE``
would make the harness's own writes to its guards fail)."""


def slack_bytes(nbytes: int) -> int:
    """Bytes of hidden guard after a storage of ``nbytes``: to the end of its last page, then one
    page more (so the worker's mapping ends on a page boundary)."""
    return -nbytes % mmap.PAGESIZE + mmap.PAGESIZE


class _Home:
    """One shared storage's home: the harness's storage (``ours``), the file ``fd`` and the
    harness's mapping of the storage's bytes in it (``mapped``, at :data:`FRONT`), each hidden
    guard's start in the file and what the harness filled it with, and the argument the guards are
    reported under (its first tensor's name, its element size, offset and length, so a byte of a
    guard is an element index of that tensor: negative before it)."""

    def __init__(self, ours: torch.UntypedStorage, fd: int, mapped: torch.UntypedStorage,
                 guards: list[tuple[int, bytes]], name: str, tensor) -> None:
        self.ours, self.fd, self.mapped, self.guards, self.name = ours, fd, mapped, guards, name
        self.itemsize, self.offset = tensor.element_size(), tensor.storage_offset()
        self.numel = tensor.numel()

    def changed(self) -> list[dict]:
        """The elements of the guards that differ from their fill (the first
        :data:`PAST_END_KEPT`), as ``{"field", "index", "past", "expected", "got"}`` (``index``:
        the element index in the argument's tensor, negative before its storage; ``past``: how far
        past its end, 1 for the first element after it, 0 or less before it; values as
        little-endian signed integers of the element size); each fill is put back."""
        out, size = [], self.itemsize
        for start, fill in self.guards:
            now = os.pread(self.fd, len(fill), start)
            if now == fill:
                continue
            for at in range(0, len(fill) - size + 1, size):
                if now[at:at + size] != fill[at:at + size] and len(out) < PAST_END_KEPT:
                    index = (start - FRONT + at) // size - self.offset
                    out.append({"field": self.name, "index": index,
                                "past": index - self.numel + 1,
                                "expected": int.from_bytes(fill[at:at + size], "little",
                                                           signed=True),
                                "got": int.from_bytes(now[at:at + size], "little",
                                                      signed=True)})
            os.pwrite(self.fd, fill, start)
        return out


def socket_pair() -> tuple[socket.socket, socket.socket]:
    """(harness end, worker end): a Unix ``SOCK_SEQPACKET`` pair (one message per send, its file
    descriptors with it)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for end in (ours, theirs):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, MAX_MESSAGE + 4096)
    return ours, theirs


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    """Send ``message`` (pickled) and ``fds`` as one packet."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > MAX_MESSAGE or len(fds) > MAX_FDS:
        raise ValueError(f"message of {len(data)} bytes and {len(fds)} fds is over the limit")
    socket.send_fds(sock, [data], list(fds))


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """The next packet: (message, fds), or (None, []) when the harness closed its end."""
    data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return pickle.loads(data), list(fds)


class Sender:
    """The harness's end for one case: numbers every storage it shares and keeps it alive until
    :meth:`close` (the worker may hold views of it)."""

    def __init__(self, seed: int = 0) -> None:
        self.numbers: dict[int, int] = {}
        self.kept: list = []
        self.homes: list[_Home] = []
        self.seed = seed

    def describe(self, kwargs: dict) -> tuple[dict, list[int]]:
        """(the call's message, the file descriptors it carries) for launcher ``kwargs``: each
        tensor as a descriptor, every other value as it is (ints, None). Every CPU storage shared
        so far gets its bytes copied into its home: the worker sees what the harness holds now."""
        described, fds = {}, []
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                described[name] = self._tensor(name, value, fds)
            else:
                described[name] = ("value", value)
        for home in self.homes:
            home.mapped.copy_(home.ours)
        return {"kwargs": described}, fds

    def _tensor(self, name: str, tensor: torch.Tensor, fds: list[int]) -> tuple:
        view = (str(tensor.dtype).removeprefix("torch."), tuple(tensor.shape), tuple(tensor.stride()),
                tensor.storage_offset())
        if tensor.is_meta:
            return ("meta", *view)
        if tensor.device.type not in ("cpu", "cuda"):
            raise ValueError(f"cannot share a tensor on {tensor.device} with the worker")
        storage = tensor.untyped_storage()
        key = storage._cdata
        fresh = key not in self.numbers
        if fresh:
            self.numbers[key] = len(self.numbers)
            self.kept.append(storage)
        if tensor.device.type == "cuda":
            from torch.multiprocessing.reductions import reduce_tensor

            self.kept.append(tensor)
            return ("cuda", *view, self.numbers[key], reduce_tensor(tensor))
        if fresh:
            size = storage.nbytes()
            if size:
                number = self.numbers[key]
                front = random.Random(f"{self.seed}:front:{number}").randbytes(FRONT)
                fill = random.Random(f"{self.seed}:slack:{number}").randbytes(slack_bytes(size))
                fd, mapped = _sealed_home(size, front, fill)
                self.homes.append(_Home(storage, fd, mapped, [(0, front), (FRONT + size, fill)],
                                        name, tensor))
                fds.append(fd)
                return ("cpu", *view, number, size, len(fds) - 1, FRONT + size + len(fill))
            return ("cpu", *view, self.numbers[key], 0, None, 0)
        return ("cpu", *view, self.numbers[key], None, None, None)

    def after_call(self) -> list[dict]:
        """Copy every home back into its storage (what the planner left, for the harness's own
        comparison); then what the call wrote outside the shared CPU storages, into their hidden
        guards (:meth:`_Home.changed`, storage by storage in the order they were shared), each
        guard holding its fill again after."""
        for home in self.homes:
            home.ours.copy_(home.mapped)
        return [found for home in self.homes for found in home.changed()]

    def close(self) -> None:
        for home in self.homes:
            os.close(home.fd)  # the harness's mapping keeps the file while a storage uses it
        self.numbers.clear()
        self.homes.clear()
        self.kept.clear()


def _sealed_home(size: int, front: bytes, fill: bytes) -> tuple[int, torch.UntypedStorage]:
    """A new sealed shared-memory file laid out as ``front``, ``size`` bytes of storage, ``fill``:
    (its descriptor, which the caller closes; the harness's mapping of the storage's bytes alone,
    as a storage of ``size`` bytes)."""
    fd = os.memfd_create("conformance-shared", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, FRONT + size + len(fill))
        os.pwrite(fd, front, 0)
        os.pwrite(fd, fill, FRONT + size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        home = torch.frombuffer(mmap.mmap(fd, size, offset=FRONT), dtype=torch.uint8,
                                count=size).untyped_storage()
    except BaseException:
        os.close(fd)
        raise
    return fd, home


class Receiver:
    """The worker's end for one case: maps storages and keeps one tensor per descriptor."""

    def __init__(self) -> None:
        self.storages: dict[int, torch.UntypedStorage] = {}
        self.tensors: dict[tuple, torch.Tensor] = {}

    def kwargs(self, message: dict, fds: list[int]) -> dict:
        """The planner's keyword arguments for one call's ``message`` and its ``fds`` (closed
        here)."""
        try:
            return {name: self._value(d, fds) for name, d in message["kwargs"].items()}
        finally:
            for fd in fds:
                os.close(fd)

    def _value(self, described: tuple, fds: list[int]):
        kind = described[0]
        if kind == "value":
            return described[1]
        key = described[:6]  # kind, dtype, shape, stride, offset, storage number
        if key in self.tensors:
            return self.tensors[key]
        dtype, shape, stride, offset = getattr(torch, described[1]), *described[2:5]
        if kind == "meta":
            tensor = torch.empty_strided(shape, stride, dtype=dtype, device="meta")
        elif kind == "cuda":
            rebuild, args = described[6]
            tensor = rebuild(*args)
        else:
            number, size, fd_index, mapped = described[5:9]
            if number not in self.storages:
                self.storages[number] = (torch.UntypedStorage(0, device="cpu") if not size else
                                         _exact_storage(fds[fd_index], size, mapped))
            # device named: a planner may have left another default device set
            tensor = torch.empty(0, dtype=dtype, device="cpu").set_(self.storages[number],
                                                                    offset, shape, stride)
        self.tensors[key] = tensor
        return tensor

    def versions(self) -> dict[int, int]:
        """``id`` of each tensor -> its ``_version`` now (torch's count of in-place writes)."""
        return {id(t): t._version for t in self.tensors.values()}


def _exact_storage(fd: int, size: int, mapped: int) -> torch.UntypedStorage:
    """A storage of exactly ``size`` bytes at :data:`FRONT` in a shared mapping of ``mapped``
    bytes of ``fd`` (the rest is the hidden guard: see the module docstring). The mapping lives as
    long as the storage (``torch.frombuffer`` holds the ``mmap`` object)."""
    whole = mmap.mmap(fd, mapped)
    return torch.frombuffer(whole, dtype=torch.uint8, count=size, offset=FRONT).untyped_storage()


def version_bumps(kwargs: dict, before: dict[int, int]) -> dict[str, int]:
    """Per tensor argument name: how much its ``_version`` grew since ``before``
    (:meth:`Receiver.versions`), when it did. Advisory: the planner runs in this process and can
    hide a write from the counter (``.data``, numpy, ctypes); the harness's own byte comparison is
    what decides."""
    out = {}
    for name, value in kwargs.items():
        if isinstance(value, torch.Tensor) and id(value) in before:
            grew = value._version - before[id(value)]
            if grew > 0:
                out[name] = grew
    return out
