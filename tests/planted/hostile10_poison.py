"""Tenth hostile review: planners that tell the plain run (every tensor alone in a storage of
exactly its size, as a server hands them over) from the poisoned runs ``a`` and ``b`` (outputs
inside guarded allocations) by the size of each tensor's storage, and write outside a tensor only
where no guard zone can see it. Each computes the pure-Python planner's plan."""

from __future__ import annotations

import ctypes

from impls.offsets_planner.python_planner import launch as _launch

SMEAR = 0x4141_4141_4141_4141
"""What is written past the end of ``out_write_offsets``."""


def _exact(tensor) -> bool:
    """Whether ``tensor`` is the whole of its storage (the plain run), not a view into a guarded
    allocation (runs a and b)."""
    return (tensor.storage_offset() == 0
            and tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size())


def _write_past_the_end(tensor, count: int = 2) -> None:
    """``count`` int64 of :data:`SMEAR` right after ``tensor``'s last element, through ctypes (no
    torch bounds check, no version bump)."""
    end = tensor.data_ptr() + tensor.numel() * tensor.element_size()
    ctypes.memmove(end, (ctypes.c_int64 * count)(*[SMEAR] * count), 8 * count)


def oob_only_on_plain(**kwargs):
    """The right plan; on the plain run's exact-size buffers, also two int64 past the end of
    ``out_write_offsets`` (a server's neighbouring allocation)."""
    _launch(**kwargs)
    out = kwargs["out_write_offsets"]
    if _exact(out):
        _write_past_the_end(out)


def oob_everywhere(**kwargs):
    """The control: the same write on every run (runs a and b: into the guard zone)."""
    _launch(**kwargs)
    _write_past_the_end(kwargs["out_write_offsets"])


def wrong_only_on_plain(**kwargs):
    """The right plan on poisoned buffers; on exact-size ones, the write offsets one too large
    past request 0 (judged: the plain run is judged element by element)."""
    _launch(**kwargs)
    out = kwargs["out_write_offsets"]
    if _exact(out) and out.numel() > 1:
        out[1] += 1
