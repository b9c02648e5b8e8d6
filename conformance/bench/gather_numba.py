"""The Numba CUDA gather kernel of the entries benchmark's ``gather-numba`` floor
(:mod:`conformance.bench.gather_floor`).

Per thread t < n: read ``index[t]``, then the four int64 sources there, write the four values at t.
A module of its own for the reason given in :mod:`conformance.bench.chain_numba`.
"""

from conformance.bench.kernel_modes import numba_simulated

SIMULATED = numba_simulated()  # first: chooses the simulator without CUDA, as the Numba planner does

from numba import cuda  # noqa: E402

SIGNATURE = "void(" + ", ".join(["int64[::1]"] * 9) + ", int64)"


def gather(index, s0, s1, s2, s3, o0, o1, o2, o3, n):
    """``o_k[t] = s_k[index[t]]`` for t < n, k in 0..3; one thread per entry."""
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if t < n:
        j = index[t]
        o0[t] = s0[j]
        o1[t] = s1[j]
        o2[t] = s2[j]
        o3[t] = s3[j]


gather_kernel = cuda.jit(gather) if SIMULATED else cuda.jit(SIGNATURE)(gather)
