"""Planted planners for the fifth hostile review of the corpus engine and its reports
(``tests/test_hostile5.py``).

* ``writes_then_raises``: zeroes ``out_write_offsets[0]`` before it validates (an "initialise
  the outputs first" launcher), then plans as the pure-Python planner. On a valid step the plan
  writes 0 there too, so every valid case passes; on a step that must raise it raises exactly the
  documented error (type, message, order), after having written one output element. Spec §4:
  the checks run *before* launching, so a step that must raise writes nothing (the judge quotes
  that clause for the write).
* ``returns_and_writes_outside``: on a step that must raise, returns normally after writing one
  element just before ``out_write_offsets`` (its guard zone, through the storage); plans right
  on a valid step. The judge condenses what such a step wrote into one line: is the write
  outside the tensor still named?
"""

from __future__ import annotations

from impls.offsets_planner import python_planner
from impls.offsets_planner.errors import PlanError


def writes_then_raises(**kw) -> None:
    out = kw["out_write_offsets"]
    if out.dim() == 1 and out.numel():
        out[0] = 0
    python_planner.launch(**kw)


def returns_and_writes_outside(**kw) -> None:
    try:
        python_planner.validate_arguments(kw)
    except PlanError:
        out = kw["out_write_offsets"]
        if out.storage_offset() > 0:
            out.as_strided((1,), (1,), out.storage_offset() - 1).fill_(7)
        return None
    python_planner.launch(**kw)
