"""An external planner with a Triton kernel, as a user's would be: the pure-Python planner's
outputs, then ``out_write_num_valid_reqs`` read and written back by a one-program Triton kernel.
On a machine without CUDA it runs only under Triton's interpreter (``TRITON_INTERPRET=1``, which
the harness sets for external planners when it is unset); compiled, it fails there with Triton's
"0 active drivers"."""

from __future__ import annotations

import triton
import triton.language as tl

from impls.offsets_planner.python_planner import launch as python_launch


@triton.jit
def _copy_back(ptr):
    """Loads one element and stores it back (touches the buffer through Triton)."""
    tl.store(ptr, tl.load(ptr))


def launch(**kwargs) -> None:
    """Spec section 3's launcher: the pure-Python planner, plus one Triton kernel call."""
    python_launch(**kwargs)
    _copy_back[(1,)](kwargs["out_write_num_valid_reqs"])
