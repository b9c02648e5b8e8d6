"""What each benchmark mode times, and how many rounds (issue #5, items 1 and 2).

Modes of a planner, each a zero-argument call on one workload (:mod:`conformance.bench.workloads`):

* ``eager``: ``launch(**kw)``: validation + launch, host wall time per call; on the GPU a round is
  bracketed by ``torch.cuda.synchronize()`` (:func:`conformance.bench.timing.synced_perf_counter`),
  so queued device work is paid for.
* ``validate``: the validator the planner itself calls (``python``: the shared validator;
  ``triton`` / ``numba-cuda``: its memo, :mod:`impls.validate_cache`), host time.
* ``launch``: ``launch(**kw)`` with that validator replaced, for the benchmark's duration, by a
  function returning the plan it already returned: the launch alone, planner code untouched.
* ``replay``: GPU only: one call captured in a CUDA graph, replays timed with CUDA events behind a
  sleep kernel (:class:`conformance.bench.timing.EventClock`): device time per plan. Not for
  ``python`` (it reads tensor values on the host, so it cannot be captured).

Rounds (:func:`budget`): pytest-benchmark's pedantic mode, ``iterations`` calls a round sized so
a round lasts about :data:`ROUND_S` (1 to :data:`MAX_ITERATIONS` calls), ``rounds`` rounds after
``warmup`` rounds; p50, min and IQR are over the rounds' per-call times.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from conformance.bench import timing as gt

MODES = ("eager", "validate", "launch", "replay")
VALIDATOR_ATTR = {"python": "validate_launch", "triton": "validate_mapping",
                  "numba-cuda": "validate_launch_cached"}
"""The module-level name through which each built-in planner's ``launch`` calls its validator
(``validate_mapping`` takes the keyword arguments as one dict)."""
ROUND_S = {"cuda": 2e-3, "cpu": 1e-3}
"""Target seconds per round by device type."""
ROUNDS = {"cuda": 15, "cpu": 3}
WARMUP_ROUNDS = {"cuda": 2, "cpu": 1}
MAX_ITERATIONS = 1000
REPLAYS_PER_ROUND = 100
"""Graph replays a ``replay`` round queues behind one sleep kernel (gpu_timing's default)."""


@dataclass(frozen=True)
class Budget:
    """pytest-benchmark pedantic arguments: ``rounds`` x ``iterations`` calls after ``warmup``."""

    rounds: int
    iterations: int
    warmup: int


def budget(fn: Callable[[], object], device: torch.device, mode: str,
           rounds: int | None = None) -> Budget:
    """Rounds for ``fn`` (already called once): iterations from one more timed call."""
    kind = device.type
    rounds = rounds or ROUNDS[kind]
    if mode == "replay":
        return Budget(rounds, REPLAYS_PER_ROUND, WARMUP_ROUNDS[kind])
    t0 = gt.synced_perf_counter()
    fn()
    once = max(gt.synced_perf_counter() - t0, 1e-7)
    iterations = int(min(MAX_ITERATIONS, max(1, ROUND_S[kind] / once)))
    return Budget(rounds, iterations, WARMUP_ROUNDS[kind])


def timer_for(mode: str, device: torch.device, calls: int):
    """The pytest-benchmark timer of a mode: CUDA events for ``replay``; wall time synchronised
    per round on the GPU for host modes (``validate`` queues nothing: plain wall time)."""
    if mode == "replay":
        return gt.EventClock(calls)
    if device.type == "cuda" and mode != "validate":
        return gt.synced_perf_counter
    return time.perf_counter


def first_call_us(fn: Callable[[], object]) -> float:
    """Wall time of one synchronised call, us: the first call's compile (or cache load) + run."""
    t0 = gt.synced_perf_counter()
    fn()
    return (gt.synced_perf_counter() - t0) * 1e6


def _planner_module(name: str):
    import importlib

    from impls.registry import _BUILTIN

    return importlib.import_module(_BUILTIN[name]) if name in _BUILTIN else None


def skip_reason(planner: str, mode: str, device: torch.device) -> str | None:
    """Why ``mode`` does not apply to ``planner`` here, or None."""
    if mode == "replay" and device.type != "cuda":
        return "replay: device time by CUDA-graph replay needs a GPU"
    if mode == "replay" and planner == "python":
        return "replay: the python planner reads tensor values on the host (not capturable)"
    if mode in ("validate", "launch") and planner not in VALIDATOR_ATTR:
        return f"{mode}: only built-in planners expose their validator"
    return None


@contextlib.contextmanager
def planner_call(planner: str, mode: str, launch: Callable[..., None], kw: dict):
    """Yield the zero-argument call that ``mode`` times (see the module docstring)."""
    if mode in ("eager", "replay"):
        yield lambda: launch(**kw)
        return
    module, attr = _planner_module(planner), VALIDATOR_ATTR[planner]
    validator = getattr(module, attr)
    if mode == "validate":
        yield (lambda: validator(kw)) if attr == "validate_mapping" else (lambda: validator(**kw))
        return
    plan = validator(kw) if attr == "validate_mapping" else validator(**kw)
    setattr(module, attr, lambda *args, **kwargs: plan)
    try:
        yield lambda: launch(**kw)
    finally:
        setattr(module, attr, validator)
