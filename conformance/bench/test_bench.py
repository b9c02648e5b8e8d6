"""The benchmark suite: planners x bs x modes, and the floors, in one pytest run.

    pytest conformance/bench [--planner NAME] [--bench-bs 1,64] [--benchmark-json PATH]
    python -m conformance bench [--planner NAME] [--bs 1,64] [--json PATH]

``test_plan[planner-mode-bs-scenario-workload]`` times one planner mode
(:mod:`conformance.bench.modes`) on a serving-like batch (:mod:`conformance.bench.workloads`) in one
scenario (``reused``, ``fresh``, ``varying-bs``: how the request tensors arrive) with
pytest-benchmark's pedantic mode; ``test_floor[floor-mode]`` times an empty floor and
``test_chain_floor[chain-mode-bs-workload]`` a dependent-load chain floor
(:mod:`conformance.bench.floors`); under ``--bench-repeat N`` each id ends in ``-repeat<i>``.
Each records its first call separately (``extra_info.first_call_us``: compile or cache load + one
run, us). Between rounds (untimed) request contents are redrawn and outputs re-judged against the
pure-Python planner's plan
(:mod:`conformance.bench.rejudge`, with one call of a judged round drawn at random,
:mod:`conformance.bench.call_tap`); the rounds are timed by the bench's own clock and checked
against pytest-benchmark's statistics and the loop's wall clock (:mod:`conformance.bench.clocks`);
a figure failing a check is refused with the reason and its test fails
(:mod:`conformance.bench.refusal`): the watched clock names are checked again right after the
planner is resolved, before its first call, and after each timed loop. What an ``eager``,
``launch`` or ``replay`` benchmark timed is then run once more on poisoned outputs and checked the
same way (a wrong plan there refuses the figure too). What the harness recorded of each test
(:mod:`conformance.bench.provenance`) is put back on its entry at session end. No figure is
asserted against a goal: speed is read from the table. The floors' kernel modules are imported
at collection, before any planner is (:func:`conformance.bench.floor_modules.bind_kernels`): the
floors call only those, one replaced in ``sys.modules`` later is a watched name rebound, and so is a
change to a kernel object's own state (a pre-run hook, an instance ``run``:
:func:`conformance.bench.clocks.watch_state`).

The planner runs in this process (pytest's), not in an isolation worker: a benchmark times the
planner's calls in process, so resolving an external ``module:attr`` planner here
(``get_planner`` of the planner registry, the corpus subject's ``registry``, through
:func:`conformance.bench.modes.planner_call`) imports
its module beside the clocks, the statistics and the re-judging. The checks above catch what
rebinds the watched names or changes what a round's timer reads; README "Benchmarks" says what
they do not.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

from conformance.plugin import gpu_pinning
from conformance.bench import timing as gt
from conformance.bench import (call_tap, chain_floors, clocks, cross_check, floor_modules, floors,
                               modes, provenance, rejudge)
from conformance.bench import workloads
from conformance.bench.refusal import loop_refusal, tampered_reason
from conformance.reporting.bench_figures import REFUSED
from conformance.bench.plugin import bs_list, parametrize_repeats, table_shape
from conformance.engine.runner import resolve_device
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import registry as _registry

SCALAR_NAMES = _contract.SCALAR_NAMES
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES
availability = _registry.availability
chosen_planners = _registry.chosen_planners
default_device = _registry.default_device

_FLOOR_PLANNER = {"empty-triton": "triton", "empty-numba": "numba-cuda"}


def _device_of(planner: str) -> torch.device:
    return resolve_device(availability(planner).device)


def _bind_kernels(floor: str, planner: str) -> None:
    """Bind floor ``floor``'s kernel module now, at collection, before any planner is imported
    (:func:`conformance.bench.floor_modules.bind_kernels`; a module in ``sys.modules`` that is not
    the bench's own file stops the run there,
    :class:`~conformance.bench.floor_modules.FloorModuleError`),
    when ``planner``, whose framework it runs in, runs here (else its test is skipped)."""
    if availability(planner).available:
        floor_modules.bind_kernels([floor])


def _scenarios_for(mode: str, wanted: list[str]) -> list[str]:
    """Host modes run every wanted scenario; replay only ``reused`` (one captured set)."""
    return [s for s in wanted if mode in modes.HOST_MODES or s == "reused"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    scenarios = config.getoption("bench_scenario") or list(workloads.SCENARIOS)
    kinds = config.getoption("bench_workload") or ["serving"]
    sizes = bs_list(config)
    if "planner" in metafunc.fixturenames:
        planners = chosen_planners(config.getoption("planner"))
        wanted = config.getoption("bench_mode") or list(modes.MODES)
        params = []
        for planner in planners:
            device = _device_of(planner)
            for mode in [m for m in modes.MODES if m in wanted]:
                timer = modes.timer_for(mode, device, modes.REPLAYS_PER_ROUND)  # own clock
                for scenario in _scenarios_for(mode, scenarios):
                    # varying-bs: one benchmark, bs drawn from 1..the largest bs
                    for bs in ([max(sizes)] if scenario == "varying-bs" else sizes):
                        for kind in kinds:
                            params.append(pytest.param(
                                planner, mode, bs, scenario, kind,
                                marks=pytest.mark.benchmark(timer=timer),
                                id=f"{planner}-{mode}-{bs}-{scenario}-{kind}"))
        metafunc.parametrize(("planner", "mode", "bs", "scenario", "workload"), params)
    if "floor" in metafunc.fixturenames:
        params = []
        planners = chosen_planners(config.getoption("planner"))
        needed = {floors.floor_of(p) for p in planners}
        for floor in [f for f in floors.FLOORS if f in needed]:
            planner = _FLOOR_PLANNER.get(floor)
            device = _device_of(planner) if planner else resolve_device(default_device())
            if planner:
                _bind_kernels(floor, planner)
            for mode in floors.FLOOR_MODES:
                timer = modes.timer_for(mode, device, modes.REPLAYS_PER_ROUND)
                params.append(pytest.param(floor, mode, marks=pytest.mark.benchmark(timer=timer),
                                           id=f"{floor}-{mode}"))
        metafunc.parametrize(("floor", "mode"), params)
    if "chain" in metafunc.fixturenames:
        params = []
        planners = chosen_planners(config.getoption("planner"))
        needed = {floors.CHAIN_OF_PLANNER.get(p) for p in planners}
        for chain in [c for c in floors.CHAIN_FLOORS if c in needed]:
            device = _device_of(floors.CHAIN_PLANNER[chain])
            _bind_kernels(chain, floors.CHAIN_PLANNER[chain])
            for mode in floors.FLOOR_MODES:
                timer = modes.timer_for(mode, device, modes.REPLAYS_PER_ROUND)
                for bs in sizes:
                    for kind in kinds:
                        params.append(pytest.param(
                            chain, mode, bs, kind, marks=pytest.mark.benchmark(timer=timer),
                            id=f"{chain}-{mode}-{bs}-{kind}"))
        metafunc.parametrize(("chain", "mode", "bs", "workload"), params)
    parametrize_repeats(metafunc)  # --bench-repeat N: every benchmark N times (id suffix)


_WORKLOADS: dict[tuple, dict] = {}


def workload_kwargs(bs: int, workload: str, device: torch.device, config) -> dict:
    """The launcher kwargs of one batch, built once per (device, bs, workload) and shared."""
    key = (str(device), bs, workload, table_shape(config))
    if key not in _WORKLOADS:
        spec = workloads.spec_for(workload, str(device), table_shape(config), seed=bs)
        _WORKLOADS[key] = workloads.build(bs, spec, device)
    return _WORKLOADS[key]


def _gpu_id(device: torch.device) -> str:
    """The physical GPU behind ``device`` (PCI bus id, else UUID): shows which GPU a worker used."""
    if device.type != "cuda":
        return "-"
    props = torch.cuda.get_device_properties(device)
    for attr in ("pci_bus_id", "uuid"):
        value = getattr(props, attr, None)
        if value is not None:
            return str(value)
    return "?"


def _describe(benchmark, device: torch.device, **extra) -> None:
    benchmark.extra_info.update(
        device=str(device),
        gpu=torch.cuda.get_device_name(device) if device.type == "cuda" else "-",
        gpu_id=_gpu_id(device),
        gpu_pinning=gpu_pinning.PINNED or "none",
        worker=os.environ.get("PYTEST_XDIST_WORKER", "-"), **extra)


def _reference_plan(kw: dict) -> tuple:
    """The pure-Python planner's plan (spec section 5) for ``kw``'s inputs (``plan_values``' six
    results)."""
    return rejudge.reference_values(kw, *(kw[n] for n in TABLE_INPUT_NAMES))


def _run(benchmark, fn, device: torch.device, mode: str, config, pool: int = 1, judge=None,
         resolved: str | None = None):
    """First call (us), then the pedantic rounds of ``fn`` (a graph replay for ``replay``).

    With a pool of ``pool`` request-tensor sets, every set is called once after the first call and
    before timing: the steady state of a server, which has met each of its batch sizes before; a
    round then has at most ``pool`` calls (no contents met twice in a round). ``judge(timed,
    total_rounds, iterations)`` makes the between-rounds step
    (:class:`conformance.bench.rejudge.RoundJudge`, whose ``tap`` the clock is given);
    ``resolved`` is the tampering seen when the planner was resolved (:func:`tampered_reason`).
    The rounds are timed through :class:`conformance.bench.clocks.RoundClock`; a figure that
    fails a check (:func:`conformance.bench.refusal.loop_refusal`) is refused: its reason goes to
    ``extra_info.refused`` and the test fails; a figure that passes is recorded
    (:func:`conformance.bench.provenance.measured`).

    Returns (first call us, the call that was timed: ``fn`` or the captured graph's replay)."""
    first = modes.first_call_us(fn)
    for _ in range(pool - 1):
        fn()
    if mode == "replay":
        fn = gt.capture(fn).replay
    budget = modes.budget(fn, device, mode, config.getoption("bench_rounds"))
    iterations = min(budget.iterations, pool) if pool > 1 else budget.iterations
    between = judge(fn, budget.warmup + budget.rounds, iterations) if judge else None
    clock = clocks.RoundClock(benchmark._timer, between, getattr(between, "tap", None))
    benchmark._timer = clock  # pytest-benchmark's runner reads its timer from here
    benchmark.group = mode
    benchmark.extra_info.update(first_call_us=round(first, 1), iterations=iterations)
    t0 = clocks.synced_ns()
    benchmark.pedantic(fn, rounds=budget.rounds, iterations=iterations,
                       warmup_rounds=budget.warmup)
    wall = clocks.synced_ns() - t0
    if between is not None:  # the seed only now: the planner is not given the draw beforehand
        benchmark.extra_info.update(judge_seed=between.seed, judged_calls=between.judgments)
    _refuse(benchmark, loop_refusal(benchmark, clock, between, iterations, wall,
                                    mode != "replay", resolved))
    if not benchmark.disabled and benchmark.stats is not None:
        provenance.measured(benchmark, benchmark.stats.stats.data)
    return first, fn


def _refuse(benchmark, reason: str | None) -> None:
    """With a reason: the figure refused (``extra_info.refused``) and the test failed."""
    if reason:
        benchmark.extra_info[REFUSED] = reason
        pytest.fail(f"refused figure: {reason}", pytrace=False)


def test_plan(benchmark, planner: str, mode: str, bs: int, scenario: str, workload: str,
              request, bench_repeat: int) -> None:
    avail = availability(planner)
    if not avail.available:
        pytest.skip(f"{planner}: {avail.reason}")
    device = resolve_device(avail.device)
    reason = modes.skip_reason(planner, mode, device, scenario)
    if reason:
        pytest.skip(reason)
    kw = workload_kwargs(bs, workload, device, request.config)
    pool = workloads.request_pool(kw, scenario, seed=bs)
    _describe(benchmark, device, planner_mode=avail.mode, scenario=scenario, workload=workload,
              table=list(kw[TABLE_INPUT_NAMES[0]].shape), window=kw[SCALAR_NAMES[0]],
              bs_range=[1, bs] if scenario == "varying-bs" else [bs, bs], pool=len(pool))
    last = [0]
    tap = call_tap.CallTap(pool) if mode in ("eager", "launch") else None
    fn, one = modes.planner_call(planner, mode, pool, last, tap)  # resolves (imports) the planner
    resolved = tampered_reason("when the planner was resolved")
    writes = mode in ("eager", "launch", "replay")

    def judge(timed, total_rounds, iterations):
        return rejudge.RoundJudge(pool, timed, last, scenario, total_rounds, outputs=writes,
                                  tap=tap, iterations=iterations)

    first, timed = _run(benchmark, fn, device, mode, request.config, len(pool), judge, resolved)
    assert first > 0 and (benchmark.disabled or benchmark.stats.stats.median > 0)
    if writes:  # what was timed plans right (from poison) outside the timed loop too
        step = pool[-1]
        diff = rejudge.replan_mismatch(timed if mode == "replay" else (lambda: one(step)), step)
        _refuse(benchmark, diff and f"outputs wrong at a call outside the timed loop: {diff}")
    if mode == "replay" and bs == max(bs_list(request.config)) and bench_repeat == 1:
        # a second witness of one replay figure per planner, on a plan just judged right
        benchmark.extra_info[cross_check.CROSS_CHECK_KEY] = cross_check.measure(
            fn, benchmark.stats.stats.median * 1e6)


def _floor_device(floor: str, planner: str | None, mode: str) -> torch.device:
    """The device ``floor`` runs on: its framework's planner's (skipped when that planner cannot
    run here), else the default; replay skipped without a GPU."""
    device = resolve_device(default_device())
    if planner:
        avail = availability(planner)
        if not avail.available:
            pytest.skip(f"{floor}: planner {planner} unavailable: {avail.reason}")
        device = resolve_device(avail.device)
    if mode == "replay" and device.type != "cuda":
        pytest.skip("replay: device time by CUDA-graph replay needs a GPU")
    return device


_CHAIN_SHAPES: dict[tuple, tuple] = {}
"""(chain, device, bs, workload, table) -> (launch shape, every tried shape's us): the chain
floor's fastest shape at that bs (:func:`conformance.bench.chain_floors.best_chain_shape`)."""


def test_chain_floor(benchmark, chain: str, mode: str, bs: int, workload: str, request,
                     bench_repeat: int) -> None:
    device = _floor_device(chain, floors.CHAIN_PLANNER[chain], mode)
    kw = workload_kwargs(bs, workload, device, request.config)
    key = (chain, str(device), bs, workload, table_shape(request.config))
    if key not in _CHAIN_SHAPES:  # tried once per bs, then every mode and repeat uses it
        _CHAIN_SHAPES[key] = chain_floors.best_chain_shape(chain, kw)
    shape, trials = _CHAIN_SHAPES[key]
    eager, capturable = chain_floors.chain_call(chain, kw, shape)
    benchmark.extra_info.update(floor=chain, chain=True, workload=workload,
                                chain_shape=chain_floors.shape_label(chain, shape),
                                chain_shape_trials=trials)
    _describe(benchmark, device)
    first, _ = _run(benchmark, capturable if mode == "replay" else eager, device, mode,
                    request.config)
    assert first > 0 and (benchmark.disabled or benchmark.stats.stats.median > 0)
    seeds = kw[chain_floors.SEEDS_NAME][:bs].tolist()  # the chain's loads, not the plan's
    want = _reference_plan(kw)[2]
    _refuse(benchmark, None if seeds == want else "chain floor: its loads are not the plan's seeds")


def test_floor(benchmark, floor: str, mode: str, request, bench_repeat: int) -> None:
    device = _floor_device(floor, _FLOOR_PLANNER.get(floor), mode)
    eager, capturable = floors.floor_call(floor, device)
    benchmark.extra_info.update(floor=floor)
    _describe(benchmark, device)
    first, _ = _run(benchmark, capturable if mode == "replay" else eager, device, mode,
                    request.config)
    assert first > 0 and (benchmark.disabled or benchmark.stats.stats.median > 0)


clocks.watch(sys.modules[__name__], "_run", "_refuse", "_reference_plan", "workload_kwargs",
             "loop_refusal", "tampered_reason", "floors", "rejudge", "modes", "call_tap",
             "provenance")
