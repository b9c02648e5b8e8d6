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
storage: at least a page before it (:data:`FRONT`) and a *slack* after it (to the end of the
storage's last page, then one more page), both filled from the poison seed (layout:
:mod:`conformance.robustness.guard_pages`). The worker maps the whole file but hands the planner a
storage of exactly the storage's size (``torch.frombuffer`` on the mapping). A write outside an
argument's memory -- past its end or before its start, on the plain run's exact-size buffers as
much as past the guard zones of the poisoned runs -- lands in the guard, where the harness reads it
after the call (:meth:`Sender.after_call`) from the file it owns; in a server it would land in the
neighbouring allocation. A planner cannot tell the runs apart by the mapping: every storage of
every run has its guards. The file is sealed (``F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL``) before
the worker gets its descriptor: a planner that finds the descriptor (its ``mmap`` keeps one) cannot
cut the file, whose pages the harness's own mapping would lose (its next copy a SIGBUS in pytest's
process), nor seal it against the harness's writes. CUDA storages have no guard (their memory is
the caching allocator's; compute-sanitizer's memcheck is the check there).

Fenced inputs (CPU): a storage that holds only the arguments the Sender is told are read-only
inputs (``fenced``) is laid out so that one end of its views lies on a page boundary, and the
worker maps every page of its home that no view touches ``PROT_NONE``: a read outside the
tensors there faults (the case is a ``crash``) even when its value is thrown away. What that
catches and what it cannot (a page is the unit): :mod:`conformance.robustness.guard_pages`. The
harness's own mapping stays read-write, and outputs are never fenced.

The worker keeps one tensor object per distinct descriptor for the whole case, so a planner sees
the very same tensor object when the harness hands it the same view again (the way a server reuses
its CUDA-graph input buffers), and the same ``data_ptr`` for the same storage.
Messages from the harness to the worker are pickled (the worker trusts the harness); the worker's
replies are JSON, never unpickled by the harness.
"""

from __future__ import annotations

import os
import pickle
import random
import socket

import torch

from conformance.robustness.guard_pages import (  # noqa: F401 - FRONT, SEALS: this module's API
    FRONT, SEALS, exact_storage, fenced_base, fenced_spans, join, protect, sealed_home, slack_bytes,
    window)

MAX_MESSAGE = 1 << 20
"""Bytes of one message on the socket (descriptors only: no tensor data travels)."""
MAX_FDS = 200
"""File descriptors one message may carry (SCM_RIGHTS allows 253)."""
PAST_END_KEPT = 16
"""Elements written past the end of one storage that one call's record keeps (the first ones)."""


class _Home:
    """One shared storage's home: the harness's storage (``ours``), the file ``fd`` and the
    harness's mapping of the storage's bytes in it (``mapped``, at ``base`` in the file), each
    hidden guard's start in the file and what the harness filled it with, the pages the worker may
    touch (``pages``, :func:`~conformance.robustness.guard_pages.window`; None: all of them), and
    the argument the guards are reported under (its first tensor's name, its element size, offset
    and length, so a byte of a guard is an element index of that tensor: negative before it)."""

    def __init__(self, ours: torch.UntypedStorage, fd: int, mapped: torch.UntypedStorage,
                 base: int, guards: list[tuple[int, bytes]], name: str, tensor,
                 pages: tuple[int, int] | None) -> None:
        self.ours, self.fd, self.mapped, self.guards, self.name = ours, fd, mapped, guards, name
        self.base, self.pages = base, pages
        self.length = guards[1][0] + len(guards[1][1])
        self.itemsize, self.offset = tensor.element_size(), tensor.storage_offset()
        self.numel = tensor.numel()

    def widen(self, span: tuple[int, int] | None) -> None:
        """Let the worker touch the pages of bytes ``span`` too (a later call's views of the
        storage, e.g. a longer bs); all pages for ``None`` (a view that is not fenced)."""
        if self.pages is not None:
            self.pages = None if span is None else join(self.pages, window(self.base, *span))

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
                    index = (start - self.base + at) // size - self.offset
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
    :meth:`close` (the worker may hold views of it). ``fenced``: the names of the read-only
    input arguments whose CPU storages the worker maps ``PROT_NONE`` outside their views (see the
    module docstring; none by default)."""

    def __init__(self, seed: int = 0, fenced=()) -> None:
        self.numbers: dict[int, int] = {}
        self.kept: list = []
        self.homes: list[_Home] = []
        self.by_key: dict[int, _Home] = {}
        self.seed, self.fenced = seed, frozenset(fenced)

    def describe(self, kwargs: dict) -> tuple[dict, list[int]]:
        """(the call's message, the file descriptors it carries) for launcher ``kwargs``: each
        tensor as a descriptor, every other value as it is (ints, None). Every CPU storage shared
        so far gets its bytes copied into its home: the worker sees what the harness holds now."""
        described, fds, spans = {}, [], fenced_spans(kwargs, self.fenced)
        for key, span in spans.items():
            if key in self.by_key:
                self.by_key[key].widen(span)
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                described[name] = self._tensor(name, value, fds, spans)
            else:
                described[name] = ("value", value)
        for home in self.homes:
            home.mapped.copy_(home.ours)
        return {"kwargs": described}, fds

    def _tensor(self, name: str, tensor: torch.Tensor, fds: list[int], spans: dict) -> tuple:
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
        if fresh and storage.nbytes():
            size, number, span = storage.nbytes(), self.numbers[key], spans[key]
            base = FRONT if span is None else fenced_base(*span)
            front = random.Random(f"{self.seed}:front:{number}").randbytes(base)
            fill = random.Random(f"{self.seed}:slack:{number}").randbytes(slack_bytes(size, base))
            fd, mapped = sealed_home(size, base, front, fill)
            home = _Home(storage, fd, mapped, base, [(0, front), (base + size, fill)], name, tensor,
                         None if span is None else window(base, *span))
            self.homes.append(home)
            self.by_key[key] = home
            fds.append(fd)
        home = self.by_key.get(key)
        if home is None:
            return ("cpu", *view, self.numbers[key], 0, None, 0, 0, None)
        return ("cpu", *view, self.numbers[key], storage.nbytes(), len(fds) - 1 if fresh else None,
                home.length, home.base, home.pages)

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
        self.by_key.clear()
        self.kept.clear()


class Receiver:
    """The worker's end for one case: maps storages and keeps one tensor per descriptor."""

    def __init__(self) -> None:
        self.storages: dict[int, torch.UntypedStorage] = {}
        self.pages: dict[int, tuple[int, int] | None] = {}  # what protect() last applied
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
        if kind == "cpu":
            self._map(*described[5:11], fds)
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
            # device named: a planner may have left another default device set
            tensor = torch.empty(0, dtype=dtype, device="cpu").set_(self.storages[described[5]],
                                                                    offset, shape, stride)
        self.tensors[key] = tensor
        return tensor

    def _map(self, number: int, size: int, fd_index, mapped: int, base: int, pages, fds) -> None:
        """Map storage ``number`` on its first descriptor; give its pages the protection the
        harness asks for (:func:`~conformance.robustness.guard_pages.protect`) when it changed."""
        if number not in self.storages:
            self.storages[number] = (torch.UntypedStorage(0, device="cpu") if not size else
                                     exact_storage(fds[fd_index], size, mapped, base))
        if size and self.pages.get(number, None) != pages:
            protect(self.storages[number], base, mapped, pages)
            self.pages[number] = pages

    def altered(self, message: dict, kwargs: dict) -> list[str]:
        """What became of the caller's tensor objects (``kwargs``, built from ``message``): for
        each tensor argument whose dtype, shape, strides or offset no longer are its descriptor's,
        or whose CPU storage is no longer the shared one (``set_``, ``resize_`` of the storage),
        one line naming the argument and the change. A launcher fills its outputs *in place*
        (spec section 3) and writes nothing else (section 5): in a server the caller keeps these
        objects (a CUDA graph's buffers), so an output left 0-d or rebound to other memory breaks
        its next read, whatever bytes the harness's own tensors hold. Read from this process: a
        planner can hide a change from it (like every report of the worker)."""
        out = []
        for name, described in message["kwargs"].items():
            if described[0] not in ("cpu", "cuda", "meta"):
                continue
            tensor, (dtype, shape, stride, offset) = kwargs[name], described[1:5]
            try:
                now = (str(tensor.dtype).removeprefix("torch."), tuple(tensor.shape),
                       tuple(tensor.stride()), tensor.storage_offset())
                moved = described[0] == "cpu" and (
                    tensor.untyped_storage().data_ptr() != self.storages[described[5]].data_ptr()
                    or tensor.untyped_storage().nbytes() != self.storages[described[5]].nbytes())
            except Exception as exc:  # noqa: BLE001 - a planner may leave the object unreadable
                out.append(f"argument {name}: unreadable after the call ({type(exc).__name__})")
                continue
            what = [f"{field} {was} -> {got}" for field, was, got in zip(
                ("dtype", "shape", "strides", "storage offset"), (dtype, shape, stride, offset),
                now) if was != got]
            what += ["its storage no longer the caller's memory (set_, a storage resize_)"] * moved
            if what:
                out.append(f"argument {name}: {', '.join(what)} (the caller's tensor object, "
                           "changed in place; spec sections 3 and 5)")
        return out

    def versions(self) -> dict[int, int]:
        """``id`` of each tensor -> its ``_version`` now (torch's count of in-place writes)."""
        return {id(t): t._version for t in self.tensors.values()}


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
