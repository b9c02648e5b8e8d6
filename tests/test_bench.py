"""The benchmark suite on the CPU with tiny sizes: JSON, fingerprint, ratios, table,
opt-in collection, xdist merging, and the worker -> GPU mapping. No figure is compared with a goal:
timings are only checked to be positive and consistent with each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.plugin import gpu_pinning
from conformance.bench import cli as bench_cli
from conformance.bench.summary_table import HEADERS, annotate, render, rows
from conformance.reporting.bench_figures import load_bench

REPO = Path(__file__).resolve().parent.parent


def _pytest(*args: str, timeout: float = 400) -> subprocess.CompletedProcess:
    drop = ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


def _planner_benches(doc: dict) -> list[dict]:
    return [b for b in doc["benchmarks"] if b["params"].get("planner")]


def test_cpu_run_writes_benchmark_json_with_fingerprint_and_ratios(tmp_path):
    out = tmp_path / "bench.json"
    proc = _pytest("conformance/bench", "--planner", "python", "--planner", "triton",
                   "--bench-bs", "0,1", "--bench-rounds", "2", f"--benchmark-json={out}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    info = doc["machine_info"]
    for key in ("gpu", "driver", "cuda", "torch", "triton", "numba", "numpy", "date", "commit"):
        assert key in info and info[key] not in (None, "")
    assert info["gpu"] == "none (CPU only)" and info["planners"]["triton"]["mode"] == "interpreter"

    planners = _planner_benches(doc)
    # python and triton: eager, validate, launch x (reused, fresh) x bs 0, 1 and varying-bs 1..1;
    # replay skipped on the CPU
    got = sorted((b["params"]["planner"], b["params"]["mode"], b["params"]["bs"],
                  b["params"]["scenario"]) for b in planners)
    assert got == sorted([(p, m, bs, s) for p in ("python", "triton")
                          for m in ("eager", "validate", "launch") for bs in (0, 1)
                          for s in ("reused", "fresh")]
                         + [(p, m, 1, "varying-bs") for p in ("python", "triton")
                            for m in ("eager", "validate", "launch")])
    floors = {(b["extra_info"]["floor"], b["params"]["mode"]): b["stats"]["median"] * 1e6
              for b in doc["benchmarks"]
              if b["extra_info"].get("floor") and not b["extra_info"].get("chain")}
    assert set(floors) == {(f, m) for f in ("torch-op", "empty-triton")
                           for m in ("eager", "launch")}
    chains = {(b["params"]["mode"], b["params"]["bs"]): b["stats"]["median"] * 1e6
              for b in doc["benchmarks"] if b["extra_info"].get("chain")}
    assert set(chains) == {(m, bs) for m in ("eager", "launch") for bs in (0, 1)}
    py = {(b["params"]["mode"], b["params"]["bs"], b["params"]["scenario"]): b["stats"]["median"]
          for b in planners if b["params"]["planner"] == "python"}
    for b in planners:
        extra, p50 = b["extra_info"], b["stats"]["median"] * 1e6
        assert b["stats"]["rounds"] == 2 and b["stats"]["median"] > 0 and extra["first_call_us"] > 0
        floor = "empty-triton" if b["params"]["planner"] == "triton" else "torch-op"
        floor_mode = "eager" if b["params"]["mode"] == "validate" else b["params"]["mode"]
        assert extra["floor_name"] == f"{floor} ({floor_mode})"
        assert extra["ratio_to_floor"] == pytest.approx(p50 / floors[(floor, floor_mode)], rel=1e-3)
        key = (b["params"]["mode"], b["params"]["bs"], b["params"]["scenario"])
        assert extra["ratio_to_python"] == pytest.approx(b["stats"]["median"] / py[key], rel=1e-3)
        if b["params"]["planner"] == "triton" and b["params"]["scenario"] != "varying-bs":
            chain = chains[(floor_mode, b["params"]["bs"])]
            assert extra["ratio_to_chain"] == pytest.approx(p50 / chain, rel=1e-3)
        else:
            assert extra["ratio_to_chain"] is None
    assert {b["extra_info"]["planner_mode"] for b in planners} == {"cpu", "interpreter"}
    assert {b["extra_info"]["pool"] for b in planners if b["params"]["scenario"] != "reused"} == \
        {16}

    rows_, _ = load_bench(out)  # the report helper reads it
    assert len(rows_) == len(doc["benchmarks"]) and sum(r.floor for r in rows_) == 8
    table = proc.stdout[proc.stdout.index("benchmark table"):]
    assert "| planner " in table and "x floor" in table and "x chain" in table
    first_cells = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")]
    assert first_cells.count("`triton [interpreter]`") == 15
    assert first_cells.count("`python [cpu]`") == 15
    # a chain floor names the launch shape it ran in (untried without a GPU: the default)
    assert first_cells.count("`floor: chain-triton [BLOCK 512, 4 warps]`") == 4
    assert "| 1..1 " in table


@pytest.mark.slow  # a bench run under -n 2
def test_xdist_workers_results_land_in_one_json(tmp_path):
    out = tmp_path / "bench.json"
    proc = _pytest("conformance/bench", "-n", "2", "--planner", "python", "--bench-bs", "0,1,8",
                   "--bench-rounds", "2", "--bench-mode", "eager", "--bench-scenario", "reused",
                   f"--benchmark-json={out}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    planners = _planner_benches(doc)
    assert sorted(b["params"]["bs"] for b in planners) == [0, 1, 8]
    assert {b["extra_info"]["worker"] for b in doc["benchmarks"]} == {"gw0", "gw1"}
    assert all(b["extra_info"]["ratio_to_floor"] > 0 for b in planners)
    assert doc["machine_info"]["gpu"] == "none (CPU only)"
    assert "Benchmarks are automatically disabled" not in proc.stdout + proc.stderr


def _collect(capsys, *args: str) -> str:
    """Node ids ``pytest --co`` lists (collection only: no CUDA, no timing), in a process of its
    own: a corpus session in this one would end the isolation workers this pytest-xdist worker
    still holds for its own corpus cases (each session closes its pool and kills the children
    outside its session before its last write)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run([sys.executable, "-m", "pytest", *args, "--co", "-q", "-p",
                           "no:cacheprovider"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    return proc.stdout


def test_benchmarks_are_collected_only_when_named(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    (tmp_path / "cases").mkdir()  # an empty corpus: collection is all this test looks at
    opts = ("--planner", "python", "--bench-bs", "1", f"--cases={tmp_path / 'cases'}",
            f"--results={tmp_path / 'results.json'}")
    plain = _collect(capsys, "conformance/", *opts)
    assert "no tests collected" in plain and "test_bench.py" not in plain
    named = _collect(capsys, "conformance/bench", *opts)
    assert "conformance/bench/test_bench.py::test_plan[python-eager-1-reused-serving]" in named
    assert "conformance/bench/test_bench.py::test_plan[python-eager-1-varying-bs-serving]" in named
    flag = _collect(capsys, "conformance/", "--bench", *opts)
    assert "conformance/bench/test_bench.py::test_floor[torch-op-replay]" in flag


@pytest.mark.parametrize(("worker", "count", "gpu"), [
    ("gw0", 2, 0), ("gw1", 2, 1), ("gw2", 2, 0), ("gw3", 2, 1), ("gw5", 4, 1), ("gw7", 8, 7),
    ("gw1", 1, 0), ("gw1", 0, None), (None, 2, None), ("master", 2, None), ("gwx", 2, None),
])
def test_worker_gpu_mapping(worker, count, gpu):
    assert gpu_pinning.gpu_for_worker(worker, count) == gpu


def test_pin_worker_narrows_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    monkeypatch.delenv("CONFORMANCE_NO_PIN", raising=False)
    monkeypatch.setattr(gpu_pinning, "PINNED", None)
    assert gpu_pinning.pin_worker("gw1") == "gw1 -> GPU 1 (CUDA_VISIBLE_DEVICES=5)"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "5"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5,6")
    assert gpu_pinning.pin_worker("gw4") == "gw4 -> GPU 1 (CUDA_VISIBLE_DEVICES=5)"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")  # one GPU: nothing to choose
    assert gpu_pinning.pin_worker("gw1") is None and os.environ["CUDA_VISIBLE_DEVICES"] == "2"


def _bench(planner, mode, bs, median_us, **extra):
    stats = {"median": median_us * 1e-6, "min": median_us * 0.9e-6, "q1": median_us * 0.95e-6,
             "q3": median_us * 1.05e-6}
    if planner.startswith("floor:"):
        return {"params": {"floor": planner[6:], "mode": mode}, "stats": stats,
                "extra_info": {"floor": planner[6:], **extra}}
    return {"params": {"planner": planner, "mode": mode, "bs": bs, "scenario": "reused",
                       "workload": "serving"},
            "stats": stats, "extra_info": dict(extra)}


def test_table_renders_ratios_to_floor_and_python():
    benches = annotate([
        _bench("python", "eager", 64, 800.0, planner_mode="cpu", first_call_us=1500.0),
        _bench("triton", "eager", 64, 20.0, planner_mode="gpu", first_call_us=250000.0),
        _bench("triton", "validate", 64, 7.5, planner_mode="gpu"),
        _bench("triton", "replay", 64, 3.0, planner_mode="gpu"),
        _bench("floor:empty-triton", "eager", None, 16.0),
        _bench("floor:empty-triton", "replay", None, 1.5),
        _bench("floor:torch-op", "eager", None, 8.0),
    ])
    extra = {(b["params"].get("planner"), b["params"]["mode"]): b["extra_info"] for b in benches}
    assert extra[("triton", "eager")]["ratio_to_floor"] == 1.25
    assert extra[("triton", "eager")]["ratio_to_python"] == 0.025
    assert extra[("triton", "validate")]["floor_name"] == "empty-triton (eager)"
    assert extra[("triton", "replay")]["ratio_to_floor"] == 2.0
    assert extra[("triton", "replay")]["ratio_to_python"] is None  # python has no replay
    assert extra[("python", "eager")]["ratio_to_floor"] == 100.0
    table = rows(benches)
    assert table[0] == ["python [cpu]", "eager (reused)", "64", "800.00", "720.00", "80.00", "100",
                        "torch-op", "-", "1", "-", "1.5"]
    assert table[1][:2] == ["triton [gpu]", "eager (reused)"]
    assert table[1][6:] == ["1.25", "empty-triton", "-", "0.025", "-", "250.0"]
    assert [r[1] for r in table[1:4]] == ["eager (reused)", "validate (reused)", "replay (reused)"]
    assert table[-1][:4] == ["floor: torch-op", "eager", "-", "8.00"]
    text = render(benches)
    assert [c.strip() for c in text.splitlines()[0].split("|")[1:-1]] == HEADERS
    assert len(text.splitlines()) == 2 + len(benches)


def test_cli_builds_the_pytest_command(tmp_path):
    parser_args = bench_cli.argparse.Namespace(
        planner=["triton"], mode=["replay"], scenario=[], workload=[], bs="1,64", rounds=5,
        json=tmp_path / "b.json", report=None, pytest_args=["-x"])
    args = bench_cli.pytest_args(parser_args)
    assert args[0].endswith("conformance/bench") and args[-1] == "-x"
    assert f"--benchmark-json={tmp_path / 'b.json'}" in args
    assert {"--planner=triton", "--bench-mode=replay", "--bench-bs=1,64", "--bench-rounds=5"} \
        <= set(args)
    warning = args.index("ignore::pytest.PytestAssertRewriteWarning")  # modules imported first
    assert args[warning - 1] == "-W"


class _FakeEvent:
    """Stands in for ``torch.cuda.Event``: ``record`` stamps a device time from ``clock``."""

    clock: list[float] = [0.0]

    def __init__(self, enable_timing: bool = False) -> None:
        self.t, self.synced = None, False

    def record(self) -> None:
        self.t = self.clock[0]

    def synchronize(self) -> None:
        self.synced = True

    def elapsed_time(self, end: "_FakeEvent") -> float:  # ms, as torch's
        return end.t - self.t


def test_event_clock_times_a_round_between_two_events(monkeypatch):
    from conformance.bench import timing as gt

    sleeps: list[int] = []
    monkeypatch.setattr(gt.torch.cuda, "_sleep", sleeps.append)
    clock = gt.EventClock(calls=100, event=_FakeEvent)  # the real Event class is bound at import
    for device_ms in (0.25, 0.5):  # two rounds, as pytest-benchmark's pedantic runner calls it
        _FakeEvent.clock[0] = 10.0
        start = clock()
        _FakeEvent.clock[0] = 10.0 + device_ms
        end = clock()
        assert end - start == pytest.approx(device_ms * 1e-3)  # seconds
        assert end.event.synced
    assert sleeps == [4_000_000, 4_000_000]  # one prefill per round: 100 calls x 20 us x 2 GHz
    assert clock.__name__ == "EventClock"


def test_serving_workload_mixes_decode_prefill_padding_and_swa():
    import torch

    from conformance.bench import workloads

    spec = workloads.spec_for("serving", "cpu", (4096, 256), seed=4096)
    kw = workloads.build(4096, spec, "cpu")
    rpi, extend = kw["req_pool_indices"], kw["extend_seq_lens"]
    active = rpi != 0
    assert 0.08 < (~active).float().mean().item() < 0.17  # about one row in eight is padding
    assert len(set(rpi[active].tolist())) == int(active.sum()) <= 4095  # distinct real rows
    decode, prefill = extend == 1, extend >= 16
    assert decode.float().mean().item() > 0.8 and 0.08 < prefill.float().mean().item() < 0.17
    assert bool((decode | prefill).all())
    assert kw["swa_window_size"] == 64 and kw["full_to_swa_index_mapping"].shape == (1 << 16,)
    assert kw["req_to_token"].shape == (4096, 256) and int(kw["req_to_token"].min()) >= 1
    assert all(bool((kw[n] == workloads.POISON).all()) for n in kw if n.startswith("out_"))
    gpu = workloads.spec_for("serving", "cuda")
    assert (gpu.table, gpu.window, gpu.lut_len) == ((4096, 32768), 4096, 1 << 22)
    decode_only = workloads.build(64, workloads.spec_for("decode", "cpu", (128, 64)), "cpu")
    assert decode_only["full_to_swa_index_mapping"] is None and decode_only["swa_window_size"] == 0
    assert bool((decode_only["extend_seq_lens"] == 1).all())
    assert torch.is_tensor(decode_only["prefix_lens"]) and decode_only["prefix_lens"].shape == (64,)


def test_report_ratios_equal_the_terminal_tables_for_every_committed_row():
    """The report shows the suite's own ratio (extra_info), so both agree on every planner row of
    the committed GPU run, validate rows included."""
    from conformance.reporting.bench_figures import _row, table

    doc = json.loads((REPO / "reports" / "gpu" / "bench.json").read_text())
    benches = annotate(doc["benchmarks"])
    planners = _planner_benches(doc)
    assert len(planners) >= 77 and any(b["params"]["mode"] == "validate" for b in planners)
    report = {r["key"]: r["ratio"] for r in table([_row(b) for b in benches])}
    for b in planners:
        terminal = rows([b])[0]
        x_floor, floor = terminal[HEADERS.index("x floor")], terminal[HEADERS.index("floor")]
        assert x_floor != "-", b["name"]
        assert report[b["fullname"]] == f"{x_floor}x {b['extra_info']['floor_name']}", b["name"]
        assert b["extra_info"]["floor_name"].split(" ")[0] == floor


def test_goals_are_ratios_of_the_same_run_with_how_far_they_miss():
    from conformance.bench import goals

    def gpu(planner, mode, bs, us, scenario, **extra):
        b = _bench(planner, mode, bs, us, planner_mode="gpu", **extra)
        b["params"]["scenario"] = scenario
        return b

    upstream = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
    benches = annotate([
        gpu("triton", "eager", 4096, 19.0, "varying-bs"),
        gpu("numba-cuda", "eager", 4096, 25.0, "varying-bs"),
        gpu(upstream, "eager", 4096, 40.0, "varying-bs"),
        gpu("triton", "eager", 64, 13.0, "reused"),
        gpu("triton-bound", "validate", 64, 2.0, "fresh"),
        gpu("triton", "replay", 4096, 3.0, "reused"),
        _bench("floor:empty-triton", "eager", None, 10.0),
        {"params": {"mode": "replay", "bs": 4096, "workload": "serving"},
         "stats": {"median": 2.5e-6, "min": 2.5e-6, "q1": 2.5e-6, "q3": 2.5e-6},
         "extra_info": {"floor": "chain-triton", "chain": True}},
    ])
    got = {row[0]: row for row in goals.evaluate(benches)}
    row = got["eager, varying-bs, triton and numba-cuda"]
    assert row[2].startswith("25 (numba-cuda varying-bs bs 1..4096)") and row[3].startswith(
        "missed by 1.25x")
    ref = got["eager, varying-bs, triton and numba-cuda, vs the reference planner (upstream's launcher)"]
    assert ref[2].startswith("0.625") and ref[3].startswith("missed by 1.25x")
    assert got["eager, reused, triton and numba-cuda, vs the empty Triton launch"][3] == "met"
    assert got["bound plan, per-step validation"][3] == "met"
    chain = got["replay device time vs the chain floor"]
    assert chain[2].startswith("1.2 ") and chain[3] == "met"
    assert got["replay device time at bs 4096"][3] == "met"
    assert got["python planner, eager, bs 4096"][3] == "not measured in this run"
    assert got["eager, varying-bs, their bound plans"][3] == "not measured in this run"
    # the goals without figures are one line under the table of the measured ones
    lines = goals.render(benches).splitlines()
    missing = [ln for ln in lines if "not measured" in ln]
    assert len(missing) == 1 and missing[0].startswith("4 of 10 goal(s) not measured in this run")
    assert "python planner, eager, bs 4096" in missing[0]
    assert sum(ln.startswith("| ") for ln in lines) == 1 + 6  # header and the 6 measured goals
    assert goals.render([]).startswith("10 of 10 goal(s) not measured") and "\n" not in \
        goals.render([])


def test_the_launcher_shape_sweep_times_each_planner_and_its_ratio(capsys):
    from impls.offsets_planner.harness.sweeps import launcher_shape

    assert launcher_shape.main(["--planner", "python", "--planner", "python", "--bs", "8",
                                "--pool", "4", "--repeat", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["python", "python"]
    assert lines[0].split()[1] == "cpu" and lines[0].endswith("1.00x")
    assert all(float(line.split()[2]) > 0 for line in lines)


@pytest.mark.parametrize("env, cuda, mode, after", [
    ("1", False, "interpreter", "1"), ("true", True, "interpreter", "true"),
    (None, True, "gpu", None), ("0", True, "gpu", "0"),
    (None, False, "interpreter", "1"), ("", False, "interpreter", "1"),
    ("0", False, None, "0")])
def test_the_floor_kernels_choose_tritons_mode_as_the_triton_planner_does(monkeypatch, env, cuda,
                                                                          mode, after):
    """conformance/bench/kernel_modes.py makes the choice the Triton planner makes at its import
    (its ``_choose_mode``), so that a floor kernel decorated first runs as the planners do."""
    import torch

    from conformance.bench import kernel_modes
    from impls.offsets_planner import triton_planner

    for choose in (kernel_modes.prepare_triton, lambda: triton_planner._choose_mode()[0]):
        if env is None:
            monkeypatch.delenv("TRITON_INTERPRET", raising=False)
        else:
            monkeypatch.setenv("TRITON_INTERPRET", env)
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
        assert choose() == mode
        assert os.environ.get("TRITON_INTERPRET") == after


def test_the_floor_kernels_run_in_numbas_mode_as_the_numba_planner_does():
    from conformance.bench import chain_numba, gather_numba, kernel_modes
    from impls.offsets_planner import numba_cuda_planner

    assert kernel_modes.numba_simulated() is numba_cuda_planner.SIMULATED
    assert chain_numba.SIMULATED is gather_numba.SIMULATED is numba_cuda_planner.SIMULATED


def test_no_external_planner_means_no_reference_ratio():
    """The ``x reference`` ratio is against the run's one ``module:attr`` planner; without one it
    is None for every entry, never the ratio to a floor or chain entry (whose planner is also
    None: they share the planner's mode, bs, scenario and workload). With one it is that ratio."""
    chain = {"params": {"floor": "chain-triton", "mode": "replay", "bs": 64, "workload": "serving"},
             "stats": {"median": 2e-6, "min": 1.9e-6, "q1": 1.95e-6, "q3": 2.05e-6},
             "extra_info": {"floor": "chain-triton", "chain": True}}
    runs = [_bench("triton", "replay", 64, 3.0, planner_mode="gpu"), chain,
            _bench("floor:empty-triton", "replay", None, 1.5)]
    alone = annotate([dict(b, extra_info=dict(b["extra_info"])) for b in runs])
    triton = next(b for b in alone if b["params"].get("planner") == "triton")
    assert triton["extra_info"]["ratio_to_reference"] is None
    assert triton["extra_info"]["reference_planner"] is None
    ext = _bench("mine.kernels:launch", "replay", 64, 6.0, planner_mode="external")
    both = annotate([dict(b, extra_info=dict(b["extra_info"])) for b in runs] + [ext])
    triton = next(b for b in both if b["params"].get("planner") == "triton")
    assert triton["extra_info"]["ratio_to_reference"] == 0.5
    assert triton["extra_info"]["reference_planner"] == "mine.kernels:launch"
    mine = next(b for b in both if b["params"].get("planner") == "mine.kernels:launch")
    assert mine["extra_info"]["ratio_to_reference"] is None  # 1 against itself says nothing
    assert mine["extra_info"]["reference_planner"] is None
