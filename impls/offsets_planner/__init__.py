"""Offsets planners behind one interface (spec ``docs/spec/offsets-planner.md``).

* :func:`get_planner` returns a planner: a keyword-only launcher with the signature of spec
  section 3 (``python``, ``triton``, ``numba-cuda``, or any ``module.path:attr``).
* :func:`planners` lists the built-in ones as (name, :class:`Availability`) pairs.
* :mod:`impls.offsets_planner.validate` is the one validator all of them share (spec section 4);
  :mod:`impls.offsets_planner.errors` its message catalog; :mod:`impls.offsets_planner.buffers` the output-buffer allocator.
* :func:`bind` binds a planner to a buffer set validated once (:mod:`impls.offsets_planner.bound_plan`): a server's
  hot path, each step checking only its three request tensors.
"""

from impls.offsets_planner.bound_plan import BoundPlan, bind
from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.errors import CATALOG, PlanError
from impls.offsets_planner.registry import (
    Availability,
    PlannerUnavailable,
    UnknownPlanner,
    availability,
    get_planner,
    planners,
)

__all__ = [
    "CATALOG",
    "Availability",
    "BoundPlan",
    "PlanBuffers",
    "PlanError",
    "PlannerUnavailable",
    "UnknownPlanner",
    "availability",
    "bind",
    "get_planner",
    "planners",
]
