"""The empty Numba kernel of the ``empty-numba`` floor (conformance/bench/floors.py).

One int64 array argument, no body: the cost of a Numba launch alone. On a GPU it is compiled
when this module is imported, for ``void(int64[::1])`` (the signature every GPU figure of this
floor was measured with); in Numba's simulator (no CUDA) ``cuda.jit`` compiles nothing until the
first launch.

A module of its own, like the other floors' kernels
(:data:`conformance.bench.floor_modules.KERNEL_MODULES`), so that the bench imports and binds it
at collection, before any planner is imported
(:func:`conformance.bench.floor_modules.bind_kernels`),
checks that it is this file, and watches the kernel's name, its state and the ``sys.modules``
entry: a kernel that a planner sets in its place, or slows through its state, gets every figure
after it refused. :func:`conformance.bench.kernel_modes.numba_simulated` runs first: it chooses
the simulator without CUDA before anything imports ``numba.cuda``, as the Numba planner does.
"""

import sys

from conformance.bench.kernel_modes import NUMBA_REBOUND, numba_simulated, watch_kernels

SIMULATED = numba_simulated()  # first: the simulator without CUDA, as the Numba planner chooses

from numba import cuda  # noqa: E402

SIGNATURE = "void(int64[::1])"


def empty(a):
    pass


empty_kernel = cuda.jit(empty) if SIMULATED else cuda.jit(SIGNATURE)(empty)
# a kernel set in its place, or one slowed through its state: every figure after it refused
watch_kernels(sys.modules[__name__], NUMBA_REBOUND, "empty_kernel")
