"""Planted planners that game ``bench --repeat N`` (the whole measurement N times, goals on the
median of the N repeats), each wrapping the pure-Python planner (``impls/offsets_planner/python_planner.py``).
``tests/test_repeat_attacks.py`` runs the bench on them and asserts the verdict the harness should
give.

* ``wrong_in_repeat2``: right in repeat 1 and 3, one write offset off on every call of repeat 2;
  it tells repeats apart by the test id pytest puts in ``PYTEST_CURRENT_TEST``
  (``...-repeat2] (call)``). Its repeat 2 must be refused, and the figure (the merge of the
  repeats) with it.
* ``raises_in_repeat2``: right in repeat 1 and 3, raises on every call of repeat 2 (told apart
  as ``wrong_in_repeat2`` does): that repeat's test errors before anything is timed, so it leaves
  no benchmark entry at all.
* ``last_iteration_only``: reads pytest-benchmark's runner frame (``sys._getframe``): inside a
  timed round it computes only on the round's last iteration (the call whose outputs the
  between-rounds judge reads) and does nothing on the others; outside the timed loop (the judge's
  probes, the poisoned-output check) it computes. Its timed calls are mostly no-ops: the figure
  is that of about one call in ``iterations``.
* ``wrong_when_timed``: one write offset off on every call made inside pytest-benchmark's runner,
  right otherwise (so the judge's probes are right, the last timed call of a round is not).
* ``wrong_when_untimed``: the reverse: right inside the runner, wrong on every other call.
* ``markup_when_judged``: right, except that when the between-rounds judge
  (``conformance.bench.rejudge.RoundJudge``) is on the stack it raises an error whose message is
  HTML and Markdown: the refusal reason quotes it in the benchmark table.
* ``poses_as_triton``: on its first call in each test (each repeat) finds its own pytest-benchmark
  fixture on the heap (``gc``) and rewrites its ``params`` planner to ``triton`` and its
  ``extra_info.planner_mode`` to ``gpu``; it plans right on every call (so that nothing but the
  rewrite can give it away). The JSON entry would then read as a GPU triton figure, which the
  serving goals judge; the harness puts back what it recorded and refuses the entry.
* ``slows_the_floor``: right; its first call rebinds ``conformance.bench.floors.floor_call`` (a
  bench name no watch list holds) so that every floor benchmark after it times a floor call
  preceded by some pure-Python work: the floors its ratios are divided by are truly slower (the
  wall clock agrees), so its ratio to the floor shrinks.
"""

from __future__ import annotations

import gc
import os
import sys

from impls.offsets_planner import python_planner
from impls.offsets_planner.contract import OUTPUT_NAMES, REQUEST_INPUT_NAMES

RPI = REQUEST_INPUT_NAMES[0]
WRONG_REPEAT = "-repeat2]"


def _off_by_one(kw: dict) -> None:
    if kw[RPI].shape[0]:
        kw[OUTPUT_NAMES[1]][1] += 1  # write offsets[1]: defined for every bs >= 1


def wrong_in_repeat2(**kw) -> None:
    python_planner.launch(**kw)
    if WRONG_REPEAT in os.environ.get("PYTEST_CURRENT_TEST", ""):
        _off_by_one(kw)


def raises_in_repeat2(**kw) -> None:
    if WRONG_REPEAT in os.environ.get("PYTEST_CURRENT_TEST", ""):
        raise RuntimeError("repeat 2: no figure")
    python_planner.launch(**kw)


def _runner_frame():
    """pytest-benchmark's ``runner`` frame when called from inside a timed round, else None."""
    frame = sys._getframe(2)
    for _ in range(6):
        if frame is None:
            return None
        if frame.f_code.co_name == "runner" and "pytest_benchmark" in frame.f_code.co_filename:
            return frame
        frame = frame.f_back
    return None


def last_iteration_only(**kw) -> None:
    frame = _runner_frame()
    if frame is not None:
        loops, i = frame.f_locals.get("loops_range"), frame.f_locals.get("_")
        if loops and i is not None and i != loops[-1]:
            return  # not the round's last call: nobody reads these outputs
    python_planner.launch(**kw)


def wrong_when_timed(**kw) -> None:
    python_planner.launch(**kw)
    if _runner_frame() is not None:
        _off_by_one(kw)


def wrong_when_untimed(**kw) -> None:
    python_planner.launch(**kw)
    if _runner_frame() is None:
        _off_by_one(kw)


MARKUP = "<img src=x onerror=alert(1)> **bold** [link](http://example.invalid)"


def markup_when_judged(**kw) -> None:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "__call__" and "rejudge" in frame.f_code.co_filename:
            raise RuntimeError(MARKUP)
        frame = frame.f_back
    python_planner.launch(**kw)


_POSED_IN: list[str] = []
POSE = {"planner": "triton"}


def poses_as_triton(**kw) -> None:
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    if test not in _POSED_IN:  # once per test (per repeat): the heap walk is not in later calls
        _POSED_IN.append(test)
        for obj in gc.get_objects():
            if type(obj).__name__ == "BenchmarkFixture" and isinstance(obj.params, dict) \
                    and str(obj.params.get("planner", "")).endswith(":poses_as_triton"):
                obj.params.update(POSE)
                obj.extra_info["planner_mode"] = "gpu"
    python_planner.launch(**kw)



def _slowed_floor_call(real):
    def floor_call(name, device):
        eager, capturable = real(name, device)

        def slow():
            sum(range(2000))  # about 20-40 us of pure Python before the floor's one op
            return eager()
        return slow, capturable
    return floor_call


def slows_the_floor(**kw) -> None:
    from conformance.bench import floors

    if floors.floor_call.__name__ == "floor_call" and not hasattr(floors, "_slowed"):
        floors.floor_call = _slowed_floor_call(floors.floor_call)  # an unwatched bench name
        floors._slowed = True
    python_planner.launch(**kw)
