"""Where a shared CPU storage lies in its home file, and which pages of it the isolation worker may
touch: the hidden guards of :mod:`conformance.robustness.shared_tensors`, made to fault reads
around the read-only inputs.

Layout. A home is a memfd of ``base`` bytes of hidden guard, the storage's ``size`` bytes, then a
slack to the end of that page and one page more (:func:`slack_bytes`), so the file is a whole
number of pages and both guards are at least a page. ``base`` is :data:`FRONT` (one page) for a
storage that is not fenced: it starts on a page boundary. Every byte is the harness's: it fills the
guards and reads them back after each call through the file (never through the worker's mapping).

Fence (spec section 6, last line: no implementation may ever read or write outside a tensor;
section 8: a read outside the table is a contract failure). A storage whose every view in the call
that shares it is a *fenced* argument (:class:`conformance.robustness.shared_tensors.Sender`'s
``fenced``: the isolated engine names the contract's inputs, ``req_to_token``, the LUT
``full_to_swa_index_mapping``, ``req_pool_indices``, ``prefix_lens``, ``extend_seq_lens``) gets a
*window*: the pages that its views' bytes ``[lo, hi)`` touch (offsets in the storage, the union
over every call of the case). The worker maps the home read-write on the window only and
``PROT_NONE`` everywhere else (:func:`protect`): a read or write there raises SIGSEGV in the
worker, and the case is a ``crash``, whatever the planner does with the value. A page is the unit
of protection, and ``[lo, hi)`` is rarely a whole number of pages, so ``base`` puts one end of it
on a page boundary (:func:`fenced_base`):

* the start, when the storage holds bytes before its views (the guard zone that
  :mod:`conformance.engine.inputs` lays before the table and the LUT of runs ``a`` and ``b``):
  every byte before the first element faults, that guard zone included;
* else the end (the plain run's exact-size tensors, the per-request inputs): every byte past the
  last element faults, a storage's own bytes past its views (a per-request input's garbage tail,
  past its page) included.

What is caught, then: a read of a fenced storage's home outside the pages its views touch, at
any distance up to the home's ends (at least a page before the storage, a page past the end of
its last page). So in a case with a plain run (every launcher case, :mod:`conformance.engine.plain`)
a read before the table or the LUT faults in runs ``a`` and ``b`` and one past its end in the
plain run, one element away as much as a page. What is not:

* a read within the rest of a page the window shares with bytes outside the views: past the end
  in runs ``a`` and ``b`` (the back guard zone, whose fill still proves a read whose value reaches
  an output, :mod:`conformance.engine.outside`), before the start in the plain run and of every
  per-request input;
* a read between a strided view's elements;
* a read beyond the home (whatever the worker has mapped there);
* any read of an output: outputs are never fenced, and a write into their hidden guards is judged
  as ``outside`` (:func:`conformance.engine.outside.guard_writes`);
* CUDA storages (no guard; compute-sanitizer's memcheck is the check there).

A write into a fenced page is a crash too, no longer an ``outside`` record.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os

import torch

PAGE = mmap.PAGESIZE
FRONT = PAGE
"""Least bytes of hidden guard before a shared CPU storage (exactly this when it is not fenced)."""
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
"""What a shared file is sealed against before the worker gets it: shrinking (which would take
pages from under the harness's mapping), growing, and any further seal (``F_SEAL_FUTURE_WRITE``
would make the harness's own writes to its guards fail)."""
_PROT_NONE, _PROT_RW = 0, mmap.PROT_READ | mmap.PROT_WRITE


def slack_bytes(nbytes: int, base: int = FRONT) -> int:
    """Bytes of hidden guard after a storage of ``nbytes`` at file offset ``base``: to the end of
    its last page, then one page more (so the file ends on a page boundary)."""
    return -(base + nbytes) % PAGE + PAGE


def view_extent(tensor: torch.Tensor) -> tuple[int, int]:
    """``[lo, hi)``: the bytes of its storage that ``tensor``'s elements span (``lo == hi`` for an
    empty tensor, at its offset)."""
    size, lo = tensor.element_size(), tensor.storage_offset() * tensor.element_size()
    if tensor.numel() == 0:
        return lo, lo
    last = sum((n - 1) * s for n, s in zip(tensor.shape, tensor.stride()))  # strides are >= 0
    return lo, lo + (last + 1) * size


def join(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The least ``[start, end)`` that holds both spans (an empty one adds nothing)."""
    if a[1] <= a[0]:
        return b
    return a if b[1] <= b[0] else (min(a[0], b[0]), max(a[1], b[1]))


def fenced_spans(kwargs: dict, fenced: frozenset[str]) -> dict[int, tuple[int, int] | None]:
    """Per CPU storage of launcher ``kwargs`` (by ``_cdata``): the bytes ``(lo, hi)`` its tensors
    span (:func:`view_extent`, joined) when each of them is an argument named in ``fenced``, else
    None (a storage an output or an unnamed argument uses is never fenced)."""
    spans: dict = {}
    for name, value in kwargs.items():
        if isinstance(value, torch.Tensor) and value.device.type == "cpu":
            key, span = value.untyped_storage()._cdata, view_extent(value)
            old = spans.get(key, span)
            spans[key] = None if old is None or name not in fenced else join(old, span)
    return spans


def fenced_base(lo: int, hi: int) -> int:
    """The file offset of a fenced storage whose views span bytes ``[lo, hi)``: the least one of
    at least :data:`FRONT` that puts ``lo`` on a page boundary when ``lo > 0``, else ``hi``."""
    edge = lo if lo > 0 else hi
    return FRONT + (-edge % PAGE)


def window(base: int, lo: int, hi: int) -> tuple[int, int]:
    """The pages (file offsets, page-aligned ``[start, end)``) that bytes ``[lo, hi)`` of a storage
    at ``base`` touch; empty (``start == end``) for ``lo == hi``."""
    start = (base + lo) // PAGE * PAGE
    return (start, start) if hi <= lo else (start, -(-(base + hi) // PAGE) * PAGE)


def protect(storage: torch.UntypedStorage, base: int, mapped: int,
            pages: tuple[int, int] | None) -> None:
    """Make the worker's mapping of a home (``mapped`` bytes, ``storage`` at ``base`` in it)
    read-write on ``pages`` (:func:`window`) and ``PROT_NONE`` elsewhere; all read-write for
    ``None``.

    Raises:
        OSError: ``mprotect`` failed (its errno).
    """
    start = storage.data_ptr() - base
    if start % PAGE:
        raise ValueError(f"a home mapped at {start:#x}, not on a page boundary")
    spans = [(0, mapped, _PROT_RW)] if pages is None else [
        (0, pages[0], _PROT_NONE), (pages[0], pages[1], _PROT_RW), (pages[1], mapped, _PROT_NONE)]
    for at, end, prot in spans:
        if end > at and _libc().mprotect(ctypes.c_void_p(start + at), ctypes.c_size_t(end - at),
                                         prot) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mprotect of a shared storage's pages: {os.strerror(err)}")


def sealed_home(size: int, base: int, front: bytes,
                fill: bytes) -> tuple[int, torch.UntypedStorage]:
    """A new sealed shared-memory file laid out as ``front`` (``base`` bytes), ``size`` bytes of
    storage, ``fill``: (its descriptor, which the caller closes; the harness's own mapping of the
    storage's bytes, as a storage of ``size`` bytes)."""
    fd = os.memfd_create("conformance-shared", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, base + size + len(fill))
        os.pwrite(fd, front, 0)
        os.pwrite(fd, fill, base + size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        skip = base % PAGE
        home = torch.frombuffer(mmap.mmap(fd, skip + size, offset=base - skip), dtype=torch.uint8,
                                count=size, offset=skip).untyped_storage()
    except BaseException:
        os.close(fd)
        raise
    return fd, home


def exact_storage(fd: int, size: int, mapped: int, base: int) -> torch.UntypedStorage:
    """A storage of exactly ``size`` bytes at ``base`` in a shared mapping of ``mapped`` bytes of
    ``fd`` (the rest is the hidden guard). The mapping lives as long as the storage
    (``torch.frombuffer`` holds the ``mmap`` object)."""
    whole = mmap.mmap(fd, mapped)
    return torch.frombuffer(whole, dtype=torch.uint8, count=size, offset=base).untyped_storage()


_LIBC: list = []


def _libc():
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
        _LIBC[0].mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return _LIBC[0]
