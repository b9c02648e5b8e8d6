"""``report --compare`` of runs that ran different planners says so and compares only the planners
both ran (no item of a missing planner counts as a regression); ``--fail-on-regression`` makes a
regression exit 1 (conformance/reporting/compare.py,
compare_verdict.py, command.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.cli import main as cli_main
from conformance.reporting.compare import compare, planner_sets
from conformance.reporting.compare_verdict import regressions
from tests.report_runs import PLANNER, run


def _renamed(tmp_path: Path, name: str, old: str, new: str, fail: str | None = None) -> Path:
    """Run ``a``'s results with planner ``old`` renamed ``new`` (ids too); ``fail``: one more
    case of the python planner made to fail."""
    doc = json.loads(run("a").results.read_text())
    planners = doc["fingerprint"]["planners"]
    if old in planners:
        planners[new] = planners.pop(old)
    for r in doc["results"]:
        if r["planner"] == old:
            r["planner"], r["id"] = new, r["id"].replace(f"[{old}]", f"[{new}]")
        if fail and r["id"] == fail:
            r["status"], r["message"] = "fail", "out_write_offsets: 1 element(s) differ"
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def test_different_planner_sets_are_named_not_counted_as_regressions(tmp_path, capsys):
    a = run("a").results
    b = _renamed(tmp_path, "b.json", PLANNER, "tests.planted.report_planners:other")
    doc_a = json.loads(a.read_text())
    mine = sum(1 for r in doc_a["results"] if r["planner"] == PLANNER)
    sets = planner_sets(doc_a, json.loads(b.read_text()))
    assert sets["only_old"] == [PLANNER] and sets["only_new"] == [
        "tests.planted.report_planners:other"] and "python" in sets["both"]
    assert sets["left_out"] == 2 * mine
    model = compare(a, b)
    assert regressions(model) == 0 and model["disappeared"] == [] and model["appeared"] == []
    assert cli_main(["report", "--compare", str(a), str(b), "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert (f"the runs ran different planners (only in OLD: {PLANNER}; only in NEW: "
            f"tests.planted.report_planners:other): compared on the 1 planner(s) both ran "
            f"(python), {2 * mine} item(s) of the others left out") in text
    assert sets["compared"] == ["python"] and text.splitlines()[2].startswith(
        f"not compared: OLD ran {PLANNER} only, NEW ran tests.planted.report_planners:other "
        f"only (6 of NEW's items of those not passing, with no baseline); no regressions ")


def test_fail_on_regression_exits_1(tmp_path, capsys):
    a = run("a").results
    doc = json.loads(a.read_text())
    passing = next(r["id"] for r in doc["results"] if r["planner"] == "python"
                   and r["status"] == "pass")
    b = _renamed(tmp_path, "b.json", "-", "-", fail=passing)
    assert cli_main(["report", "--compare", str(a), str(b), "--format", "text"]) == 0  # renders
    assert capsys.readouterr().out.splitlines()[2].startswith("1 regression(s): 1 newly failing")
    assert cli_main(["report", "--compare", str(a), str(b), "--format", "text",
                     "--fail-on-regression"]) == 1
    assert capsys.readouterr().out.splitlines()[2].startswith("1 regression(s): 1 newly failing")
    assert cli_main(["report", "--compare", str(a), str(a), "--format", "text",
                     "--fail-on-regression"]) == 0
