"""Every tensor argument of a one-call case moved into an allocation of the harness's own, with
guard zones, so that the judge sees every byte a call can reach through its arguments' memory
(spec section 6, last line: a write outside a tensor is never a rule's to excuse).

A subject's ``build`` makes each tensor in an allocation of its exact size, and a strided view
(a case's ``change: {"strided": true}``) lies in one twice its size. Judged on its view alone, a
planner could write the storage elements the view skips, or (on a GPU, where nothing checks a
kernel's pointer arithmetic) just past the end. :class:`Allocations` therefore

* copies every allocation the arguments use (tensors sharing one stay sharing one new one) into
  a new one with :data:`GUARD_BYTES` bytes before and after it, and rebuilds each argument on it
  with the same dtype, shape, strides and values (its offset moved by the guard);
* fills what no view covers: the guard zones with the run's fill, and the whole of an allocation
  that holds only outputs too (its view is then filled by the engine as before), while an
  allocation that holds an input keeps its bytes;
* after the call, reads every such byte back and records a contract difference ``outside``
  (with its proof, so the status is ``oob``) for each element of the allocation whose bytes
  changed outside every argument's view; again at the end of the case, for an earlier run's
  allocations (a write after the call returned).

The allocations are read back whole, so a call that resized one (a storage freed or shrunk) is
refused before anything reads it: torch reads a freed storage at a non-zero offset as memory,
which is undefined (a crash), not an error.
"""

from __future__ import annotations

import torch

from conformance.engine.inputs import GUARD
from conformance.engine.verdict import Difference, VerdictData

GUARD_BYTES = GUARD * 8
"""Bytes of guard zone before and after every allocation: :data:`~conformance.engine.inputs.GUARD`
int64 elements, a multiple of every element size (so every view keeps its alignment)."""


class Allocations:
    """The guarded allocations of one run's arguments.

    Args:
        kwargs: the launcher's arguments as the subject built them (tensors and other values).
        inputs: the names of the arguments that are inputs (their allocations keep their bytes).
        fill: the run's fill, ``fill(n)``: ``n`` int64 values (CPU).

    Attributes:
        kwargs: ``kwargs`` with every tensor not on ``meta`` rebuilt in its guarded allocation
            (the same object for a tensor passed under two names).
    """

    def __init__(self, kwargs: dict, inputs: set[str], fill) -> None:
        groups: dict[object, list[str]] = {}
        for name, value in kwargs.items():
            if isinstance(value, torch.Tensor) and value.device.type != "meta":
                groups.setdefault(_key(value, name), []).append(name)
        self.kwargs, self._regions = dict(kwargs), []
        for names in groups.values():
            names.sort(key=lambda n: n in inputs)  # an output names the allocation when it can
            self._regions.append(_Region(kwargs, self.kwargs, names, inputs, fill))
        self._before: list[torch.Tensor] = []
        self._after: list[torch.Tensor] = []

    def seal(self) -> None:
        """Remember every byte, right before the call (after the engine filled the views)."""
        self._before = [r.whole.cpu().clone() for r in self._regions]

    def judge(self, data: VerdictData, run: str) -> None:
        """After the call: an ``outside`` difference per element changed outside every view.

        Raises:
            RuntimeError: the call resized an allocation (its tensors' memory is unallocated
                storage); nothing of it was read.
        """
        self.check_sizes()
        self._after = [r.whole.cpu().clone() for r in self._regions]
        for region, before, after in zip(self._regions, self._before, self._after):
            region.compare(data, run, before, after, "")

    def judge_again(self, data: VerdictData, run: str) -> None:
        """At the end of the case: what changed outside every view since :meth:`judge` (a write
        after the call returned).

        Raises:
            RuntimeError: as :meth:`judge`.
        """
        self.check_sizes()
        for region, then in zip(self._regions, self._after):
            region.compare(data, run, then, region.whole.cpu(), " after its call returned")

    def check_sizes(self) -> None:
        """Raise RuntimeError when a call resized an allocation (before anything reads it)."""
        for region in self._regions:
            size = region.whole.untyped_storage().nbytes()
            if size != region.nbytes:
                raise RuntimeError(
                    f"the call resized the storage of {', '.join(region.names)} from "
                    f"{region.nbytes} to {size} bytes: its tensors are views of unallocated "
                    "storage, which the judge cannot read")


def _key(tensor: torch.Tensor, name: str) -> object:
    """Which allocation ``tensor`` uses (an empty one is its own)."""
    storage = tensor.untyped_storage()
    if storage.nbytes() == 0:
        return ("empty", name)
    return (str(tensor.device), storage.data_ptr())


class _Region:
    """One guarded allocation and the argument views on it."""

    def __init__(self, old: dict, new: dict, names: list[str], inputs: set[str], fill) -> None:
        first = old[names[0]]
        storage, device = first.untyped_storage(), first.device
        size = storage.nbytes()
        self.nbytes = size + 2 * GUARD_BYTES
        self.names, self.dtype = names, first.dtype
        self.whole = torch.empty(self.nbytes, dtype=torch.uint8, device=device)
        self.whole.copy_(fill((self.nbytes + 7) // 8).view(torch.uint8)[: self.nbytes])
        if any(n in inputs for n in names) and size:
            self.whole[GUARD_BYTES:GUARD_BYTES + size].copy_(
                torch.empty(0, dtype=torch.uint8, device=device).set_(storage))
        self.covered = torch.zeros(self.nbytes, dtype=torch.bool)
        made: dict[int, tuple[torch.Tensor, tuple[int, int, int]]] = {}
        for name in names:
            tensor = old[name]
            if id(tensor) not in made:
                made[id(tensor)] = self._rebuild(tensor)
            new[name] = made[id(tensor)][0]
        self.span = made[id(first)][1]
        """(offset, first, last) of the first view, in elements of :attr:`dtype` of the whole
        allocation: where it starts, its lowest and highest element."""

    def _rebuild(self, tensor: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int, int]]:
        """``tensor`` rebuilt on :attr:`whole` (its bytes marked covered), and its span."""
        size = tensor.element_size()
        offset = tensor.storage_offset() + GUARD_BYTES // size
        out = torch.empty(0, dtype=tensor.dtype, device=self.whole.device).set_(
            self.whole.untyped_storage(), offset, tensor.shape, tensor.stride())
        if tensor.numel():  # marked through a view of the mask: no index per byte (O(bytes) only)
            strides = (*(s * size for s in tensor.stride()), 1)
            self.covered.as_strided((*tensor.shape, size), strides, offset * size).fill_(True)
            first = offset  # torch strides are never negative: the lowest element is the first
            last = offset + sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride()))
        else:
            first, last = offset, offset - 1
        return out, (offset, first, last)

    def compare(self, data: VerdictData, run: str, before: torch.Tensor, after: torch.Tensor,
                when: str) -> None:
        """An ``outside`` difference per element (of the first view's dtype) whose bytes outside
        every view differ between ``before`` and ``after`` (CPU bytes of the whole allocation)."""
        changed = ((before != after) & ~self.covered).nonzero().flatten()
        if not changed.numel():
            return
        size = torch.empty(0, dtype=self.dtype).element_size()
        name = self.names[0]
        offset, first, last = self.span
        guard, length = GUARD_BYTES // size, (self.nbytes - 2 * GUARD_BYTES) // size
        for j in sorted({int(b) // size for b in changed}):
            k = j - guard  # in the allocation the subject built
            where = (f"{-k} before its start, in the guard zone" if k < 0 else
                     f"{k - length + 1} past its end, in the guard zone" if k >= length else
                     "which no argument's view covers")
            index = j - offset if (j < first or j > last) else None
            data.add(Difference(0, run, "outside", name, index, _value(before, j * size, self.dtype),
                                _value(after, j * size, self.dtype), "contract",
                                f"the planner wrote outside {name}{when}: element {k} of its "
                                f"storage ({where})"))


def _value(whole: torch.Tensor, at: int, dtype: torch.dtype):
    """The element of ``dtype`` at byte ``at`` of ``whole`` (CPU bytes), as a Python value."""
    size = torch.empty(0, dtype=dtype).element_size()
    chunk = whole[at:at + size]
    return chunk.clone().view(dtype).item() if chunk.numel() == size else int(whole[at])
