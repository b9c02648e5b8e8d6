"""A report never shows a benchmark figure beside verdicts it does not belong to
(conformance/reporting/bench_section.py ``withheld``): a planner the results judged keeps its
figures only when the bench recorded the same source digest and the run judged it on every launcher
case of the harness's own corpus (conformance/reporting/corpus_coverage.py), none of them failing;
otherwise each of its rows reads ``withheld: REASON``, the first line says so, and ``--strict``
exits 1. The results of a whole-corpus run are built by tests/corpus_results.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main as cli_main
from conformance.reporting import bench_figures, bench_section, corpus_coverage
from conformance.reporting.corpus_coverage import corpus_cases
from tests.corpus_results import corpus_results, write_covering
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
    results = write_covering(run("a").results, "python", tmp_path / "results.json")
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
    assert bench_section.withheld({"python": {"sha256": "a" * 64}}, {"python"}, {
        **doc, "results": corpus_results("python")}) == {}
    kernel = {"sha256": "a" * 64, "imports": [{"module": "k", "file": "k.py", "sha256": "b" * 64}]}
    swapped = {**kernel, "imports": [{"module": "k", "file": "k.py", "sha256": "c" * 64}]}
    doc["fingerprint"]["planners"]["python"]["source"] = kernel
    assert bench_section.withheld({"python": swapped}, {"python"}, doc) == {
        "python": "the benchmark ran other code than this run judged (its imports k)"}
    assert bench_section.withheld({}, {"python"}, None) == {}


def test_a_run_of_another_folder_is_withheld_though_every_case_passed(tmp_path, capsys):
    """Run ``a`` judged ``python`` on the folders of tests/data/report-cases, every case passing:
    cases under corpus ids (``spec7-no-prefix``, ...), but not the corpus's own."""
    results = run("a").results
    doc = json.loads(results.read_text())
    mine = [r for r in doc["results"] if r["planner"] == "python"]
    assert {r["status"] for r in mine} == {"pass"}
    assert "spec7-no-prefix" in {r["case"] for r in mine}
    bench = _bench_file(tmp_path / "b.json", {"python": doc["fingerprint"]["planners"]["python"]})
    code, out, err = _report(results, bench, capsys=capsys)
    total = len(corpus_cases())
    why = (f"judged on 0 of {total} corpus cases (cases/offsets-planner/; not judged: bs-0, bs-1, "
           f"bs-31 and {total - 3} more): figures stand only beside a run of the whole corpus")
    assert (code, err) == (0, f"warning: BENCHMARK FIGURES WITHHELD: python: {why}\n")
    row = next(line for line in out.splitlines() if line.split()[:3] == ["python", "eager",
                                                                          "reused"])
    assert f"withheld: {why}" in row and "200.00" not in row
    assert _report(results, bench, "--strict", capsys=capsys)[0] == 1


def test_only_a_verdict_on_the_corpus_case_itself_counts():
    """Each record counts for one corpus case only when it is that case, run from the corpus
    (conformance/reporting/corpus_coverage.py): a skip, another file or JSON path, a rerun line
    that loads another folder, a one-call subject's record or another planner's do not (nor other
    content under its id: tests/test_hostile26.py)."""
    whole = corpus_results("python")
    first, total = whole[0], len(whole)
    doc = {"fingerprint": {"planners": {"python": {"source": {"sha256": "a" * 64}}}}}
    sources = {"python": {"sha256": "a" * 64}}
    for change in ({"status": "skip"}, {"file": "mine/batch-sizes.json"}, {"json_path": "$"},
                   {"rerun": first["rerun"] + " --cases mine"}, {"rerun": "'unclosed"},
                   {"subject": "canary-plan"}, {"planner": "triton"}, {"entry": "validator"}):
        held = bench_section.withheld(sources, {"python"}, {**doc, "results": [
            {**first, **change}, *whole[1:]]})
        assert held == {"python": (
            f"judged on {total - 1} of {total} corpus cases (cases/offsets-planner/; not judged: "
            "bs-0): figures stand only beside a run of the whole corpus")}, change
    for status in ("differs", "not-wrapper"):  # judged, neither BAD
        assert bench_section.withheld(sources, {"python"}, {**doc, "results": [
            {**first, "status": status}, *whole[1:]]}) == {}, status
    for status in ("xfail", "declared"):  # a failure the corpus does not declare for it
        assert "not passing that the corpus declares for no such planner" in \
            bench_section.withheld(sources, {"python"}, {**doc, "results": [
                {**first, "status": status, "observed": "fail"}, *whole[1:]]})["python"], status
    assert corpus_coverage.gap(whole, "python", cases=()) == (  # a corpus that loads nothing here
        "the corpus (cases/offsets-planner/) loads no launcher case here: nothing vouches for a "
        "figure")
    failing = [{**first, "status": "fail"}, *whole[1:]]
    assert bench_section.withheld(sources, {"python"}, {**doc, "results": failing}) == {
        "python": "1 case(s) not passing in this run: a wrong planner's figures are not published"}


def _goal(planners: list[str] | None) -> dict:
    """A goal met on python's 200 us figure (the worst); ``planners`` as the suite records them,
    or None for a file written before it did."""
    record = {"goal": "eager, reused, both", "target": "<= 500 us", "median": 200.0,
              "low": 200.0, "high": 200.0, "repeats": 1, "where": "python reused bs 1",
              "verdict": "met"}
    return record if planners is None else {**record, "planners": planners}


def test_a_goal_judged_on_a_withheld_planner_shows_no_figure(tmp_path):
    """The goal's worst figure is python's (shown), but it was judged on the failing external
    planner's figure too: neither its figure nor its ``met`` is shown, as a ``met`` would vouch
    for that planner. A file without ``planners`` falls back to the planner ``where`` names."""
    results = write_covering(run("a").results, "python", tmp_path / "results.json")
    judged = json.loads(results.read_text())
    planners = judged["fingerprint"]["planners"]
    bench = _bench_file(tmp_path / "b.json", {"python": planners["python"],
                                              PLANNER: planners[PLANNER]})
    doc = json.loads(bench.read_text())
    why = "6 case(s) not passing in this run: a wrong planner's figures are not published"
    for recorded, measured, verdict in (
            ([PLANNER, "python"], "withheld", f"withheld: {PLANNER} {why}"),
            (None, "200 (python reused bs 1)", "met")):
        doc["conformance_goals"] = {"repeats": 1, "goals": [_goal(recorded)]}
        bench.write_text(json.dumps(doc))
        model = bench_section.section(bench, judged)["bench"]
        assert model["withheld"] == {PLANNER: why}
        [goal] = model["goals"]
        assert (goal["measured"], goal["verdict"]) == (measured, verdict)
    doc["conformance_goals"]["goals"] = [_goal(["python", 7])]
    bench.write_text(json.dumps(doc))
    with pytest.raises(bench_figures.BenchError, match="record 0: field.s. planners missing or "
                       "of the wrong type"):
        bench_section.section(bench, judged)
