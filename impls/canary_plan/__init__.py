"""The whole canary plan as one call (spec ``docs/spec/canary-plan.md``): upstream's wrapper
``launch_canary_plan_kernels`` (sglang 0.5.23) over this project's offsets and entries planners.

* :mod:`.contract`: the launcher's 19 keywords and which stage keyword each feeds.
* :mod:`.errors`: the wrapper's three messages; :mod:`.pipeline`: :func:`~.pipeline.compose`, the
  wrapper's checks and steps around any two stage launchers.
* :data:`PLANNERS`: the built-in pipelines, each an (offsets planner, entries planner) pair of
  :func:`impls.offsets_planner.registry.get_planner` and :func:`impls.entries_planner.get_planner`
  names; :func:`get_planner` composes one, :func:`planner_mode` says how it runs here.
"""

from __future__ import annotations

from collections.abc import Callable

from impls import entries_planner
from impls.canary_plan.pipeline import compose
from impls.offsets_planner import registry

PLANNERS: dict[str, tuple[str, str]] = {
    "python": ("python", "python"),
    "triton": ("triton", "triton"),
    "numba-cuda": ("numba-cuda", "numba-cuda"),
    "triton+python-entries": ("triton", "python"),
}
"""Built-in pipelines: name -> (offsets planner, entries planner)."""
ANY_DEVICE = "cpu"
"""The mode of the pure-Python planners, which run on tensors of any device."""
WORST_FIRST = ("simulator", "interpreter", "gpu")
"""The other modes, worst (slowest, furthest from a real kernel) first."""


def get_planner(name: str) -> Callable[..., None]:
    """The whole-plan launcher of built-in pipeline ``name`` (a key of :data:`PLANNERS`).

    Raises:
        KeyError: an unknown name.
        RuntimeError: either stage is unavailable here (its message says why).
    """
    offsets, entries = PLANNERS[name]
    return compose(registry.get_planner(offsets), entries_planner.get_planner(entries))


def combined_mode(offsets_mode: str | None, entries_mode: str | None) -> str:
    """The mode of a pipeline from its stages' modes: ``unavailable`` when either is (None or
    ``unavailable``); a pure-Python stage (:data:`ANY_DEVICE`) takes the other's mode; two
    device-bound stages give the worse of the two (:data:`WORST_FIRST`), and ``unavailable`` when
    one needs CUDA tensors (``gpu``) and the other CPU ones."""
    modes = {m or "unavailable" for m in (offsets_mode, entries_mode)}
    if "unavailable" in modes or not modes <= {ANY_DEVICE, *WORST_FIRST}:
        return "unavailable"
    bound = modes - {ANY_DEVICE}
    if not bound:
        return ANY_DEVICE
    if "gpu" in bound and len(bound) > 1:
        return "unavailable"
    return min(bound, key=WORST_FIRST.index)


def planner_mode(name: str) -> str:
    """How built-in pipeline ``name`` runs here: ``cpu``, ``gpu``, ``interpreter``, ``simulator``
    or ``unavailable`` (:func:`combined_mode` of its two stages)."""
    offsets, entries = PLANNERS[name]
    return combined_mode(registry.availability(offsets).mode, entries_planner.planner_mode(entries))
