"""Planted planners attacking the call tap, the provenance record and the JSON the bench writes,
each wrapping the pure-Python planner. ``tests/test_hostile_bench2.py`` runs the bench on them and
asserts the verdict the harness should give (a strict xfail where it is fooled).

* ``reads_tap_draw``: reads the running :class:`conformance.bench.call_tap.CallTap` from the
  timed call's frame (the ``steps`` generator's ``tap`` local) and, inside a timed round,
  computes only on the drawn call and the round's last call.
* ``detects_poison_value``: inside a timed round computes only when its first output holds
  :data:`conformance.bench.workloads.POISON` (the tap's fill) or on the round's last call.
* ``detects_poison_version``: the same, told by the output tensor's ``_version`` counter (which
  the tap's ``fill_`` bumps): no read of the output's values, so as cheap on a GPU.
* ``shrinks_median_late`` / ``nan_stats_late``: plan right; on the call outside the timed loop
  (after the loop's checks and ``provenance.measured``) they overwrite pytest-benchmark's cached
  statistics (``Stats.__dict__``: median a hundredth; stddev and iqr NaN) without touching the
  per-call data the harness recorded.
* ``injects_entry``: plans right; after its loop appends to pytest-benchmark's session a forged
  entry (a copy of its own, on a copied fixture) that reads as a 2 us ``triton`` ``replay`` figure
  at bs 4096 on a GPU.
* ``poses_with_truth``: poses as ``triton`` on a GPU (as ``repeat_attacks.poses_as_triton``) and
  rewrites the harness's own record of its test (``provenance._TRUTH``) the same way.
* ``skips_then_hooks_json`` / ``skips_then_atexit``: skip every timed call (refused: outputs
  wrong), then un-refuse their JSON entry with a fast median: from a pytest plugin they register
  (``pytest_benchmark_update_json`` wrapper) / from an ``atexit`` handler that rewrites the file.
* ``rigs_the_draw`` (run alone): on resolution rebinds ``os.urandom`` (zeros) and
  ``random.Random`` (a generator whose draws are always the first): the judge's seed and draws are
  then the planner's to predict.
* ``interrupts_after_slowing`` (run alone): plans right, swaps the round timer's clock for one at a
  quarter speed (as ``bench_hacks.round_timer_slowed``), then raises ``KeyboardInterrupt`` from the
  last round's first probe: before the loop's checks, and before its test's report.
"""

from __future__ import annotations

import atexit
import copy
import gc
import json
import math
import os
import random
import sys

from impls.offsets_planner import python_planner
from impls.offsets_planner.contract import OUTPUT_NAMES
from tests.planted.repeat_attacks import _runner_frame

POISON = -12345
NAME = __name__


def _mid_round(frame) -> bool:
    """Inside a timed round, not on its last call."""
    if frame is None:
        return False
    loops, i = frame.f_locals.get("loops_range"), frame.f_locals.get("_")
    return bool(loops) and i is not None and i != loops[-1]


def reads_tap_draw(**kw) -> None:
    frame = _runner_frame()
    if _mid_round(frame):
        steps = sys._getframe(1).f_locals.get("steps")
        gen = getattr(steps, "gi_frame", None)
        tap = gen.f_locals.get("tap") if gen is not None else None
        drawn = tap is not None and tap.target is not None and tap.count - 1 == tap.target
        if not drawn:
            return
    python_planner.launch(**kw)


def detects_poison_value(**kw) -> None:
    out = kw[OUTPUT_NAMES[0]]
    if _mid_round(_runner_frame()) and out.numel() and int(out[0]) != POISON:
        return
    python_planner.launch(**kw)


_VERSION: dict[int, int] = {}


def detects_poison_version(**kw) -> None:
    out = kw[OUTPUT_NAMES[0]]
    if _mid_round(_runner_frame()) and _VERSION.get(id(out)) == out._version:
        return
    python_planner.launch(**kw)
    _VERSION[id(out)] = out._version


def _own_fixtures(name: str) -> list:
    return [o for o in gc.get_objects() if type(o).__name__ == "BenchmarkFixture"
            and isinstance(getattr(o, "params", None), dict)
            and str(o.params.get("planner", "")).endswith(f":{name}")]


def _after_loop() -> bool:
    """Called from the poisoned-output check after the timed loop."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "replan_mismatch":
            return True
        frame = frame.f_back
    return False


def _rewrite_stats(name: str, fields: dict) -> None:
    for fixture in _own_fixtures(name):
        meta = getattr(fixture, "stats", None)
        if meta is not None and meta.stats.data:
            s = meta.stats
            for key, value in fields.items():
                s.__dict__[key] = value(s) if callable(value) else value


def shrinks_median_late(**kw) -> None:
    python_planner.launch(**kw)
    if _after_loop():
        _rewrite_stats("shrinks_median_late", {
            k: (lambda s, k=k: getattr(s, k) / 100) for k in ("median", "min", "mean", "q1", "q3",
                                                             "max", "ld15iqr", "hd15iqr")})


def nan_stats_late(**kw) -> None:
    python_planner.launch(**kw)
    if _after_loop():
        _rewrite_stats("nan_stats_late", {"stddev": math.nan, "iqr": math.nan, "ops": math.inf})


FORGED = "test_plan[triton-replay-4096-reused-serving]"


def injects_entry(**kw) -> None:
    python_planner.launch(**kw)
    if not _after_loop():
        return
    from pytest_benchmark.stats import Stats

    for fixture in _own_fixtures("injects_entry"):
        meta = fixture.stats
        session = next((o for o in gc.get_objects() if type(o).__name__ == "BenchmarkSession"
                        and meta in o.benchmarks), None)
        if session is None or any(getattr(b, "name", "") == FORGED for b in session.benchmarks):
            continue
        forged = copy.copy(meta)
        forged.fixture = copy.copy(fixture)
        forged.name, forged.group = FORGED, "replay"
        forged.fullname = f"conformance/bench/test_bench.py::{FORGED}"
        forged.params = {"planner": "triton", "mode": "replay", "bs": 4096, "scenario": "reused",
                         "workload": "serving"}
        forged.extra_info = dict(meta.extra_info, planner_mode="gpu", scenario="reused")
        forged.stats, forged.iterations = Stats(), 1
        for _ in range(5):
            forged.stats.update(2e-6)
        session.benchmarks.append(forged)


_POSED: list[str] = []


def poses_with_truth(**kw) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    if test not in _POSED:
        _POSED.append(test)
        provenance = sys.modules["conformance.bench.provenance"]
        for fixture in _own_fixtures("poses_with_truth"):
            fixture.params["planner"] = "triton"
            fixture.extra_info["planner_mode"] = "gpu"
        for truth in provenance._TRUTH.values():  # the harness's own record, on the heap
            if str(truth["params"].get("planner", "")).endswith(":poses_with_truth"):
                truth["params"]["planner"] = "triton"
                truth["extra"]["planner_mode"] = "gpu"
    python_planner.launch(**kw)


FAST = {"min": 1e-7, "max": 1e-7, "mean": 1e-7, "stddev": 0.0, "median": 1e-7, "iqr": 0.0,
        "q1": 1e-7, "q3": 1e-7, "ld15iqr": 1e-7, "hd15iqr": 1e-7, "ops": 1e7, "total": 1e-6}


def _unrefuse(entries: list, name: str) -> None:
    for b in entries:
        if str((b.get("params") or {}).get("planner", "")).endswith(f":{name}"):
            (b.get("extra_info") or {}).pop("refused", None)
            b["stats"] = dict(b.get("stats") or {}, **FAST)


def _config():
    return next(o for o in gc.get_objects() if type(o).__name__ == "Config"
                and type(o).__module__ == "_pytest.config")


class _Forger:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_benchmark_update_json(self, config, benchmarks, output_json):
        yield
        _unrefuse(output_json["benchmarks"], "skips_then_hooks_json")


_HOOKED: list[object] = []


def skips_then_hooks_json(**kw) -> None:
    if not _HOOKED:
        _HOOKED.append(_Forger())
        _config().pluginmanager.register(_HOOKED[0], "bench-attacks2-forger")
    if _runner_frame() is None:
        python_planner.launch(**kw)


def _rewrite_file(path) -> None:
    doc = json.loads(open(path).read())
    _unrefuse(doc["benchmarks"], "skips_then_atexit")
    with open(path, "w") as f:
        f.write(json.dumps(doc))


_EXIT: list[object] = []


def skips_then_atexit(**kw) -> None:
    if not _EXIT:
        path = _config().getoption("benchmark_json")
        _EXIT.append(path)
        if path:
            atexit.register(_rewrite_file, str(path))
    if _runner_frame() is None:
        python_planner.launch(**kw)


class _FirstDraws(random.Random):
    """Every draw the first: judged rounds 0, 1 and the last; the tapped call always call 0."""

    def sample(self, population, k, **_):
        return list(population)[:k]

    def randrange(self, *args, **_):
        return 0


def _rig() -> None:
    os.urandom = lambda n: bytes(n)
    random.Random = _FirstDraws


_RIGGED: list[bool] = []


def __getattr__(name: str):
    if name == "rigs_the_draw":
        if not _RIGGED:
            _RIGGED.append(True)
            _rig()
        return python_planner.launch
    raise AttributeError(name)


def _slowed_since(real, t0: float, factor: float):
    def clock():
        return t0 + (real() - t0) * factor
    return clock


_SLOWED: list[object] = []


def interrupts_after_slowing(**kw) -> None:
    python_planner.launch(**kw)
    frame = sys._getframe(1)
    while frame is not None:  # the judge's probe after the last round: stop before the checks
        if frame.f_code.co_name == "__call__" and "rejudge" in frame.f_code.co_filename:
            judge, index = frame.f_locals.get("self"), frame.f_locals.get("round_index")
            if _SLOWED and index == max(judge.judged):
                raise KeyboardInterrupt
            break
        frame = frame.f_back
    if not _SLOWED and _runner_frame() is not None:
        for obj in gc.get_objects():
            if type(obj).__name__ == "RoundClock" and obj.values:
                _SLOWED.append(obj)
                obj.base = _slowed_since(obj.base, float(obj.values[-1]), 0.25)
                break
