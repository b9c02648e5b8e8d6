"""The isolation worker's end of the shared tensors (:mod:`conformance.robustness.shared_tensors`
is the harness's end and says how they are shared): the planner's keyword arguments mapped from
one call's descriptors (:class:`Receiver`), one tensor object per distinct descriptor for the
whole case; afterwards, what became of the caller's tensor objects (:meth:`Receiver.altered`,
spec sections 3 and 5) and how far each tensor's ``_version`` grew (:func:`version_bumps`).
"""

from __future__ import annotations

import os

import torch

from conformance.robustness.guard_pages import exact_storage, protect


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
