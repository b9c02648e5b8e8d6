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

This module is the harness's end (:class:`Sender`); the worker's end is
:mod:`conformance.robustness.shared_receiver`, the socket between them
:mod:`conformance.robustness.worker_socket`.
"""

from __future__ import annotations

import os
import random

import torch

from conformance.robustness.guard_pages import (
    FRONT, fenced_base, fenced_spans, join, sealed_home, slack_bytes, window)

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
