"""A death or late write after a case's last call (conformance/plugin/worker_deaths.py) reads in
the reports as what happened: its failure text has the header every failure report has, so the
one-line summary of the report and the compare (report.first_detail) names the death, not the
note under it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.corpus.corpus_subject import CASES_DIR
from conformance.plugin import worker_deaths
from conformance.reporting.report import first_detail


def _owner():
    case = SimpleNamespace(id="spec7-prefill-and-decodes", description="A prefill and two decodes.",
                           location="cases/offsets-planner/spec/section7-examples.json $.cases[2]",
                           path=CASES_DIR / "spec" / "section7-examples.json")
    return SimpleNamespace(case=case, planner="mypkg.late:launch", nodeid="n", location=("f", 0, "n"),
                           user_properties=[("planner", "mypkg.late:launch")])


@pytest.mark.parametrize("status, reason", [
    ("fail", "the planner wrote after the case's last call returned (a thread still running): "
             "out_write_offsets[0] (inside it): 0 -> 12345"),
    ("crash", "the worker exited with code 3 after the case's last call, with no call running"),
])
def test_the_summary_line_of_a_death_names_it(status, reason):
    data = worker_deaths.record({"owner": _owner(), "status": status, "reason": reason,
                                 "tail": ""})
    lines = data["text"].splitlines()
    assert lines[1] == "  A prefill and two decodes."
    assert first_detail(data["text"]).startswith(f"{status} (isolated): {reason}"), data["text"]


def test_a_run_without_a_linger_says_what_it_did_not_wait_for(tmp_path):
    """``--isolate-linger 0``: the summary says that a death or a write after each worker's last
    case was not waited for; the default linger prints no such line."""
    from tests.subproc import run_pytest

    args = ("--planner", "python", "--isolate", "--case", "spec7-no-prefix")
    proc, _ = run_pytest(tmp_path, *args, "--isolate-linger", "0")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "isolation: --isolate-linger 0: a death or a write after the last case of each " \
           "worker was not waited for" in " ".join(proc.stdout.split()), proc.stdout[-3000:]
    proc, _ = run_pytest(tmp_path, *args)
    assert proc.returncode == 0 and "--isolate-linger 0" not in proc.stdout, proc.stdout[-3000:]
