"""The floors every planner figure is divided by; shared by the bench scripts.

A floor is the cheapest thing of its kind the framework can do, measured in the same run:

* ``empty-triton``: a Triton kernel with one pointer argument and one constexpr that does nothing
  (compiled on the GPU, Triton's interpreter on the CPU): the floor of the ``triton`` planner;
* ``empty-numba``: a ``numba.cuda.jit`` kernel with one int64 array argument that does nothing
  (compiled for ``void(int64[::1])`` on the GPU, Numba's simulator on the CPU): the floor of
  ``numba-cuda``. Eager: Numba's ordinary launch with a Numba device array (Numba's own
  launch cost); replay: launched on torch's current stream so that a torch CUDA graph captures it;
* ``torch-op``: ``x.add_(1)`` on a one-element tensor: the floor of ``python`` and external
  planners;
* ``chain-triton`` and ``chain-numba`` (:data:`CHAIN_FLOORS`): per bs, on the planner's own
  workload, the dependent loads a planner cannot avoid (three inputs, then the table entry, then
  the LUT entry, one store, no scan): the real limit of a plan's device time
  (:func:`conformance.bench.chain_floors.chain_call`).

:func:`floor_call` returns ``(eager_fn, capturable_fn)``; each mode of the suite divides a planner's
figure by its floor's figure in the corresponding floor mode (:data:`FLOOR_MODE`).

Every function here is on the bench's watch list (:func:`conformance.bench.clocks.watch`, bound
before any planner is imported): a planner that rebinds one (``floor_call`` made to time extra
work, say, so that every floor after it is truly slower and its own ratio to the floor shrinks)
gets every figure after it refused, its own first.

The kernels of ``empty-triton``, ``empty-numba``, ``chain-triton`` and ``chain-numba`` live in
modules of this folder, bound once before any planner is imported
(:mod:`conformance.bench.floor_modules`); the chain floors' shapes and calls are
:mod:`conformance.bench.chain_floors`. The torch-op floor calls ``torch.Tensor.add_`` as captured
at this module's import, and the name is watched (:func:`floor_call`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import torch

from conformance.bench import clocks
from conformance.bench.floor_modules import empty_numba_kernel, empty_triton_kernel

FLOORS = ("empty-triton", "empty-numba", "torch-op")
FLOOR_OF_PLANNER = {"triton": "empty-triton", "numba-cuda": "empty-numba", "python": "torch-op",
                    "triton-bound": "empty-triton", "numba-cuda-bound": "empty-numba"}
"""Which floor a planner is compared with; any other planner (``module:attr``) gets torch-op."""
CHAIN_FLOORS = ("chain-triton", "chain-numba")
"""Dependent-load chain kernels, one per framework, timed per bs on the planner's workload: per
lane the three inputs, then the table entry, then the LUT entry, one store, no scan (the work a
planner cannot avoid)."""
CHAIN_OF_PLANNER = {"triton": "chain-triton", "triton-bound": "chain-triton",
                    "numba-cuda": "chain-numba", "numba-cuda-bound": "chain-numba"}
CHAIN_PLANNER = {"chain-triton": "triton", "chain-numba": "numba-cuda"}
"""The planner whose mode (device, interpreter or simulator) a chain floor runs in."""
FLOOR_MODE = {"eager": "eager", "launch": "launch", "validate": "eager", "replay": "replay"}
"""A planner mode -> the floor mode it is divided by (validation has no kernel: the eager floor)."""
FLOOR_MODES = ("eager", "launch", "replay")


def floor_of(planner: str) -> str:
    """The floor name for ``planner`` (:data:`FLOOR_OF_PLANNER`, else ``torch-op``)."""
    return FLOOR_OF_PLANNER.get(planner, "torch-op")


Call = Callable[[], object]


def floor_call(name: str, device: torch.device, _add=torch.Tensor.add_) -> tuple[Call, Call]:
    """``(eager, capturable)`` zero-argument calls of floor ``name`` on ``device``.

    ``capturable`` is the variant a torch CUDA graph can capture (on torch's current stream);
    for Triton and torch it is the eager call itself. ``torch-op`` calls ``x.add_(1)`` through
    ``_add``, the real ``torch.Tensor.add_`` captured when this module is imported (before any
    planner is): a planner that rebinds ``torch.Tensor.add_`` does not reach the floor (and the
    name is watched: the rebinding refuses every figure after it).
    """
    if name == "torch-op":
        x = torch.ones(1, device=device)
        fn = lambda: _add(x, 1)  # noqa: E731
        return fn, fn
    if name == "empty-triton":
        kernel, marker = empty_triton_kernel(), torch.zeros(1, device=device)
        fn = lambda: kernel[(1,)](marker, BLOCK=32)  # noqa: E731
        return fn, fn
    if name == "empty-numba":
        from numba import cuda

        kernel = empty_numba_kernel()
        if device.type != "cuda":
            host = torch.zeros(4, dtype=torch.int64).numpy()
            fn = lambda: kernel[1, 32](host)  # noqa: E731
            return fn, fn
        dev_array = cuda.device_array(4, dtype="int64")

        def on_torch_stream():
            stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
            kernel[1, 32, stream](dev_array)

        return (lambda: kernel[1, 32](dev_array)), on_torch_stream
    raise ValueError(f"unknown floor {name!r}: use one of {', '.join(FLOORS)}")


clocks.watch(sys.modules[__name__], "floor_of", "floor_call", "FLOORS", "CHAIN_FLOORS",
             "FLOOR_OF_PLANNER", "FLOOR_MODE", "CHAIN_OF_PLANNER", "CHAIN_PLANNER",
             "empty_triton_kernel", "empty_numba_kernel")
clocks.watch(torch, "Tensor.add_")  # what the torch-op floor stands for: its rebinding refused
