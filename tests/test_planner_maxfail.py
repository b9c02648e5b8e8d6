"""``--planner-maxfail N`` (conformance/plugin/planner_maxfail.py): a planner's cases after its
Nth failure are skipped, not run, named in the results file and the summary; other planners run
every case; the option refuses a count below 1."""

from __future__ import annotations

import json

from tests.subproc import run_pytest

WRONG = "tests.planted.wrong_planners:off_by_one_scan"
CASES = ("bs-1", "bs-31", "bs-32")


def _run(tmp_path, limit: str):
    args = ["--planner", WRONG, "--planner", "python", "--planner-maxfail", limit]
    for case in CASES:
        args += ["--case", case]
    proc, items = run_pytest(tmp_path, *args)
    doc = json.loads((tmp_path / "results.json").read_text())
    return proc, items, {(r["case"], r["planner"]): r for r in doc["results"]}, doc


def test_a_planner_s_cases_after_its_first_failure_are_skipped(tmp_path):
    proc, items, results, doc = _run(tmp_path, "1")
    assert proc.returncode == 1, proc.stdout
    assert doc["complete"] is True
    assert [results[(c, WRONG)]["status"] for c in CASES] == ["fail", "skip", "skip"]
    assert [results[(c, "python")]["status"] for c in CASES] == ["pass", "pass", "pass"]
    assert results[("bs-31", WRONG)]["message"] == (
        f"Skipped: --planner-maxfail 1: {WRONG} failed 1 case(s) before this one, which did "
        "not run")
    assert items[f"bs-32[{WRONG}]"].properties.get("planner_maxfail") == "1"
    assert "planner_maxfail" not in items["bs-32[python]"].properties
    assert (f"--planner-maxfail 1: 2 case(s) of {WRONG} skipped after its failures "
            "(not judged)") in proc.stdout


def test_a_larger_count_runs_until_that_many_failed(tmp_path):
    proc, _, results, _ = _run(tmp_path, "2")
    assert proc.returncode == 1, proc.stdout
    assert [results[(c, WRONG)]["status"] for c in CASES] == ["fail", "fail", "skip"]
    assert "1 case(s) of " + WRONG in proc.stdout


def test_a_count_below_one_is_refused(tmp_path):
    proc, _ = run_pytest(tmp_path, "--planner", "python", "--planner-maxfail", "0")
    assert proc.returncode == 4
    assert "--planner-maxfail: must be at least 1, got 0" in proc.stderr


def _report(nodeid: str, when: str, outcome: str, planner: str):
    import pytest

    return pytest.TestReport(nodeid, ("conformance/test_corpus.py", 0, nodeid), {}, outcome,
                             None, when, user_properties=[("planner", planner)])


class _Item:
    """What ``pytest_runtest_setup`` reads of a corpus item: its planner, its case."""

    def __init__(self, planner: str) -> None:
        self.planner, self.case, self.user_properties = planner, object(), []


def _runs(counter, item) -> str:
    """``"runs"``, or the skip message ``--planner-maxfail`` gave ``item``."""
    import pytest

    try:
        counter.pytest_runtest_setup(item)
    except pytest.skip.Exception as skip:
        return str(skip.msg)
    return "runs"


def test_a_case_failing_in_its_call_and_its_teardown_counts_once():
    from conformance.plugin.planner_maxfail import PROPERTY, PlannerMaxfail

    counter = PlannerMaxfail(2)
    counter.pytest_runtest_logreport(_report("bs-1[p]", "call", "failed", "p"))
    counter.pytest_runtest_logreport(_report("bs-1[p]", "teardown", "failed", "p"))
    counter.pytest_runtest_logreport(_report("bs-1[q]", "call", "failed", "q"))
    counter.pytest_runtest_logreport(_report("bs-2[q]", "call", "failed", "q"))
    assert _runs(counter, _Item("p")) == "runs"  # one failed case of p
    skipped = _Item("q")
    assert _runs(counter, skipped) == (
        "--planner-maxfail 2: q failed 2 case(s) before this one, which did not run")
    assert skipped.user_properties == [(PROPERTY, 2)]
    counter.pytest_runtest_logreport(_report("bs-2[p]", "setup", "failed", "p"))
    assert _runs(counter, _Item("p")).startswith("--planner-maxfail 2: p failed 2 case(s)")
