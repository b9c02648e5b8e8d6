"""The Numba dependent-load chain kernel of the ``chain-numba`` floor (conformance/bench/floors.py).

Per thread: load the three request inputs, then the table entry, then the LUT entry, write one
value; no scan. A module of its own so that the kernel refers to ``cuda`` as a module global, which
Numba's simulator swaps for its fake module. :func:`conformance.bench.kernel_modes.numba_simulated`
runs first: it chooses the simulator without CUDA before anything imports ``numba.cuda``, as the
Numba planner does.
"""

from conformance.bench.kernel_modes import numba_simulated

SIMULATED = numba_simulated()  # first: chooses the simulator without CUDA, as the Numba planner does

from numba import cuda  # noqa: E402

SIGNATURE = ("void(int64[::1], int64[::1], int64[::1], int32[:, ::1], int64[::1], int64[::1], "
             "int64, int64)")


def chain(rpi, prefix, extend, table, lut, out, bs, lut_len):
    """out[i] = lut[table[rpi[i], prefix[i] - 1]] for i < bs (guarded and clamped as the planner
    reads them; -1 where a request reads nothing)."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < bs:
        row = rpi[i]
        p = prefix[i]
        slot = -1
        if row > 0 and row < table.shape[0] and p > 0 and extend[i] > 0:
            slot = table[row, min(p - 1, table.shape[1] - 1)]
            if lut_len > 0 and slot >= 0:
                slot = lut[min(slot, lut_len - 1)]
        out[i] = slot


chain_kernel = cuda.jit(chain) if SIMULATED else cuda.jit(SIGNATURE)(chain)
