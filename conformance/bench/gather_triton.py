"""The Triton gather kernel of the entries benchmark's ``gather-triton`` floor
(:mod:`conformance.bench.gather_floor`).

Per lane t < n: read ``index[t]``, then the four int64 sources at that index, and write the four
values at t: the loads and stores of an entries plan of n entries (four int64 outputs), with none of
its arithmetic. A module of its own for the reason given in :mod:`conformance.bench.empty_triton`.
"""

from conformance.bench.kernel_modes import prepare_triton

prepare_triton()  # first: chooses the interpreter without CUDA, as the Triton planner does

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def gather_kernel(index_ptr, s0, s1, s2, s3, o0, o1, o2, o3, n, BLOCK: tl.constexpr):
    """``o_k[t] = s_k[index[t]]`` for t < n, k in 0..3; one program per BLOCK lanes."""
    t = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    live = t < n
    j = tl.load(index_ptr + t, mask=live, other=0)
    tl.store(o0 + t, tl.load(s0 + j, mask=live), mask=live)
    tl.store(o1 + t, tl.load(s1 + j, mask=live), mask=live)
    tl.store(o2 + t, tl.load(s2 + j, mask=live), mask=live)
    tl.store(o3 + t, tl.load(s3 + j, mask=live), mask=live)
