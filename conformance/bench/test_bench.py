"""The benchmark suite (issue #5): planners x bs x modes, and the floors, in one pytest run.

    pytest conformance/bench [--planner NAME] [--bench-bs 1,64] [--benchmark-json PATH]
    python -m conformance bench [--planner NAME] [--bs 1,64] [--json PATH]

``test_plan[planner-mode-bs-scenario]`` times one planner mode (:mod:`conformance.bench.modes`) on a
serving-like batch (:mod:`conformance.bench.workloads`) with pytest-benchmark's pedantic mode;
``test_floor[floor-mode]`` times a floor (:mod:`conformance.bench.floors`). Each records its first
call separately (``extra_info.first_call_us``: compile or cache load + one run, us). What an
``eager`` or ``replay`` benchmark timed is then run once more on poisoned outputs and checked
against the pure-Python planner's plan (``plan_values``), so a fast wrong planner cannot post a
figure. No figure is asserted against a goal: speed is read from the table.
"""

from __future__ import annotations

import os

import pytest
import torch

from conformance.plugin import gpu_pinning
from conformance.bench import timing as gt
from conformance.bench import floors, modes, workloads
from conformance.bench.plugin import bs_list, table_shape
from conformance.engine.runner import resolve_device
from impls.python_planner import plan_values
from impls.registry import availability, builtin_names, default_device, get_planner

_FLOOR_PLANNER = {"empty-triton": "triton", "empty-numba": "numba-cuda"}


def _device_of(planner: str) -> torch.device:
    return resolve_device(availability(planner).device)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "planner" in metafunc.fixturenames:
        planners = config.getoption("planner") or list(builtin_names())
        wanted = config.getoption("bench_mode") or list(modes.MODES)
        scenarios = config.getoption("bench_scenario") or ["serving"]
        params = []
        for planner in planners:
            device = _device_of(planner)
            for mode in [m for m in modes.MODES if m in wanted]:
                for bs in bs_list(config):
                    for scenario in scenarios:
                        timer = modes.timer_for(mode, device, modes.REPLAYS_PER_ROUND)  # own clock
                        params.append(pytest.param(
                            planner, mode, bs, scenario, marks=pytest.mark.benchmark(timer=timer),
                            id=f"{planner}-{mode}-{bs}-{scenario}"))
        metafunc.parametrize(("planner", "mode", "bs", "scenario"), params)
    if "floor" in metafunc.fixturenames:
        params = []
        planners = config.getoption("planner") or list(builtin_names())
        needed = {floors.floor_of(p) for p in planners}
        for floor in [f for f in floors.FLOORS if f in needed]:
            planner = _FLOOR_PLANNER.get(floor)
            device = _device_of(planner) if planner else resolve_device(default_device())
            for mode in floors.FLOOR_MODES:
                timer = modes.timer_for(mode, device, modes.REPLAYS_PER_ROUND)
                params.append(pytest.param(floor, mode, marks=pytest.mark.benchmark(timer=timer),
                                           id=f"{floor}-{mode}"))
        metafunc.parametrize(("floor", "mode"), params)


_WORKLOADS: dict[tuple, dict] = {}


def workload(bs: int, scenario: str, device: torch.device, config) -> dict:
    """The launcher kwargs of one batch, built once per (device, bs, scenario) and shared."""
    key = (str(device), bs, scenario, table_shape(config))
    if key not in _WORKLOADS:
        spec = workloads.spec_for(scenario, str(device), table_shape(config), seed=bs)
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


def _check_plan(kw: dict) -> None:
    """The outputs equal the pure-Python planner's plan (spec section 5) for these inputs."""
    table, lut = kw["req_to_token"], kw["full_to_swa_index_mapping"]
    verify, write, seeds, num_valid, enable, reqs = plan_values(
        kw["req_pool_indices"].tolist(), kw["prefix_lens"].tolist(), kw["extend_seq_lens"].tolist(),
        lambda r, p: int(table[r, p]), lambda i: int(lut[i]),
        max_reqs=table.shape[0], max_seq_len=table.shape[1], lut_len=0 if lut is None else len(lut),
        swa_window_size=kw["swa_window_size"], verify_capacity=kw["verify_capacity"])
    n = len(write)
    assert kw["out_write_offsets"][:n].tolist() == write
    assert kw["out_verify_offsets_scratch"][:n].tolist() == verify
    assert kw["out_write_seed_slot_indices"][: n - 1].tolist() == seeds
    assert [int(kw["out_verify_num_valid"]), int(kw["out_verify_enable"]),
            int(kw["out_write_num_valid_reqs"])] == [num_valid, enable, reqs]


def _run(benchmark, fn, device: torch.device, mode: str, config):
    """First call (us), then the pedantic rounds of ``fn`` (a graph replay for ``replay``).

    Returns (first call us, the call that was timed: ``fn`` or the captured graph's replay)."""
    first = modes.first_call_us(fn)
    if mode == "replay":
        fn = gt.capture(fn).replay
    budget = modes.budget(fn, device, mode, config.getoption("bench_rounds"))
    benchmark.group = mode
    benchmark.extra_info.update(first_call_us=round(first, 1), iterations=budget.iterations)
    benchmark.pedantic(fn, rounds=budget.rounds, iterations=budget.iterations,
                       warmup_rounds=budget.warmup)
    return first, fn


def test_plan(benchmark, planner: str, mode: str, bs: int, scenario: str, request) -> None:
    avail = availability(planner)
    if not avail.available:
        pytest.skip(f"{planner}: {avail.reason}")
    device = resolve_device(avail.device)
    reason = modes.skip_reason(planner, mode, device)
    if reason:
        pytest.skip(reason)
    kw = workload(bs, scenario, device, request.config)
    _describe(benchmark, device, planner_mode=avail.mode, scenario=scenario,
              table=list(kw["req_to_token"].shape), window=kw["swa_window_size"])
    with modes.planner_call(planner, mode, get_planner(planner), kw) as fn:
        first, timed = _run(benchmark, fn, device, mode, request.config)
    assert first > 0 and (benchmark.disabled or benchmark.stats.stats.median > 0)
    if mode in ("eager", "replay"):  # what was timed computes the right plan (from poison)
        for name in [n for n in kw if n.startswith("out_")]:
            kw[name].fill_(workloads.POISON)
        timed()
        _check_plan(kw)


def test_floor(benchmark, floor: str, mode: str, request) -> None:
    planner = _FLOOR_PLANNER.get(floor)
    device = resolve_device(default_device())
    if planner:
        avail = availability(planner)
        if not avail.available:
            pytest.skip(f"{floor}: planner {planner} unavailable: {avail.reason}")
        device = resolve_device(avail.device)
    if mode == "replay" and device.type != "cuda":
        pytest.skip("replay: device time by CUDA-graph replay needs a GPU")
    eager, capturable = floors.floor_call(floor, device)
    benchmark.extra_info.update(floor=floor)
    _describe(benchmark, device)
    first, _ = _run(benchmark, capturable if mode == "replay" else eager, device, mode,
                    request.config)
    assert first > 0 and (benchmark.disabled or benchmark.stats.stats.median > 0)
