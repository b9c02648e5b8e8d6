"""The terminal summary's tally (conformance/plugin/tally.py) counts each item once: a teardown
error after a passed call (a worker's death or a late write after the case's last call,
conformance/plugin/worker_deaths.py) is that item's error, not a pass and an error."""

from __future__ import annotations

import pytest

from conformance.plugin.tally import Summary

PROPS = [("planner", "mypkg.late:launch"), ("case", "spec7-prefill-and-decodes")]


def _report(when: str, outcome: str, nodeid: str = "conformance/test_corpus.py::c[p]"):
    return pytest.TestReport(nodeid, ("f", 0, "c[p]"), {}, outcome, None, when,
                             user_properties=PROPS)


def test_a_teardown_error_after_a_passed_call_counts_the_item_once_as_an_error():
    summary = Summary()
    for when, outcome in (("setup", "passed"), ("call", "passed"), ("teardown", "failed")):
        summary.pytest_runtest_logreport(_report(when, outcome))
    counts = summary.tally[("", "mypkg.late:launch")]
    assert (counts["passed"], counts["error"]) == (0, 1), counts


def test_a_passed_item_and_another_items_teardown_error_count_apart():
    summary = Summary()
    summary.pytest_runtest_logreport(_report("call", "passed", "a"))
    summary.pytest_runtest_logreport(_report("call", "passed", "b"))
    summary.pytest_runtest_logreport(_report("teardown", "failed", "b"))
    counts = summary.tally[("", "mypkg.late:launch")]
    assert (counts["passed"], counts["error"]) == (1, 1), counts
