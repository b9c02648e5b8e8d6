"""The empty Triton kernel of the ``empty-triton`` floor (conformance/bench/floors.py).

A module of its own because Triton resolves a kernel's annotations (``tl.constexpr``) in the
module's globals when it compiles for a GPU: the kernel cannot be defined inside a function that
imports ``tl`` locally. :func:`conformance.bench.kernel_modes.prepare_triton` runs first so that,
without CUDA, ``TRITON_INTERPRET=1`` is set before anything is decorated (as the Triton planner
sets it).
"""

import sys

from conformance.bench.kernel_modes import TRITON_REBOUND, prepare_triton, watch_kernels

prepare_triton()  # first: chooses the interpreter without CUDA, as the Triton planner does

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def empty_kernel(x_ptr, BLOCK: tl.constexpr):
    """Does nothing: one pointer argument and one constexpr, the cost of a launch alone."""
    pass


# a rebound kernel, or one slowed through its state (a pre-run hook): every figure after it refused
watch_kernels(sys.modules[__name__], TRITON_REBOUND, "empty_kernel")
