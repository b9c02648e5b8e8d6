"""Planted planners of the twenty-fourth hostile review against ``python -m conformance bench``
under pytest-xdist and the bench's report (``tests/test_hostile24.py``). Each wraps the
pure-Python planner.

* ``forges_report_entry``: plans right; on its first call appends to its own test item's
  ``user_properties`` (the list a pytest-xdist worker sends the controller, which gathers every
  benchmark entry from it) a forged entry: a 2 us ``triton`` ``replay`` figure at bs 4096 on a
  GPU, a test the run never collected.
* ``skips_then_forges_own``: skips every timed call but a round's last (its figure is refused:
  outputs wrong) and appends to its item's ``user_properties`` an unrefused copy of its own entry
  with a fast median, under another worker's name.
"""

from __future__ import annotations

import copy
import sys

from impls.offsets_planner import python_planner
from tests.planted.repeat_attacks import _runner_frame

FORGED = "test_plan[triton-replay-4096-reused-serving]"
PROP = "benchmark_json"  # conformance.bench.provenance.ENTRY_PROP, spelt out
FAST = {"min": 2e-6, "max": 2e-6, "mean": 2e-6, "stddev": 0.0, "median": 2e-6, "iqr": 0.0,
        "q1": 2e-6, "q3": 2e-6, "ld15iqr": 2e-6, "hd15iqr": 2e-6, "ops": 5e5, "total": 1e-5,
        "rounds": 5, "iterations": 1, "iqr_outliers": 0, "stddev_outliers": 0,
        "outliers": "0;0", "data": [2e-6] * 5}
_DONE: set[str] = set()


def _item():
    """The pytest item whose call runs now (the ``item`` local of pytest's call frames)."""
    frame = sys._getframe(1)
    while frame is not None:
        item = frame.f_locals.get("item")
        if item is not None and hasattr(item, "user_properties") and hasattr(item, "nodeid"):
            return item
        frame = frame.f_back
    return None


def _entry(name: str, fullname: str, params: dict, mode: str) -> dict:
    return {"group": params.get("mode"), "name": name, "fullname": fullname, "params": params,
            "param": "-".join(str(v) for v in params.values()),
            "extra_info": {"planner_mode": mode, "scenario": params.get("scenario"),
                           "workload": params.get("workload"), "first_call_us": 10.0,
                           "worker": "gw0"},
            "options": {}, "stats": dict(FAST)}


def forges_report_entry(**kw) -> None:
    python_planner.launch(**kw)
    item = _item()
    if item is None or item.nodeid in _DONE:
        return
    _DONE.add(item.nodeid)
    path = item.nodeid.split("::")[0]
    item.user_properties.append((PROP, _entry(
        FORGED, f"{path}::{FORGED}", {"planner": "triton", "mode": "replay", "bs": 4096,
                                      "scenario": "reused", "workload": "serving"}, "gpu")))


def skips_then_forges_own(**kw) -> None:
    frame = _runner_frame()
    if frame is not None:
        loops, i = frame.f_locals.get("loops_range"), frame.f_locals.get("_")
        if loops and i is not None and i != loops[-1]:
            return
    python_planner.launch(**kw)
    item = _item()
    if item is None or item.nodeid in _DONE:
        return
    _DONE.add(item.nodeid)
    params = dict(item.callspec.params)
    item.user_properties.append((PROP, _entry(item.name, item.nodeid, params, "cpu")))


__all__ = ["forges_report_entry", "skips_then_forges_own", "copy"]
