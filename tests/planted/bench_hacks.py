"""Planted planners that game the benchmark: each published reward hack, wrapping the pure-Python
planner (``impls/offsets_planner/python_planner.py``). ``tests/test_bench_hacks.py`` runs the bench on each and
asserts its figure is refused with the reason below; the honest ``python`` planner's is published.

* ``identity_cache``: outputs cached per request-tensor identity, replayed on a hit
  (gpu-mode/reference-kernels#162's in-process result cache). Refused: outputs wrong.
* ``fingerprint_cache``: outputs cached per cheap fingerprint of the inputs (bs, token count,
  active rows: flashinfer-bench-starter-kit#21). Refused: outputs wrong.
* ``correct_first_then_wrong``: right for its first :data:`FIRST_RIGHT` calls, one offset off
  after (llm.c#851). Refused: outputs wrong.
* ``lazy``: a call writes the previous call's outputs (the work deferred to a later call or into
  the checker, gpu-mode/reference-kernels#162). Refused: outputs wrong.
* ``skip_every_other``: computes on odd calls only (batch-and-skip, gpu-mode/reference-kernels#104).
  Refused: outputs wrong.
* ``perf_counter_patched``: resolving it rebinds ``time.perf_counter`` to a clock at half speed
  (a patched timer, gpu-mode/reference-kernels#162). Refused: timer tampered.
* ``elapsed_time_patched``: resolving it rebinds ``torch.cuda.Event.elapsed_time`` to half the
  device time (gpu-mode/reference-kernels#162). Effective only on a GPU (replay); on the CPU the
  rebinding is still seen. Refused: timer tampered.
* ``bench_clock_patched``: resolving it rebinds the bench's own clock name
  (``conformance.bench.timing.perf_counter``, which the host modes' timer was picked from) to a
  clock at a quarter speed, after the bench chose its timers. Refused: timer tampered (the watched
  names are checked again once the planner is resolved).
* ``round_timer_slowed``: rebinds no name; inside the timed loop it finds the round's timer object
  on the heap (``conformance.bench.clocks.RoundClock``) and swaps the clock it reads for one at a
  quarter speed. Refused: wall clock (each round against the independent bracket, taken with the
  real clock captured before any planner import).

The first three patchers patch when the harness resolves them (this module's ``__getattr__``),
i.e. at the planner's import as the harness sees it, so that importing this module for another
planner patches nothing.
"""

from __future__ import annotations

import gc
import time

from impls.offsets_planner import python_planner
from impls.offsets_planner.contract import OUTPUT_NAMES, REQUEST_INPUT_NAMES

RPI, PREFIX, EXTEND = REQUEST_INPUT_NAMES
FIRST_RIGHT = 4
"""Right for this many calls in the process (the first call and the calibration call of the first
benchmark among them), then one offset off on every call."""


def _outputs(kw: dict) -> dict:
    return {n: kw[n].clone() for n in OUTPUT_NAMES}


def _restore(kw: dict, saved: dict) -> None:
    for name, value in saved.items():
        kw[name].copy_(value)


_BY_ID: dict[tuple, dict] = {}


def identity_cache(**kw) -> None:
    key = tuple(id(kw[n]) for n in REQUEST_INPUT_NAMES)
    if key in _BY_ID:
        return _restore(kw, _BY_ID[key])
    python_planner.launch(**kw)
    _BY_ID[key] = _outputs(kw)


_BY_PRINT: dict[tuple, dict] = {}


def fingerprint_cache(**kw) -> None:
    key = (int(kw[RPI].shape[0]), int(kw[EXTEND].sum()), int((kw[RPI] != 0).sum()))
    if key in _BY_PRINT:
        return _restore(kw, _BY_PRINT[key])
    python_planner.launch(**kw)
    _BY_PRINT[key] = _outputs(kw)


_CALLS = {"first": 0, "skip": 0}


def correct_first_then_wrong(**kw) -> None:
    python_planner.launch(**kw)
    _CALLS["first"] += 1
    if _CALLS["first"] > FIRST_RIGHT and kw[RPI].shape[0]:
        kw[OUTPUT_NAMES[1]][1] += 1  # write offsets[1]: defined for every bs >= 1


_PENDING: list[dict] = []


def lazy(**kw) -> None:
    if _PENDING:
        python_planner.launch(**_PENDING.pop())
    _PENDING.append(dict(kw, **{n: kw[n].clone() for n in REQUEST_INPUT_NAMES}))


def skip_every_other(**kw) -> None:
    _CALLS["skip"] += 1
    if _CALLS["skip"] % 2:
        python_planner.launch(**kw)


def _slow_clock(real, factor: float):
    def clock():
        return real() * factor
    return clock


def _slowed_since(real, t0: float, factor: float):
    """``real`` at ``factor`` speed since its reading ``t0``."""
    def clock():
        return t0 + (real() - t0) * factor
    return clock


_SLOWED: list[object] = []


def round_timer_slowed(**kw) -> None:
    python_planner.launch(**kw)
    if _SLOWED:
        return
    for obj in gc.get_objects():  # a round's timer exists only while its loop runs
        if type(obj).__name__ == "RoundClock" and obj.values:
            _SLOWED.append(obj)  # since this round's start reading: the round reads a quarter
            obj.base = _slowed_since(obj.base, float(obj.values[-1]), 0.25)
            return


def _patch_perf_counter() -> None:
    time.perf_counter = _slow_clock(time.perf_counter, 0.5)


def _patch_elapsed_time() -> None:
    import torch

    real = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: real(self, end) * 0.5


def _patch_bench_clock() -> None:
    from conformance.bench import timing

    timing.perf_counter = _slow_clock(timing.perf_counter, 0.25)


_PATCHERS = {"perf_counter_patched": _patch_perf_counter,
             "elapsed_time_patched": _patch_elapsed_time,
             "bench_clock_patched": _patch_bench_clock}
_PATCHED: set[str] = set()


def __getattr__(name: str):
    if name not in _PATCHERS:
        raise AttributeError(name)
    if name not in _PATCHED:
        _PATCHED.add(name)
        _PATCHERS[name]()
    return python_planner.launch
