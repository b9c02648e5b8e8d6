"""Each published benchmark reward hack, planted (tests/planted/bench_hacks.py), gets its figure
refused with the reason; the honest pure-Python planner's figure is published. CPU, host mode
``eager`` (the one mode an external planner has), bs 8, two rounds: five bench runs in all (the
patchers in runs of their own, since a patched clock is process-wide).

``elapsed_time_patched`` changes the figure only on a GPU (``replay``); here the rebinding itself
is what is refused. The GPU paths (replay's recomputed event times, device-synchronised judging)
are not exercised on the CPU.
"""

from __future__ import annotations

import json
import re

import pytest

from conformance.bench.refusal import published, refused
from conformance.bench.summary_table import render
from conformance.reporting.bench_figures import load_bench, table
from tests.test_bench import _planner_benches, _pytest

HACKS = "tests.planted.bench_hacks"
WRONG = ("identity_cache", "fingerprint_cache", "correct_first_then_wrong", "lazy",
         "skip_every_other")
SCENARIOS = ("reused", "fresh", "varying-bs")
_ARGS = ("--bench-bs", "8", "--bench-rounds", "2", "--bench-mode", "eager")


def _bench_run(tmp_path_factory, planners: list[str], *extra: str):
    """(JSON document, stdout, exit code, JSON path) of one bench run."""
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    args = [a for p in planners for a in ("--planner", p)]
    proc = _pytest("conformance/bench", *args, *_ARGS, *extra, f"--benchmark-json={out}")
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout, proc.returncode, out


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory):
    return _bench_run(tmp_path_factory, ["python", *(f"{HACKS}:{h}" for h in WRONG)])


def _by_planner(doc: dict) -> dict[tuple[str, str], dict]:
    return {(b["params"]["planner"], b["params"]["scenario"]): b for b in _planner_benches(doc)}


@pytest.mark.slow  # a bench run of every scenario, about 10 s on 2 cores
def test_the_honest_planner_is_published_in_every_scenario(wrong_run):
    doc, _, _, _ = wrong_run
    benches = _by_planner(doc)
    for scenario in SCENARIOS:
        b = benches[("python", scenario)]
        assert refused(b) is None, refused(b)
        assert b["stats"]["median"] > 0 and b["extra_info"]["ratio_to_floor"] > 0
        assert b["extra_info"]["judged_calls"] >= 3  # at least one judged round: 1 + 2 probes
        assert isinstance(b["extra_info"]["judge_seed"], int)


@pytest.mark.parametrize("hack", WRONG)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_planner_whose_timed_calls_plan_wrong_is_refused(wrong_run, hack, scenario):
    doc, stdout, code, _ = wrong_run
    b = _by_planner(doc)[(f"{HACKS}:{hack}", scenario)]
    reason = refused(b)
    assert reason and reason.startswith("outputs wrong at "), reason
    assert "the reference plans" in reason
    assert all(b["stats"][k] is None for k in ("median", "min", "q1", "q3", "mean"))
    assert "data" not in b["stats"] and b["extra_info"].get("ratio_to_floor") is None
    assert code == 1  # a refused figure fails its test
    name = b["name"]
    assert f"FAILED conformance/bench/test_bench.py::{name}" in stdout
    assert f"refused figure: {reason}" in stdout


def test_refused_figures_show_their_reason_and_no_number_in_every_table(wrong_run):
    doc, stdout, _, path = wrong_run
    lines = [ln for ln in stdout[stdout.index("benchmark table"):].splitlines()
             if ln.startswith(f"| `{HACKS}:")]
    assert len(lines) == len(WRONG) * len(SCENARIOS)
    notes = stdout[stdout.index("Refused figures (no time published"):].splitlines()
    for k, line in enumerate(lines, 1):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        assert cells[3] == f"refused ({k})", cells[3]  # the reason in note k, under the table
        assert set(cells[4:]) == {"-"}
        [note] = [n for n in notes if n.startswith(f"({k}) ")]
        assert note.startswith(f"({k}) {cells[0]}, {cells[1]}, bs {cells[2]}: `refused: outputs "
                               "wrong at ") and note.endswith("`"), note  # a code span
    # no reason widens the table: the p50 column is as wide as its widest number or note mark
    assert {len(ln.split("|")[4]) for ln in lines} == {len(" refused (NN) ")}
    # pytest-benchmark's own tables list only published figures
    own = stdout[stdout.index("benchmark 'eager'"):stdout.index("benchmark table")]
    assert "bench_hacks" not in own and "test_plan[python-eager-8-fresh-serving]" in own
    rows, _ = load_bench(path)
    report = {r["key"]: r for r in table(rows)}
    for b in _planner_benches(doc):
        cell = report[b["fullname"]]
        if refused(b):
            assert cell["p50"] == f"refused: {refused(b)}" and cell["min"] == "-"
        else:
            assert float(cell["p50"]) > 0
    assert len(published(doc["benchmarks"])) == len(doc["benchmarks"]) - len(lines)
    assert render(doc["benchmarks"]).count("refused: ") == len(lines)


@pytest.mark.parametrize(("hack", "reason"), [
    ("perf_counter_patched", "timer tampered: time.perf_counter replaced"),
    ("elapsed_time_patched", "timer tampered: torch.cuda.Event.elapsed_time replaced"),
    # resolved after the timers were chosen: seen by the check right after the planner resolves
    ("bench_clock_patched", "timer tampered: conformance.bench.timing.perf_counter replaced"),
])
def test_a_planner_that_patches_a_clock_gets_every_figure_refused(tmp_path_factory, hack,
                                                                   reason):
    doc, _, code, _ = _bench_run(tmp_path_factory, [f"{HACKS}:{hack}"], "--bench-scenario",
                                 "reused")
    assert code == 1 and doc["benchmarks"]
    mine = _planner_benches(doc)
    for b in doc["benchmarks"]:  # the planner's and the floors': the clock is process-wide
        when = "when the planner was resolved" if b in mine else "after the bench bound it"
        assert refused(b) == f"{reason} {when}", (b["name"], refused(b))
        assert b["stats"]["median"] is None
    assert len(mine) == 1 and len(doc["benchmarks"]) > 1


def test_a_planner_that_slows_the_round_timer_unseen_is_refused_by_the_wall_clock(
        tmp_path_factory):
    doc, _, code, _ = _bench_run(tmp_path_factory, [f"{HACKS}:round_timer_slowed"],
                                 "--bench-scenario", "reused")
    (mine,) = _planner_benches(doc)
    reason = refused(mine) or ""
    m = re.match(r"wall clock: (\d+) of (\d+) rounds disagree; round \d+ is ", reason)
    # a majority of the rounds decides (clocks.loop_mismatch): on a loaded machine one round's
    # brackets may come out otherwise
    assert code == 1 and m and 2 * int(m[1]) > int(m[2]), reason
    assert mine["stats"]["median"] is None
    # a quarter-speed clock: the timer reads ~1/4 of the independent bracket
    figure, wall = (float(x.split(" us")[0]) for x in reason.split(" is ")[1].split(", "))
    assert 0.15 < figure / wall < 0.35
    floors = [b for b in doc["benchmarks"] if b not in _planner_benches(doc)]
    assert floors and all(refused(b) is None for b in floors)  # only its own timer was swapped


def _serving(bs: int):
    from conformance.bench import workloads

    spec = workloads.spec_for("serving", "cpu", (128, 64), seed=bs)
    return workloads.build(bs, spec, "cpu")


def _valid(entry: dict, rows: int) -> None:
    rpi = entry["req_pool_indices"]
    active = rpi[rpi != 0].tolist()
    assert len(set(active)) == len(active) and all(0 < r < rows for r in active)
    assert int(entry["prefix_lens"].min()) >= 0 and int(entry["extend_seq_lens"].min()) >= 0


def test_fresh_entries_have_their_own_contents_and_refresh_redraws_them_in_place():
    import torch

    from conformance.bench import rejudge, workloads
    from impls.offsets_planner import python_planner

    kw = _serving(64)
    pool = workloads.request_pool(kw, "fresh", size=8, seed=3)
    names = ("req_pool_indices", "prefix_lens", "extend_seq_lens")
    contents = {tuple(tuple(e[n].tolist()) for n in names) for e in pool}
    assert len(contents) == 8  # no two calls of a round meet the same contents
    padding = kw["req_pool_indices"] == 0
    for entry in pool:
        _valid(entry, 128)
        assert torch.equal(entry["req_pool_indices"] == 0, padding)  # padding rows stay padding
    before = [[e[n].clone() for n in names] for e in pool]
    ptrs = [[e[n].data_ptr() for n in names] for e in pool]
    workloads.refresh(pool, torch.Generator().manual_seed(11))
    for entry, old, ptr in zip(pool, before, ptrs):
        assert [entry[n].data_ptr() for n in names] == ptr  # same tensors, new contents
        assert not torch.equal(entry["req_pool_indices"], old[0])
        assert sorted(entry["extend_seq_lens"].tolist()) == sorted(old[2].tolist())
        _valid(entry, 128)
        python_planner.launch(**entry)
        assert rejudge.plan_mismatch(entry) is None
    entry["out_write_offsets"][1] += 1
    assert rejudge.plan_mismatch(entry).startswith("out_write_offsets[1] = ")


def test_reused_is_one_copy_and_varying_bs_entries_are_prefixes():
    from conformance.bench import workloads

    kw = _serving(16)
    (reused,) = workloads.request_pool(kw, "reused")
    assert reused["req_pool_indices"].data_ptr() != kw["req_pool_indices"].data_ptr()
    assert reused["req_pool_indices"].tolist() == kw["req_pool_indices"].tolist()
    assert reused["out_write_offsets"] is kw["out_write_offsets"]  # one buffer set
    varying = workloads.request_pool(kw, "varying-bs", size=6, seed=5)
    sizes = [int(e["req_pool_indices"].shape[0]) for e in varying]
    assert all(1 <= k <= 16 for k in sizes) and len(set(sizes)) > 1
    assert all(e["req_pool_indices"].is_contiguous() for e in varying)
    base = varying[0]["req_pool_indices"]._base
    offsets = [e["req_pool_indices"].data_ptr() - base.data_ptr() for e in varying]
    assert offsets == [j * workloads.ROW_ALIGN * 8 for j in range(6)]  # as aligned as their own


def test_tampered_names_a_rebound_clock(monkeypatch):
    import time

    import torch

    from conformance.bench import clocks

    assert clocks.tampered() == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 0.0)
    assert clocks.tampered() == ["time.perf_counter", "torch.cuda.Event.elapsed_time"]
    monkeypatch.undo()
    assert clocks.tampered() == []


def test_loop_mismatch_compares_stored_rounds_with_the_bench_clock():
    from conformance.bench import clocks

    clock = clocks.RoundClock(clocks.perf_counter)
    t0 = clocks.synced_ns()
    for _ in range(3):
        clock()
        sum(range(20000))
        clock()
    wall = clocks.synced_ns() - t0
    rounds = clock.rounds_s()
    assert len(rounds) == 3 and all(r > 0 for r in rounds)
    stored = [r / 4 for r in rounds[1:]]  # one warm-up round, 4 calls a round
    assert clocks.loop_mismatch(clock, stored, 4, wall, host_timed=True) is None
    halved = [stored[0] / 2, stored[1]]
    assert clocks.loop_mismatch(clock, halved, 4, wall, host_timed=True).startswith(
        "statistics: round 0 is ")
    assert clocks.loop_mismatch(clock, stored, 4, wall // 10, host_timed=True).startswith(
        "wall clock: the rounds add up to ")


def test_one_descheduled_round_is_noise_and_a_majority_of_off_rounds_is_refused():
    from conformance.bench import clocks

    def scripted(timer_s: list[float], wall_s: list[float]):
        clock = clocks.RoundClock(clocks.perf_counter)
        for t, w in zip(timer_s, wall_s):  # one round: timer and bracket readings at start, end
            clock.values += [0.0, t]
            clock.wall_ns += [0, int(w * 1e9)]
        return clock

    ms = 1e-3
    fine = scripted([ms, ms, ms, ms], [ms, 1.4 * ms, ms, ms])  # round 1 lost 0.4 ms to the OS
    assert clocks.loop_mismatch(fine, [ms] * 4, 1, int(10 * ms * 1e9), host_timed=True) is None
    slow = scripted([ms / 4] * 3 + [ms], [ms] * 4)  # a quarter-speed timer on 3 rounds of 4
    assert clocks.loop_mismatch(slow, [ms / 4] * 3 + [ms], 1, int(10 * ms * 1e9),
                                host_timed=True).startswith(
        "wall clock: 3 of 4 rounds disagree; round 0 is 250.0 us by the timer, 1000.0 us")
    half = scripted([ms / 4] * 2 + [ms] * 2, [ms] * 4)  # half the rounds: not a majority
    assert clocks.loop_mismatch(half, [ms / 4] * 2 + [ms] * 2, 1, int(10 * ms * 1e9),
                                host_timed=True) is None


def test_the_judges_table_copy_is_made_again_once_the_table_is_written():
    import torch

    from conformance.bench.rejudge import cpu_copy

    table = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    first = cpu_copy(table)
    assert cpu_copy(table) is first and first.data_ptr() != table.data_ptr()
    table[1, 2] = -7  # an in-place write: a new copy with the new contents
    again = cpu_copy(table)
    assert again is not first and int(again[1, 2]) == -7 and int(first[1, 2]) == 6
