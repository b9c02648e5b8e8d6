"""The Numba CUDA entries kernel's GPU launch through one ``cuLaunchKernel``, its parameters
packed as Numba's own marshalling packs them, instead of Numba's dispatcher.

Numba's launch re-types and re-marshals its twelve array arguments on every call (about 0.6 ms
of host time a call on an H200 host: ``reports/gpu/2026-12-03-a/entries-bench/``); the driver
launch writes the same flattened parameters (:func:`impls.offsets_planner.numba_packed_launch.array_parameters`:
meminfo, parent, nitems, itemsize, data, shape..., strides... per array, then the scalars) into
ctypes cells and calls the driver once, as the offsets Numba planner does.

The kernel is compiled once for the contract's C-contiguous argument types (:data:`ARGUMENT_TYPES`
below, in :func:`signature`); once per process, before its first launch, :func:`_choose` checks
that the packing equals Numba's own on sample tensors of those types (any difference or surprise
in Numba's internals: every call takes Numba's ordinary launch, :data:`FALLBACK_REASON` says why).
A call whose tensors are not all of those dtypes, ranks and C-contiguous, or whose scalars do not
fit int64, takes Numba's ordinary launch too. Captured in a CUDA graph like any launch on torch's current stream.
"""

from __future__ import annotations

import ctypes

import torch

from impls.offsets_planner import numba_packed_launch as packed_launch

FALLBACK_REASON: str | None = None
"""Why this process launches the entries kernel through Numba's dispatcher, or None."""
ARGUMENT_TYPES = ("int64[::1]", "int64[::1]", "int32[:, ::1]", "int64[::1]", "int64[::1]",
                  "int32[::1]", "int32[:, ::1]", "int64[::1]", "int64[::1]", "int64[::1]",
                  "int64[::1]", "int64[::1]", *("int64",) * 7)
"""The kernel's parameters as the planner passes them (spec section 3 dtypes; the LUT's stand-in
is the scratch, the pool's the table, the valid lengths' the prefixes): req_pool_indices,
prefix_lens, req_to_token, LUT, scratch, enable, pool, valid lengths, the four outputs, then bs,
verify_capacity, lut_len, has_lut, has_pool, offset, window."""
_INT64 = (-(1 << 63), (1 << 63) - 1)
_STATE: dict = {}
_TORCH = {"int64": torch.int64, "int32": torch.int32}
EXPECTED = tuple((_TORCH[t.split("[")[0]], 2 if "[:, ::1]" in t else 1)
                 for t in ARGUMENT_TYPES if "[" in t)
"""(dtype, ndim) of each array parameter: a call whose tensors differ takes Numba's launch,
which types each call (the compiled signature would read them wrong)."""


def _matches(tensors: tuple[torch.Tensor, ...], scalars: tuple[int, ...]) -> bool:
    return (len(tensors) == len(EXPECTED)
            and all(t.dtype == d and t.dim() == n and t.is_contiguous()
                    for t, (d, n) in zip(tensors, EXPECTED))
            and len(scalars) == len(ARGUMENT_TYPES) - len(EXPECTED)
            and all(isinstance(s, int) and _INT64[0] <= s <= _INT64[1] for s in scalars))


def signature():
    """:data:`ARGUMENT_TYPES` as a Numba signature (``void(...)``)."""
    from numba import types

    def parse(text: str):
        dtype = getattr(types, text.split("[")[0])
        return dtype[:, ::1] if "[:, ::1]" in text else dtype[::1] if "[::1]" in text else dtype

    return types.void(*[parse(t) for t in ARGUMENT_TYPES])


def _sample(device: torch.device) -> tuple[list[torch.Tensor], list[int]]:
    def t(*shape, dtype=torch.int64):
        n = 1
        for s in shape:
            n *= s
        return torch.arange(n, dtype=dtype, device=device).reshape(shape)

    arrays = [t(2), t(2), t(3, 5, dtype=torch.int32), t(7), t(3), t(1, dtype=torch.int32),
              t(4, 6, dtype=torch.int32), t(2), t(9), t(9), t(9), t(9)]
    return arrays, [2, 9, 7, 1, 1, -3, 4]


def _choose(kernel, device: torch.device) -> int | None:
    """The loaded kernel's driver handle when the packing matches Numba's own, else None (and
    :data:`FALLBACK_REASON` set)."""
    global FALLBACK_REASON
    from numba import cuda

    try:
        if packed_launch.LAUNCH is None:
            packed_launch.bind_launch()
        handle = packed_launch.kernel_handle(kernel)
        overload = next(iter(kernel.overloads.values()))
        arrays, scalars = _sample(device)
        theirs: list = []
        args = [cuda.as_cuda_array(x, sync=False) for x in arrays] + scalars
        for ty, value in zip(overload.argument_types, args):
            overload._prepare_args(ty, value, 0, [], theirs)
        theirs = [int(getattr(v, "value", v)) for v in theirs]
        if theirs != packed_launch.array_parameters(tuple(arrays), *scalars):
            FALLBACK_REASON = "packed parameters differ from Numba's marshalling"
            return None
        return handle
    except Exception as exc:  # noqa: BLE001 - any surprise in Numba's internals: ordinary launch
        FALLBACK_REASON = f"{type(exc).__name__}: {exc}"
        return None


def launch(kernel, tensors: tuple[torch.Tensor, ...], scalars: tuple[int, ...], blocks: int,
           threads: int, device: torch.device) -> bool:
    """Launch ``kernel`` (compiled for :func:`signature`) on ``tensors`` and ``scalars`` in
    :data:`ARGUMENT_TYPES` order on torch's current stream of ``device``; False, launching
    nothing, when this call needs Numba's ordinary launch.

    Raises:
        RuntimeError: ``cuLaunchKernel`` returned an error.
    """
    if FALLBACK_REASON is not None or not _matches(tensors, scalars):
        return False
    index = device.index
    if index != packed_launch.GET_DEVICE():
        with torch.cuda.device(index):
            return launch(kernel, tensors, scalars, blocks, threads, device)
    handle = _STATE.get(id(kernel))
    if handle is None:
        handle = _STATE[id(kernel)] = _choose(kernel, device)
        if handle is None:
            return False
    cells = [ctypes.c_int64(v) for v in packed_launch.array_parameters(tensors, *scalars)]
    params = (ctypes.c_void_p * len(cells))(*[ctypes.addressof(c) for c in cells])
    one = ctypes.c_uint(1)
    call = (ctypes.c_void_p(handle), ctypes.c_uint(blocks), one, one, ctypes.c_uint(threads), one,
            one, ctypes.c_uint(0), ctypes.c_void_p(packed_launch.raw_stream(index)), params, None)
    rc = packed_launch.LAUNCH(*call)
    if rc == 201:  # CUDA_ERROR_INVALID_CONTEXT: this thread has no current context yet
        from numba import cuda

        with cuda.gpus[index]:
            rc = packed_launch.LAUNCH(*call)
    if rc:
        raise RuntimeError(f"numba-cuda entries planner: cuLaunchKernel failed with CUresult {rc}")
    return True
