"""What each benchmark mode times, and how many rounds.

Modes of a planner, each a zero-argument call on one workload (:mod:`conformance.bench.workloads`):

* ``eager``: ``launch(**kw)``: validation + launch, host wall time per call; on the GPU a round is
  bracketed by ``torch.cuda.synchronize()`` (:func:`conformance.bench.timing.synced_perf_counter`),
  so queued device work is paid for.
* ``validate``: the planner's validate-only entry ``validate_arguments`` (``python``: the shared
  validator; ``triton`` / ``numba-cuda``: its memo, the corpus subject's ``validate_cache``; a bound planner:
  the per-step checks), host time.
* ``launch``: the planner's ``launch_validated`` on arguments validated before timing: the launch
  alone.
* ``replay``: GPU only: one call captured in a CUDA graph, replays timed with CUDA events behind a
  sleep kernel (:class:`conformance.bench.timing.EventClock`): device time per plan. Not for
  ``python`` (it reads tensor values on the host, so it cannot be captured).

Rounds (:func:`budget`): pytest-benchmark's pedantic mode, ``iterations`` calls a round sized so
a round lasts about :data:`ROUND_S` (1 to :data:`MAX_ITERATIONS` calls), ``rounds`` rounds after
``warmup`` rounds; p50, min and IQR are over the rounds' per-call times.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import torch

from conformance.bench import clocks
from conformance.bench import timing as gt
from conformance.corpus.corpus_subject import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES

MODES = ("eager", "validate", "launch", "replay")
HOST_MODES = ("eager", "validate", "launch")
"""Modes with a host part: each runs every scenario (conformance/bench/workloads.SCENARIOS)."""
ROUND_S = {"cuda": 2e-3, "cpu": 1e-3}
"""Target seconds per round by device type."""
ROUNDS = {"cuda": 15, "cpu": 3}
WARMUP_ROUNDS = {"cuda": 2, "cpu": 1}
MAX_ITERATIONS = 1000
BUDGET_CALLS = 3
"""Timed calls :func:`budget` sizes a round from (the fastest)."""
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
    """Rounds for ``fn`` (already called once): iterations from the fastest of
    :data:`BUDGET_CALLS` more timed calls (one call descheduled by the OS would otherwise make
    every round one call long)."""
    kind = device.type
    rounds = rounds or ROUNDS[kind]
    if mode == "replay":
        return Budget(rounds, REPLAYS_PER_ROUND, WARMUP_ROUNDS[kind])
    once = float("inf")
    for _ in range(BUDGET_CALLS):
        t0 = gt.synced_perf_counter()
        fn()
        once = min(once, max(gt.synced_perf_counter() - t0, 1e-7))
    iterations = int(min(MAX_ITERATIONS, max(1, ROUND_S[kind] / once)))
    return Budget(rounds, iterations, WARMUP_ROUNDS[kind])


def timer_for(mode: str, device: torch.device, calls: int):
    """The pytest-benchmark timer of a mode: CUDA events for ``replay``; wall time synchronised
    per round on the GPU for host modes (``validate`` queues nothing: plain wall time)."""
    if mode == "replay":
        return gt.EventClock(calls)
    if device.type == "cuda" and mode != "validate":
        return gt.synced_perf_counter
    return gt.perf_counter  # bound at import of conformance.bench.clocks


def first_call_us(fn: Callable[[], object]) -> float:
    """Wall time of one synchronised call, us: the first call's compile (or cache load) + run."""
    t0 = gt.synced_perf_counter()
    fn()
    return (gt.synced_perf_counter() - t0) * 1e6


def planner_module(name: str):
    """The module of a built-in planner (None for an external ``module:attr`` planner)."""
    import inspect

    from conformance.corpus.corpus_subject import registry as _registry
    builtin_names = _registry.builtin_names
    get_planner = _registry.get_planner

    return inspect.getmodule(get_planner(name)) if name in builtin_names() else None


def skip_reason(planner: str, mode: str, device: torch.device,
                scenario: str = "reused") -> str | None:
    """Why ``mode`` does not apply to ``planner`` here, or None."""
    if mode == "replay" and device.type != "cuda":
        return "replay: device time by CUDA-graph replay needs a GPU"
    if mode == "replay" and planner == "python":
        return "replay: the python planner reads tensor values on the host (not capturable)"
    if mode == "replay" and scenario != "reused":
        return "replay: a captured graph replays one set of tensors (scenario reused only)"
    if mode in ("validate", "launch") and planner_module(planner) is None:
        return f"{mode}: only built-in planners expose validate_arguments / launch_validated"
    return None


REQUEST = REQUEST_INPUT_NAMES


def planner_call(planner: str, mode: str, pool: list[dict], last: list[int] | None = None,
                 tap=None) -> tuple[Callable[[], object], Callable[[dict], object]]:
    """``(timed, one)``: the zero-argument call that ``mode`` times, cycling through ``pool``
    (:func:`conformance.bench.workloads.request_pool`), and the same path run on one entry.
    ``last[0]``, when given, is kept at the pool index of the timed call's latest entry (what
    :mod:`conformance.bench.rejudge` judges); ``tap`` (a
    :class:`conformance.bench.call_tap.CallTap`), when given and armed, gets ``tap.step(index)``
    before each timed call.

    Built-in planners are driven through their public entries: ``launch`` (eager),
    ``validate_arguments`` (validate), ``launch_validated`` after validating every pool entry
    beforehand (launch). A bound planner (a module with ``BOUND_OF``) is bound once to the pool's
    buffer set (``bind`` of the corpus subject's ``registry``) and timed as a server calls it: ``bound(rpi, prefix,
    extend)`` (eager), ``bound.check`` (validate), the launch alone (launch).
    """
    from conformance.corpus.corpus_subject import registry as _registry
    get_planner = _registry.get_planner

    module = planner_module(planner)
    bound_of = getattr(module, "BOUND_OF", None)
    last = [0] if last is None else last

    def cycle(items):
        return _cycle(items, last, tap)

    steps = cycle(pool)
    if bound_of is not None:
        from conformance.corpus.corpus_subject import validate_cache as _validate_cache
        STABLE_NAMES = _validate_cache.STABLE_NAMES

        bound = _registry.bind(bound_of, **{n: pool[0][n] for n in STABLE_NAMES})
        requests = [_request(kw) for kw in pool]
        if mode == "validate":
            cycled = cycle(requests)
            return (lambda: bound.check(*next(cycled))), (lambda kw: bound.check(*_request(kw)))
        if mode == "launch":
            launch, buffers = bound_of.launch_validated, bound.buffers

            def one_launch(kw):
                return launch((bound.check(*_request(kw)), buffers), *_request(kw))

            staged = cycle([((bound.check(*r), buffers), *r) for r in requests])
            return (lambda: launch(*next(staged))), one_launch
        cycled = cycle(requests)
        return (lambda: bound(*next(cycled))), (lambda kw: bound(*_request(kw)))
    if mode in ("eager", "replay"):
        launch = get_planner(planner)
        return (lambda: launch(**next(steps))), (lambda kw: launch(**kw))
    if mode == "validate":
        validate = module.validate_arguments
        return (lambda: validate(next(steps))), validate
    staged = cycle([(module.validate_arguments(kw), *(kw[n] for n in REQUEST))
                    for kw in pool])
    launch = module.launch_validated

    def one(kw):
        return launch(module.validate_arguments(kw), *(kw[n] for n in REQUEST))

    return (lambda: launch(*next(staged))), one


def _cycle(items: list, last: list[int], tap=None):
    """``itertools.cycle(items)`` that keeps ``last[0]`` at the index it yielded last, calling
    ``tap.step(i)`` first while ``tap`` is armed (one attribute read a call otherwise)."""
    while True:
        for i, item in enumerate(items):
            if tap is not None and tap.armed:
                tap.step(i)
            last[0] = i
            yield item


def _request(kw: dict) -> tuple:
    return tuple(kw[n] for n in REQUEST)


clocks.watch(sys.modules[__name__], "gt", "timer_for", "budget", "first_call_us", "planner_call",
             "_cycle")
