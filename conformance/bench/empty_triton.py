"""The empty Triton kernel of the ``empty-triton`` floor (conformance/bench/floors.py).

A module of its own because Triton resolves a kernel's annotations (``tl.constexpr``) in the
module's globals when it compiles for a GPU: the kernel cannot be defined inside a function that
imports ``tl`` locally. :mod:`impls.offsets_planner.triton_planner` is imported first so that, without CUDA, it has
set ``TRITON_INTERPRET=1`` before anything is decorated.
"""

import impls.offsets_planner.triton_planner  # noqa: F401  (first: chooses the interpreter without CUDA)
import triton
import triton.language as tl


@triton.jit
def empty_kernel(x_ptr, BLOCK: tl.constexpr):
    """Does nothing: one pointer argument and one constexpr, the cost of a launch alone."""
    pass
