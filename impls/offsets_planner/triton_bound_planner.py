"""``triton-bound``: the Triton planner through a bound plan (:mod:`impls.offsets_planner.bound_plan`).

Binds on first use per buffer set and calls the bound plan, so that the corpus checks the bound
path (per-step checks of the request tensors only) byte for byte like every other planner.
"""

from __future__ import annotations

from impls.offsets_planner import triton_planner
from impls.offsets_planner.bound_plan import bound_launcher

BOUND_OF = triton_planner
"""The planner this one binds (the bench binds it directly: :func:`impls.offsets_planner.bind`)."""
MODE = triton_planner.MODE
probe = triton_planner.probe
launch = bound_launcher(triton_planner)
