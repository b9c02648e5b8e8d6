"""The gather floor of the entries benchmark: read 4 x T int64 through an index and write them.

For a step of T entries, a planner of that step's entries must at least write its four int64 outputs (T each)
and read, per entry, values found through its request. The floor is that traffic and nothing else:
``o_k[t] = s_k[index[t]]`` for four int64 sources and outputs of T elements, ``index`` an int64
permutation with the step's locality: each request's entries stay one contiguous run, the runs in
a shuffled order (:func:`inputs`; the run lengths are the step's verify lengths, from its scratch).
Kernels: :mod:`conformance.bench.gather_triton`, :mod:`conformance.bench.gather_numba`, one
launch shape each per call (:data:`SHAPES`); the sweep keeps the fastest shape per size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from conformance.bench.chain_floors import launch_shape_text

FRAMEWORKS = ("triton", "numba-cuda")
SHAPES = {
    "triton": ((128, 4), (256, 4), (512, 4), (1024, 4), (1024, 8), (2048, 8), (4096, 8)),
    "numba-cuda": ((128,), (256,), (512,), (1024,)),
}
"""Launch shapes swept on a GPU: Triton (BLOCK lanes a program, num_warps), Numba (threads a
block); the grid covers T (one program / thread per entry)."""
CPU_SHAPES = {"triton": ((128, 4),), "numba-cuda": ((32,),)}
"""Without CUDA (interpreter, simulator): one shape, run once to check its outputs."""


def shape_text(framework: str, shape: tuple) -> str:
    """:func:`conformance.bench.chain_floors.launch_shape_text` of one of :data:`SHAPES`."""
    return launch_shape_text(framework == "triton", *shape)


@dataclass
class GatherInputs:
    """``index`` int64 [max(T, 1)], ``sources`` and ``outputs`` four int64 [max(T, 1)] each."""

    n: int
    index: torch.Tensor
    sources: tuple[torch.Tensor, ...]
    outputs: tuple[torch.Tensor, ...]


def inputs(scratch: torch.Tensor, bs: int, seed: int = 0) -> GatherInputs:
    """The floor's tensors for a step whose offsets are ``scratch[: bs + 1]`` (on its device)."""
    device = scratch.device
    offsets = scratch[: bs + 1].cpu()
    n = int(offsets[-1]) if bs else 0
    lengths = offsets[1:] - offsets[:-1]
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(bs, generator=g)
    starts = torch.zeros(bs, dtype=torch.int64)
    starts[order] = torch.cumsum(lengths[order], 0) - lengths[order]
    within = torch.arange(n) - torch.repeat_interleave(offsets[:-1], lengths)
    index = torch.repeat_interleave(starts, lengths) + within
    size = max(n, 1)
    index = torch.cat([index, torch.zeros(size - n, dtype=torch.int64)]).to(device)
    sources = tuple(torch.randint(-(1 << 40), 1 << 40, (size,), generator=g).to(device)
                    for _ in range(4))
    outputs = tuple(torch.zeros(size, dtype=torch.int64, device=device) for _ in range(4))
    return GatherInputs(n, index, sources, outputs)


def call(framework: str, shape: tuple, g: GatherInputs) -> Callable[[], object]:
    """A zero-argument launch of the gather at ``shape``, capturable on torch's current stream."""
    tensors = (g.index, *g.sources, *g.outputs)
    if framework == "triton":
        from conformance.bench.gather_triton import gather_kernel as triton_gather

        block, warps = shape
        grid = (max(1, -(-g.n // block)),)
        return lambda: triton_gather[grid](*tensors, g.n, BLOCK=block, num_warps=warps)
    if framework == "numba-cuda":
        from numba import cuda

        from conformance.bench.gather_numba import gather_kernel as numba_gather

        (threads,) = shape
        blocks = max(1, -(-g.n // threads))
        if g.index.device.type != "cuda":
            arrays = [t.numpy() for t in tensors]
            return lambda: numba_gather[blocks, threads](*arrays, g.n)
        views = [cuda.as_cuda_array(t, sync=False) for t in tensors]

        def on_torch_stream():
            stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
            numba_gather[blocks, threads, stream](*views, g.n)

        return on_torch_stream
    raise ValueError(f"unknown framework {framework!r}: use one of {', '.join(FRAMEWORKS)}")


def wrong_output(g: GatherInputs) -> str | None:
    """Why the floor's last run did not gather right (``o_k[:n] != s_k[index[:n]]``), or None."""
    for k, (src, out) in enumerate(zip(g.sources, g.outputs)):
        want = src[g.index[: g.n]]
        if not torch.equal(out[: g.n], want):
            bad = int((out[: g.n] != want).nonzero()[0])
            return f"gather output {k}[{bad}] = {int(out[bad])}, expected {int(want[bad])}"
    return None
