"""A report never shows a benchmark figure beside verdicts it does not belong to
(conformance/reporting/bench_section.py ``withheld``): a planner the results judged keeps its
figures only when the bench recorded the same source digest and the run judged every one of its
cases passing; otherwise each of its rows reads ``withheld: REASON``, the first line says so, and
``--strict`` exits 1."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli import main as cli_main
from conformance.reporting import bench_section
from tests.report_runs import PLANNER, run

BENCH = {"name": "test_eager[{p}-1-reused]", "group": "eager",
         "stats": {"median": 2e-4, "min": 1e-4, "q1": 1.9e-4, "q3": 2.1e-4, "rounds": 9},
         "extra_info": {"planner": "{p}", "mode": "eager", "bs": 1, "scenario": "reused"}}


def _bench_file(path: Path, planners: dict) -> Path:
    """One eager figure for each of ``planners`` ({name: its fingerprint entry})."""
    benches = [json.loads(json.dumps(BENCH).replace("{p}", name)) for name in planners]
    path.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-12-01",
                                "machine_info": {"planners": planners}}))
    return path


def _report(results: Path, bench: Path, *extra: str, capsys) -> tuple[int, str, str]:
    code = cli_main(["report", str(results), "--bench", str(bench), "--format", "text", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_same_passing_code_is_shown(tmp_path, capsys):
    results = run("a").results
    judged = json.loads(results.read_text())["fingerprint"]["planners"]
    bench = _bench_file(tmp_path / "b.json", {"python": judged["python"]})
    code, out, err = _report(results, bench, "--strict", capsys=capsys)
    assert "withheld" not in out and "WITHHELD" not in err
    assert any(line.split()[:5] == ["python", "eager", "reused", "1", "200.00"]
               for line in out.splitlines()), out


def test_other_code_or_a_failing_planner_is_withheld(tmp_path, capsys):
    results = run("a").results
    judged = json.loads(results.read_text())["fingerprint"]["planners"]
    edited = {**judged["python"], "source": {**judged["python"]["source"], "sha256": "e" * 64}}
    bench = _bench_file(tmp_path / "b.json", {"python": edited, PLANNER: judged[PLANNER]})
    code, out, err = _report(results, bench, capsys=capsys)
    assert code == 0  # shown, and said; --strict fails it
    ran = judged["python"]["source"]["sha256"][:12]
    python_why = f"the benchmark ran other code than this run judged (eeeeeeeeeeee -> {ran})"
    planner_why = "6 case(s) not passing in this run: a wrong planner's figures are not published"
    assert err == (f"warning: BENCHMARK FIGURES WITHHELD: python: {python_why}; {PLANNER}: "
                   f"{planner_why}\n")
    rows = {line.split()[0]: line for line in out.splitlines()
            if line.split()[:3] in (["python", "eager", "reused"], [PLANNER, "eager", "reused"])}
    assert f"withheld: {python_why}" in rows["python"] and "200.00" not in rows["python"]
    assert f"withheld: {planner_why}" in rows[PLANNER]
    assert _report(results, bench, "--strict", capsys=capsys)[0] == 1


def test_a_bench_that_recorded_no_digest_is_withheld_for_a_judged_planner():
    doc = {"fingerprint": {"planners": {"python": {"source": {"sha256": "a" * 64}}}},
           "results": []}
    assert bench_section.withheld({}, {"python", "triton"}, doc) == {
        "python": "the benchmark ran other code than this run judged (not recorded -> "
                  "aaaaaaaaaaaa)",
        "triton": "not judged by this run: a figure stands beside no verdict of it"}
    assert bench_section.withheld({"python": {"sha256": "a" * 64}}, {"python"}, doc) == {}
    kernel = {"sha256": "a" * 64, "imports": [{"module": "k", "file": "k.py", "sha256": "b" * 64}]}
    swapped = {**kernel, "imports": [{"module": "k", "file": "k.py", "sha256": "c" * 64}]}
    doc["fingerprint"]["planners"]["python"]["source"] = kernel
    assert bench_section.withheld({"python": swapped}, {"python"}, doc) == {
        "python": "the benchmark ran other code than this run judged (its imports k)"}
    assert bench_section.withheld({}, {"python"}, None) == {}
