"""The Numba dependent-load chain kernels of the ``chain-numba`` floor
(conformance/bench/chain_floors.py).

Per thread: load the three request inputs, then the table entry, then the LUT entry, write one
value; no scan. A table with no columns is never read. The three request loads come first and
unconditionally (as the planners' seed
lanes make them): a condition such as ``row > 0 and extend[i] > 0`` would load ``extend`` only
after ``row`` came back, one dependent round trip more than a plan needs (Python's ``and``
short-circuits, and the compiler may not hoist a load past it), so the floor would be slower than
the work it stands for.

Two kernels of the same chain, because the parameter style is a cost of the framework, not of the
plan: :data:`chain_kernel` takes Numba arrays (46 kernel parameters: each array is flattened to
meminfo, parent, size, itemsize, data, shape and strides) and :data:`chain_pointer_kernel` raw
pointers and the table's shape as scalars (10). The floor takes the faster of the two at each bs
(``reports/gpu/2026-12-04-b/``: 0.2 us apart at some bs on an H200).

A module of its own so that the kernels refer to ``cuda`` as a module global, which Numba's
simulator swaps for its fake module. :func:`conformance.bench.kernel_modes.numba_simulated` runs
first: it chooses the simulator without CUDA before anything imports ``numba.cuda``, as the Numba
planner does.
"""

import sys

from conformance.bench import clocks
from conformance.bench.kernel_modes import NUMBA_REBOUND, numba_simulated, watch_kernels

SIMULATED = numba_simulated()  # first: chooses the simulator without CUDA, as the Numba planner does

from numba import cuda, types  # noqa: E402

SIGNATURE = ("void(int64[::1], int64[::1], int64[::1], int32[:, ::1], int64[::1], int64[::1], "
             "int64, int64)")
_P64 = types.CPointer(types.int64)
POINTER_SIGNATURE = types.void(_P64, _P64, _P64, types.CPointer(types.int32), _P64, _P64,
                               types.int64, types.int64, types.int64, types.int64)
"""The pointer kernel's: the six tensors' data pointers, then bs, lut_len, table rows, table
columns (the table C-contiguous)."""


def chain(rpi, prefix, extend, table, lut, out, bs, lut_len):
    """out[i] = lut[table[rpi[i], prefix[i] - 1]] for i < bs (guarded and clamped as the planner
    reads them; -1 where a request reads nothing)."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < bs:
        row = rpi[i]
        p = prefix[i]
        e = extend[i]  # before any test: the three loads in flight at once
        slot = -1
        if row > 0 and row < table.shape[0] and p > 0 and e > 0 and table.shape[1] > 0:
            slot = table[row, min(p - 1, table.shape[1] - 1)]
            if lut_len > 0 and slot >= 0:
                slot = lut[min(slot, lut_len - 1)]
        out[i] = slot


def chain_pointers(rpi, prefix, extend, table, lut, out, bs, lut_len, rows, cols):
    """:func:`chain` on raw pointers (GPU) or 1-D arrays (simulator): ``table`` is the table's
    ``rows * cols`` entries, row after row."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < bs:
        row = rpi[i]
        p = prefix[i]
        e = extend[i]  # before any test: the three loads in flight at once
        slot = -1
        if row > 0 and row < rows and p > 0 and e > 0 and cols > 0:
            slot = table[row * cols + min(p - 1, cols - 1)]
            if lut_len > 0 and slot >= 0:
                slot = lut[min(slot, lut_len - 1)]
        out[i] = slot


chain_kernel = cuda.jit(chain) if SIMULATED else cuda.jit(SIGNATURE)(chain)
chain_pointer_kernel = (cuda.jit(chain_pointers) if SIMULATED
                        else cuda.jit(POINTER_SIGNATURE)(chain_pointers))
clocks.watch(sys.modules[__name__], "chain", "chain_pointers", "SIGNATURE", "POINTER_SIGNATURE")
watch_kernels(sys.modules[__name__], NUMBA_REBOUND, "chain_kernel", "chain_pointer_kernel")
"""Rebinding a kernel here (a slower one, so that every Numba figure's floor is higher and its
ratio lower), or slowing one through its state (an instance ``call``), gets every bench figure
after it refused (:func:`conformance.bench.clocks.watch`,
:func:`conformance.bench.kernel_modes.watch_kernels`)."""
