"""``bench --repeat N``: the whole measurement N times in one run, each goal judged on the median of
the N repeats with their range beside it (terminal, JSON, report text / Markdown / HTML), and a
compare that calls a move by repeats only when their count supports it
(conformance/reporting/bench_repeats.py, bench_noise.py, conformance/bench/goals.py, plugin.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.bench import cli as bench_cli
from conformance.bench import goals
from conformance.bench.summary_table import annotate, rows
from conformance.cli import main as cli_main
from conformance.reporting.bench_figures import BenchError, load_bench
from conformance.reporting.bench_noise import ALPHA, moved, rounds_compared
from conformance.reporting.bench_repeats import chance_apart, figure_key, merge

REPO = Path(__file__).resolve().parent.parent
VARYING = "eager, varying-bs, triton and numba-cuda"
REUSED = "eager, reused, triton and numba-cuda, vs the empty Triton launch"


def _bench(planner, mode, bs, us, repeat=None, scenario="reused", floor=None, rounds=15):
    name = f"test_plan[{planner}-{mode}-{bs}-{scenario}-serving"
    if floor:
        name = f"test_floor[{floor}-{mode}"
    params = {"planner": planner, "mode": mode, "bs": bs, "scenario": scenario,
              "workload": "serving"} if not floor else {"floor": floor, "mode": mode}
    if repeat is not None:
        name += f"-repeat{repeat}"
        params["bench_repeat"] = repeat
    q = us * 1e-6
    extra = {"floor": floor} if floor else {"planner_mode": "gpu", "scenario": scenario}
    return {"name": name + "]", "fullname": f"conformance/bench/test_bench.py::{name}]",
            "params": params, "extra_info": extra,
            "stats": {"median": q, "min": q * 0.9, "q1": q * 0.98, "q3": q * 1.02,
                      "rounds": rounds}}


def _run(p50s: dict[str, list[float]], empty: list[float]) -> list[dict]:
    """A GPU run of len(empty) repeats: triton eager varying-bs and reused, the empty floor."""
    out = []
    for i, floor in enumerate(empty, 1):
        r = i if len(empty) > 1 else None
        out += [_bench("triton", "eager", 4096, p50s["varying"][i - 1], r, "varying-bs"),
                _bench("triton", "eager", 64, p50s["reused"][i - 1], r),
                _bench("", "eager", None, floor, r, floor="empty-triton")]
    return annotate(out)


def test_a_goal_is_judged_on_the_median_of_its_repeats_with_the_range_beside_it():
    # repeat 2 is disturbed (24.6 us, as the second run): one run would miss the goal
    benches = _run({"varying": [17.8, 24.6, 18.4], "reused": [13.0, 13.0, 20.0]},
                   empty=[10.0, 10.0, 20.0])
    got = {r["goal"]: r for r in goals.records(benches)}
    varying = got[VARYING]
    assert (varying["median"], varying["low"], varying["high"], varying["repeats"]) == \
        pytest.approx((18.4, 17.8, 24.6, 3))
    assert varying["verdict"] == "met"
    row = {r[0]: r for r in goals.evaluate(benches)}[VARYING]
    assert row[2] == "18.4 (17.8..24.6 over 3 repeats) (triton varying-bs bs 1..4096)"
    # the ratio to the empty launch is taken within each repeat: 1.3, 1.3, 1.0 -> median 1.3
    reused = got[REUSED]
    assert (reused["median"], reused["low"], reused["high"]) == pytest.approx((1.3, 1.0, 1.3))
    assert goals.render(benches).splitlines()[0] == \
        "Goals judged on the median of 3 repeats (their range beside it)."
    one = {r["goal"]: r for r in goals.records(_run({"varying": [24.6], "reused": [13.0]},
                                                    empty=[10.0]))}[VARYING]
    assert one["repeats"] == 1 and one["verdict"].startswith("missed by 1.23x")
    assert goals.evaluate(_run({"varying": [24.6], "reused": [13.0]}, [10.0]))[0][2] == \
        "24.6 (triton varying-bs bs 1..4096)"  # one run: no range


def test_the_table_shows_one_row_per_figure_median_and_range():
    benches = _run({"varying": [17.8, 24.6, 18.4], "reused": [13.0, 13.0, 20.0]},
                   empty=[10.0, 10.0, 20.0])
    table = rows(benches)
    assert len(table) == 3  # three figures, not nine entries
    varying = next(r for r in table if r[1] == "eager (varying-bs)")
    assert varying[3] == "18.40 (17.80..24.60)"
    reused = next(r for r in table if r[1] == "eager (reused)")
    assert reused[3] == "13.00 (13.00..20.00)" and reused[6] == "1.3"  # x floor: median of 1.3,
    # 1.3 and 1.0 (each repeat against its own empty launch), never 13 / median(empty)


def test_merge_keeps_each_repeat_p50_and_refuses_a_figure_refused_once():
    a = [_bench("triton", "eager", 64, us, i) for i, us in enumerate((30.0, 10.0, 20.0), 1)]
    merged = merge(a)
    assert len(merged) == 1 and merged[0]["params"].get("bench_repeat") is None
    assert merged[0]["stats"]["median"] == pytest.approx(20e-6)
    assert merged[0]["stats"]["min"] == pytest.approx(9e-6)
    assert merged[0]["extra_info"]["repeat_p50_us"] == pytest.approx([10.0, 20.0, 30.0])
    assert figure_key(a[0]) == figure_key(a[2]) == merged[0]["fullname"]
    assert merged[0]["fullname"].endswith("test_plan[triton-eager-64-reused-serving]")
    a[1]["extra_info"]["refused"] = "the clock was rebound"
    a[1]["stats"] = None
    assert merge(a)[0]["extra_info"]["refused"] == "the clock was rebound"


def _file(path: Path, benches: list[dict], **top) -> Path:
    path.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-12-02", **top}))
    return path


def _repeats(us: list[float], rounds: int = 3) -> list[dict]:
    return [_bench("triton", "eager", 64, v, i, rounds=rounds) for i, v in enumerate(us, 1)]


def test_chance_apart_is_the_no_change_chance_of_two_separated_samples():
    assert chance_apart(1, 1) == 1.0 and chance_apart(2, 2) == pytest.approx(1 / 3)
    assert chance_apart(3, 3) == pytest.approx(0.1) and chance_apart(5, 5) == pytest.approx(
        2 / 252)
    assert chance_apart(2, 3) > ALPHA >= chance_apart(3, 3)


def test_compare_calls_a_move_by_repeats_only_when_their_count_supports_it(tmp_path: Path):
    # 3 rounds a run (never enough by rounds), 3 repeats a side, every repeat apart: a move
    old = load_bench(_file(tmp_path / "a.json", _repeats([10.0, 10.5, 11.0])))[0]
    new = load_bench(_file(tmp_path / "b.json", _repeats([13.0, 12.0, 14.0])))[0]
    got = moved(old, new)
    assert [(m["old_repeats"], m["new_repeats"], round(m["ratio"], 3)) for m in got] == [
        (3, 3, round(13.0 / 10.5, 3))]
    assert rounds_compared(old, new)["judged"] == 1
    # overlapping repeats: noise
    mixed = load_bench(_file(tmp_path / "c.json", _repeats([10.8, 12.0, 14.0])))[0]
    assert moved(old, mixed) == []
    # two repeats a side, apart: 1/3 chance with no change, not judged
    two_old = load_bench(_file(tmp_path / "d.json", _repeats([10.0, 10.5])))[0]
    two_new = load_bench(_file(tmp_path / "e.json", _repeats([20.0, 21.0])))[0]
    assert moved(two_old, two_new) == [] and rounds_compared(two_old, two_new)["judged"] == 0


def test_compare_text_says_the_repeats_of_each_side(tmp_path: Path, capsys):
    old = _file(tmp_path / "a.json", _repeats([10.0, 10.5, 11.0]))
    new = _file(tmp_path / "b.json", _repeats([13.0, 12.0, 14.0]))
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "1 benchmark figure(s) moved beyond their noise (1 of 1 judged; repeats: old 3, new " \
           "3; rounds: old 3, new 3;" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("triton"))
    assert row.split()[-2:] == ["3/3", "3/3"] and "1.24x" in row
    page = tmp_path / "compare.html"
    assert cli_main(["report", "--compare", str(old), str(new), "--out", str(page)]) == 0
    assert "repeats: old 3, new 3" in page.read_text()


def test_goal_records_from_a_file_and_the_files_before_them(tmp_path: Path):
    record = {"goal": "g", "target": "<= 20 us", "median": 18.4, "low": 17.8, "high": 24.6,
              "repeats": 3, "where": "triton", "verdict": "met"}
    path = _file(tmp_path / "a.json", _repeats([1.0, 2.0, 3.0]),
                 conformance_goals={"repeats": 3, "goals": [record]})
    _, info = load_bench(path)
    assert info["repeats"] == 3 and info["goals"] == [record]
    old = _file(tmp_path / "old.json", [_bench("triton", "eager", 64, 5.0)])
    assert load_bench(old)[1]["goals"] is None and load_bench(old)[1]["repeats"] == 1
    bad = _file(tmp_path / "bad.json", [_bench("triton", "eager", 64, 5.0)],
                conformance_goals={"goals": [dict(record, median="18.4")]})
    with pytest.raises(BenchError) as err:
        load_bench(bad)
    assert str(err.value) == (f"{bad}: conformance_goals record 0: field(s) median missing or of "
                              "the wrong type")


def test_cli_passes_repeat_and_says_one_run_is_noisy(tmp_path: Path, capsys):
    ns = bench_cli.argparse.Namespace(planner=[], mode=[], scenario=[], workload=[], bs=None,
                                      rounds=None, json=tmp_path / "b.json", report=None,
                                      pytest_args=[], repeat=3)
    assert "--bench-repeat=3" in bench_cli.pytest_args(ns)
    ns.repeat = 1
    assert not any(a.startswith("--bench-repeat") for a in bench_cli.pytest_args(ns))
    with pytest.raises(SystemExit):
        cli_main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--repeat N" in text and "a goal judged on one run is noisy" in text


def test_a_cpu_run_of_two_repeats_writes_both_and_the_report_prints_goals(tmp_path: Path,
                                                                          capsys):
    from tests.corpus_results import write_covering
    from tests.report_runs import run
    from tests.subproc import CHILD_ADDOPTS

    out = tmp_path / "bench.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_ADDOPTS"] = CHILD_ADDOPTS
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/bench", "-p", "no:cacheprovider",
         "-p", "no:hypothesispytest", "--planner", "python", "--bench-bs", "1",
         "--bench-mode", "eager", "--bench-scenario", "reused", "--bench-rounds", "2",
         "--bench-repeat", "2", f"--benchmark-json={out}", "-v"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    names = [b["name"] for b in doc["benchmarks"]]
    assert sorted(names) == sorted(f"{t}-repeat{i}]" for i in (1, 2) for t in (
        "test_plan[python-eager-1-reused-serving", "test_floor[torch-op-eager",
        "test_floor[torch-op-launch"))
    ran = [ln.split("::")[1].split(" ")[0] for ln in proc.stdout.splitlines()
           if "PASSED" in ln and "::" in ln]
    assert [n.endswith("repeat1]") for n in ran] == [True] * 3 + [False] * 3  # repeat by repeat
    assert doc["conformance_goals"]["repeats"] == 2
    assert len(doc["conformance_goals"]["goals"]) == len(goals.records([]))
    assert "| `python [cpu]`    | `eager (reused)` | 1    |" in proc.stdout
    # run "a"'s python planner, judged on the whole corpus (a figure stands beside no less)
    results = str(write_covering(run("a").results, "python", tmp_path / "results.json"))
    assert cli_main(["report", results, "--bench", str(out), "--format", "text"]) in (0, 1)
    text = capsys.readouterr().out
    assert "serving goals, judged on the median of 2 repeats (their range beside it)." in text
    head = next(ln for ln in text.splitlines() if ln.startswith("planner") and "p50 range" in ln)
    assert head.split()[-3:] == ["p50", "range", "repeats"]
    row = next(ln for ln in text.splitlines() if ln.startswith("python") and "reused" in ln)
    assert row.split()[-1] == "2" and "withheld" not in row
    assert cli_main(["report", results, "--bench", str(out), "--format", "markdown"]) in (0, 1)
    assert "judged on the median of 2 repeats" in capsys.readouterr().out
    page = tmp_path / "r.html"
    assert cli_main(["report", results, "--bench", str(out), "--out", str(page)]) in (0, 1)
    html = page.read_text()
    assert "<h3>Serving goals</h3>" in html and "p50 range over repeats" in html


def test_a_goal_record_names_every_planner_it_was_judged_on():
    """``planners``: every planner with a figure in the goal, not only the worst one ``where``
    names (a report withholds the goal when it withholds any of them)."""
    benches = annotate([_bench("triton", "eager", 4096, 18.0, None, "varying-bs"),
                        _bench("numba-cuda", "eager", 4096, 12.0, None, "varying-bs")])
    got = {r["goal"]: r for r in goals.records(benches)}
    assert got[VARYING]["planners"] == ["numba-cuda", "triton"]
    assert got[VARYING]["where"] == "triton varying-bs bs 1..4096"
    assert got["bound plan, per-step validation"]["planners"] == []
