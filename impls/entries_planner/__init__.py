"""The entries planner (second stage of sglang's canary plan): spec ``docs/spec/entries-planner.md``.

It expands the offsets planner's exclusive prefix sums (``verify_offsets_scratch``) into the flat
verify plan: one entry per (request, position in its window), each a slot, an expected token, an
expected position and the previous slot.

* :mod:`.contract`: the 14 keyword arguments as data (names, dtypes, ranks, length rules).
* :mod:`.errors`: the error catalog (exact messages, in check order); :mod:`.validate` the one
  validator all planners call first.
* Three planners with upstream's keyword-only signature ``launch(**kwargs) -> None``:
  ``python`` (:mod:`.python_planner`, the readable reference), ``triton`` (:mod:`.triton_planner`)
  and ``numba-cuda`` (:mod:`.numba_cuda_planner`). :func:`get_planner` imports one by name (the
  GPU ones choose their mode, compiled or interpreter/simulator, when first imported).

This package imports nothing of the harness and nothing of the offsets planner's package layout
beyond shared helpers (the error class, the Triton / Numba mode choice).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

PLANNERS: dict[str, str] = {
    "python": "impls.entries_planner.python_planner",
    "triton": "impls.entries_planner.triton_planner",
    "numba-cuda": "impls.entries_planner.numba_cuda_planner",
}
"""Built-in entries planners: name -> module (each exports ``launch`` and ``MODE``)."""


def get_planner(name: str) -> Callable[..., None]:
    """The ``launch`` function of built-in entries planner ``name`` (a key of :data:`PLANNERS`).

    Raises:
        KeyError: an unknown name.
        RuntimeError: the planner is not available here (its ``probe()`` says why).
    """
    module = importlib.import_module(PLANNERS[name])
    probe = getattr(module, "probe", None)
    if probe is not None:
        available, why = probe()
        if not available:
            raise RuntimeError(f"entries planner {name!r} unavailable: {why}")
    return module.launch


def planner_mode(name: str) -> str:
    """How built-in planner ``name`` runs here: ``cpu``, ``gpu``, ``interpreter`` or ``simulator``
    (``unavailable`` when it cannot run)."""
    module = importlib.import_module(PLANNERS[name])
    return getattr(module, "MODE", None) or "unavailable"
