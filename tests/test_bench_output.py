"""Benchmark output says what it measured: the scenario and the bs range of a varying-bs stream in
the report's rows, and a compare that calls a move only with enough rounds a side
(conformance/reporting/bench_figures.py, compare.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli import main as cli_main
from conformance.reporting.bench_figures import load_bench, table
from conformance.reporting.bench_noise import MIN_REPEATS, MIN_ROUNDS, moved, rounds_compared


def _bench(scenario: str, bs: int, median_us: float, rounds: int, spread: float = 0.01,
           bs_range=None) -> dict:
    q = median_us * 1e-6
    extra = {"scenario": scenario, **({"bs_range": bs_range} if bs_range else {})}
    return {"name": f"test_plan[python-eager-{bs}-{scenario}-serving]",
            "fullname": f"test_plan[python-eager-{bs}-{scenario}-serving]",
            "params": {"planner": "python", "mode": "eager", "bs": bs, "scenario": scenario},
            "extra_info": extra,
            "stats": {"median": q, "min": q * 0.9, "q1": q * (1 - spread), "q3": q * (1 + spread),
                      "rounds": rounds}}


def _write(path: Path, benches: list[dict], planners: dict | None = None) -> Path:
    """A pytest-benchmark file of ``benches``; ``planners``: its fingerprint's planners (with
    their source digests), as the bench records them."""
    doc = {"benchmarks": benches, "datetime": "2026-12-01"}
    if planners is not None:
        doc["machine_info"] = {"planners": planners}
    path.write_text(json.dumps(doc))
    return path


def test_fresh_reused_and_varying_bs_rows_are_told_apart(tmp_path: Path):
    path = _write(tmp_path / "b.json", [_bench("reused", 1, 178.5, 9), _bench("fresh", 1, 192.4, 9),
                                        _bench("varying-bs", 64, 300.0, 9, bs_range=[1, 64]),
                                        _bench("varying-bs", 4096, 900.0, 9)])
    got = {(r["scenario"], r["bs"]) for r in table(load_bench(path)[0])}
    assert got == {("reused", "1"), ("fresh", "1"), ("varying-bs", "1..64"),
                   ("varying-bs", "1..4096")}  # never "64": the stream's range


def test_three_rounds_cannot_call_a_move(tmp_path: Path):
    old = [_bench("reused", 1, 100.0, 3), _bench("fresh", 1, 100.0, MIN_ROUNDS)]
    new = [_bench("reused", 1, 160.0, 3), _bench("fresh", 1, 160.0, MIN_ROUNDS)]
    a, b = _write(tmp_path / "a.json", old), _write(tmp_path / "b.json", new)
    rows_a, rows_b = load_bench(a)[0], load_bench(b)[0]
    figures = moved(rows_a, rows_b)
    assert [(m["scenario"], m["old_rounds"], m["new_rounds"]) for m in figures] == [
        ("fresh", MIN_ROUNDS, MIN_ROUNDS)]
    assert rounds_compared(rows_a, rows_b) == {"figures": 2, "judged": 1, "old": "3-5",
                                               "new": "3-5", "old_repeats": "1",
                                               "new_repeats": "1", "min_rounds": MIN_ROUNDS,
                                               "min_repeats": MIN_REPEATS}


def test_overlapping_iqrs_are_noise(tmp_path: Path):
    old = [_bench("fresh", 1, 100.0, 50, spread=0.2)]
    new = [_bench("fresh", 1, 130.0, 50, spread=0.2)]  # [80, 120] and [104, 156] overlap
    assert moved(load_bench(_write(tmp_path / "a.json", old))[0],
                 load_bench(_write(tmp_path / "b.json", new))[0]) == []


def test_compare_says_how_many_rounds_each_side_had(tmp_path: Path, capsys):
    old = _write(tmp_path / "a.json", [_bench("reused", 1, 100.0, 3)])
    new = _write(tmp_path / "b.json", [_bench("reused", 1, 160.0, 3)])
    assert cli_main(["report", "--compare", str(old), str(new), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert ("benchmarks: none of 1 figure(s) judged (repeats: old 1, new 1; rounds: old 3, new 3; "
            "a move needs >= 3 repeats a side (every repeat apart) or, without repeats, >= 5 "
            "rounds a side (IQRs apart))") in text
    assert "moved beyond" not in text


def test_text_report_rows_carry_scenario_bs_range_and_rounds(tmp_path: Path, capsys):
    from tests.corpus_results import write_covering
    from tests.report_runs import run

    # run "a"'s python planner, judged on the whole corpus (a figure stands beside no less)
    results = write_covering(run("a").results, "python", tmp_path / "results.json")
    judged = json.loads(results.read_text())["fingerprint"]["planners"]  # the same python planner
    bench = _write(tmp_path / "b.json", [_bench("reused", 1, 178.51, 9),
                                         _bench("fresh", 1, 192.42, 9),
                                         _bench("varying-bs", 64, 300.0, 9, bs_range=[1, 64])],
                   {"python": judged["python"]})
    assert cli_main(["report", str(results), "--bench", str(bench),
                     "--format", "text"]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:4] == ["planner", "mode",
                                                                        "scenario", "bs"])
    body = [ln.split()[:7] for ln in lines[head + 2:head + 5]]
    assert sorted(body) == sorted([["python", "eager", "fresh", "1", "192.42", "3.85", "9"],
                                   ["python", "eager", "reused", "1", "178.51", "3.57", "9"],
                                   ["python", "eager", "varying-bs", "1..64", "300.00", "6.00",
                                    "9"]])
