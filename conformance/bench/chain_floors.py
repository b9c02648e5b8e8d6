"""The dependent-load chain floors, ``chain-triton`` and ``chain-numba``
(:data:`conformance.bench.floors.CHAIN_FLOORS`): per bs, on the planner's own workload, the loads a
planner cannot avoid (three inputs, then the table entry, then the LUT entry, one store, no scan),
in the launch shapes the bench tries (:data:`CHAIN_SHAPES`, the fastest kept:
:func:`best_chain_shape`) and how the tables print a shape (:func:`launch_shape_text`).

:func:`chain_call` returns ``(eager_fn, capturable_fn)`` as :func:`conformance.bench.floors.floor_call`
does. The kernels are those of the module :mod:`conformance.bench.floor_modules` bound. Every name
here is on the bench's watch list (:func:`conformance.bench.clocks.watch`): a planner that rebinds
one gets every figure after it refused.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import MappingProxyType

import torch

from conformance.bench import clocks
from conformance.bench.floor_modules import kernel_module
from conformance.bench.floors import CHAIN_FLOORS
from conformance.corpus.corpus_subject import contract as _contract

OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES

Call = Callable[[], object]

CHAIN_BLOCK = 512
"""Lanes per program (Triton) or threads per block (Numba) of a chain kernel whose shape was not
chosen (:func:`best_chain_shape`: without a GPU, and in the eager and launch modes' first call)."""
POINTERS = "pointers"
"""A Numba chain shape's second value for the raw-pointer kernel
(:data:`conformance.bench.chain_numba.chain_pointer_kernel`); None: Numba arrays."""
CHAIN_SHAPES = MappingProxyType({
    "chain-triton": ((32, 1), (64, 1), (128, 4), (256, 4), (512, 8)),
    "chain-numba": ((32, None), (64, None), (128, None), (256, None), (512, None),
                    (32, POINTERS), (64, POINTERS), (128, POINTERS))})
"""Launch shapes a chain floor tries on the GPU, per framework: ``(lanes per program, num_warps)``
for Triton, ``(threads per block, None or POINTERS)`` for Numba (array or raw-pointer
parameters). The fastest at each bs on the H200 was among them in the one-pass sweep
(reports/gpu/2026-12-02-c/one_pass.md; the pointer kernel: reports/gpu/2026-12-04-b/). Read-only
(a planner cannot drop the fastest shapes in place) and watched."""
SHAPE_TRIAL_REPLAYS = 20
"""Replays per sample when a chain floor's shapes are tried (:func:`best_chain_shape`)."""


def launch_shape_text(triton: bool, block: int, warps: int | str | None = None) -> str:
    """A launch shape as the bench tables print it: ``BLOCK 128, 4 warps`` (Triton: lanes per
    program and num_warps) or ``256 threads`` (Numba: threads per block; ``256 threads,
    pointers`` for the raw-pointer chain kernel)."""
    if triton:
        return f"BLOCK {block}, {warps} warps"
    return f"{block} threads" + (f", {POINTERS}" if warps == POINTERS else "")


def shape_label(name: str, shape: tuple[int, int | None]) -> str:
    """:func:`launch_shape_text` of chain floor ``name``'s shape."""
    return launch_shape_text(name == "chain-triton", *shape)


def best_chain_shape(name: str, kw: dict) -> tuple[tuple[int, int | None], dict[str, float]]:
    """The fastest of :data:`CHAIN_SHAPES` for chain floor ``name`` on ``kw``, by replay device
    time (us per plan, one chain per CUDA graph, p50 of 5 samples), and every shape's figure
    ``{shape_label: us}``. Without CUDA tensors: ``((CHAIN_BLOCK, 4 or None), {})``, untried.
    A floor chosen as the fastest of several shapes is the lowest one the bench can claim: every
    ratio to it is the strictest of those shapes'."""
    default = (CHAIN_BLOCK, 4 if name == "chain-triton" else None)
    if kw[REQUEST_INPUT_NAMES[0]].device.type != "cuda":
        return default, {}
    from conformance.bench import timing

    trials = {}
    for shape in CHAIN_SHAPES[name]:
        _eager, capturable = chain_call(name, kw, shape)
        trials[shape] = timing.graph_replay_time(capturable, replays=SHAPE_TRIAL_REPLAYS,
                                                 repeats=5).median
    best = min(trials, key=trials.get)
    return best, {shape_label(name, s): round(us, 3) for s, us in trials.items()}


SEEDS_NAME = OUTPUT_NAMES[2]
"""``out_write_seed_slot_indices``: where a chain kernel writes its one value per lane."""


def _named(kw: dict, names: tuple[str, ...]) -> list:
    return [kw[n] for n in names]


def chain_call(name: str, kw: dict, shape: tuple[int, int | None] | None = None
               ) -> tuple[Call, Call]:
    """``(eager, capturable)`` calls of chain floor ``name`` on the launcher arguments ``kw``
    (reads its request tensors, table and LUT; writes ``out_write_seed_slot_indices[:bs]``), in
    launch shape ``shape`` (:data:`CHAIN_SHAPES`; default ``CHAIN_BLOCK`` lanes, 4 warps)."""
    block, warps = shape or (CHAIN_BLOCK, 4)
    rpi, prefix, extend = _named(kw, REQUEST_INPUT_NAMES)
    table, lut = _named(kw, TABLE_INPUT_NAMES)
    bs, out = int(rpi.shape[0]), kw[SEEDS_NAME]
    lut_len = 0 if lut is None else int(lut.shape[0])
    lut = lut if lut is not None else torch.zeros(1, dtype=torch.int64, device=rpi.device)
    grid = max(1, -(-bs // block))
    if name == "chain-triton":
        chain_kernel = kernel_module(name).chain_kernel
        args = (rpi, prefix, extend, table, lut, out, bs,
                table.stride(0), table.shape[0], table.shape[1], lut_len)
        fn = lambda: chain_kernel[(grid,)](*args, BLOCK=block, HAS_LUT=lut_len > 0,  # noqa: E731
                                           num_warps=warps)
        return fn, fn
    if name == "chain-numba":
        return _numba_chain_call(rpi, prefix, extend, table, lut, out, bs, lut_len, grid, block,
                                 warps == POINTERS)
    raise ValueError(f"unknown chain floor {name!r}: use one of {', '.join(CHAIN_FLOORS)}")


def _numba_chain_call(rpi, prefix, extend, table, lut, out, bs: int, lut_len: int, grid: int,
                      block: int, pointers: bool) -> tuple[Call, Call]:
    """:func:`chain_call` of ``chain-numba``: the array kernel, or with ``pointers`` the
    raw-pointer one (the table C-contiguous, as spec section 4 requires)."""
    chain_numba = kernel_module("chain-numba")
    from numba import cuda

    tensors = (rpi, prefix, extend, table.reshape(-1) if pointers else table, lut, out)
    kernel = chain_numba.chain_pointer_kernel if pointers else chain_numba.chain_kernel
    shape = (int(table.shape[0]), int(table.shape[1])) if pointers else ()
    if rpi.device.type != "cuda":
        arrays = [t.numpy() for t in tensors]
        fn = lambda: kernel[grid, block](*arrays, bs, lut_len, *shape)  # noqa: E731
        return fn, fn
    args = ([t.data_ptr() for t in tensors] if pointers
            else [cuda.as_cuda_array(t, sync=False) for t in tensors])

    def on_torch_stream():
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        kernel[grid, block, stream](*args, bs, lut_len, *shape)

    return on_torch_stream, on_torch_stream


clocks.watch(sys.modules[__name__], "chain_call", "best_chain_shape", "launch_shape_text",
             "shape_label", "_named", "_numba_chain_call", "POINTERS", "CHAIN_SHAPES",
             "CHAIN_BLOCK", "SEEDS_NAME", "CHAIN_FLOORS", "kernel_module")
