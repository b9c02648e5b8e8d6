"""A report says what the run's planners were judged on (spec section 8), as the terminal's
"conformance profile" section does: the profile a run recorded in its fingerprint
(conformance/plugin/results_writer.py), read by conformance/reporting/report.py ``run_profile_of``;
a name that is no profile reads as the default."""

from __future__ import annotations

import json

from conformance.cli import main as cli_main
from tests.report_runs import run

DEFAULT = ("built-in planners on contract+project+wrapper, external planners on contract "
           "(--profile contract)")


def _with_profile(tmp_path, profile):
    doc = json.loads(run("a").results.read_text())
    doc["fingerprint"]["profile"] = profile
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_run_records_its_profile_and_every_report_says_it(tmp_path, capsys):
    results = run("a").results
    assert json.loads(results.read_text())["fingerprint"]["profile"] == "contract"
    assert cli_main(["report", str(results), "--format", "text"]) in (0, 1)
    assert f"; judged: {DEFAULT}" in capsys.readouterr().out.splitlines()[0]
    page = tmp_path / "r.html"
    cli_main(["report", str(results), "--out", str(page)])
    assert f"<br>Judged: {DEFAULT}</p>" in page.read_text()


def test_another_profile_is_named(tmp_path, capsys):
    cli_main(["report", str(_with_profile(tmp_path, "all")), "--format", "markdown"])
    assert ("judged: built-in planners on contract+project+wrapper, external planners on "
            "contract+project+wrapper (--profile all)") in capsys.readouterr().out


def test_a_profile_that_is_none_reads_as_the_default(tmp_path, capsys):
    cli_main(["report", str(_with_profile(tmp_path, "<b>all</b>")), "--format", "text"])
    out = capsys.readouterr().out
    assert f"; judged: {DEFAULT}" in out and "<b>" not in out


def _html_page(tmp_path, doc: dict) -> str:
    """The HTML page ``report`` writes of the results document ``doc``."""
    path, page = tmp_path / "results.json", tmp_path / "r.html"
    path.write_text(json.dumps(doc))
    cli_main(["report", str(path), "--out", str(page)])
    return page.read_text()


def test_the_html_fingerprint_says_where_isolated_cases_ran_and_whether_the_judge_was_dumpable(
        tmp_path):
    """The sandbox and the judge's dumpability the run recorded (conformance/plugin/
    results_writer.py) are in the HTML page's fingerprint, as in the terminal summary's first
    line, escaped like every other value."""
    doc = json.loads(run("a").results.read_text())
    doc["fingerprint"].update(sandbox="user+pid namespace <i>x</i>", judge="non-dumpable")
    html = _html_page(tmp_path, doc)
    assert "<span>sandbox</span> <code>user+pid namespace &lt;i&gt;x&lt;/i&gt;</code>" in html
    assert "<span>judge</span> <code>non-dumpable</code>" in html


def test_a_run_with_no_isolated_case_says_so_in_the_html_fingerprint(tmp_path):
    """A run whose cases all ran in pytest's process (a built-in planner on no hazard case)
    records no sandbox (``None``); the page says why, not Python's ``None`` (and counts its one
    result in the singular)."""
    doc = json.loads(run("a").results.read_text())
    doc["fingerprint"].update(sandbox=None, judge="non-dumpable")
    doc["results"] = [r for r in doc["results"] if r["status"] == "pass"][:1]
    doc["collected"] = 1
    html = _html_page(tmp_path, doc)
    assert "<span>sandbox</span> <code>no case ran isolated</code>" in html
    assert "<code>None</code>" not in html
    assert "1 result of 1 collected" in html


BUILT_IN = "built-in planners on contract+project+wrapper"
EXTERNAL = "external planners on contract (--profile contract)"


def _with_planners(tmp_path, keep) -> str:
    """The results file of run ``a`` (``python`` and an external planner) with only the results
    whose planner ``keep`` accepts, as a run of those planners alone writes it."""
    doc = json.loads(run("a").results.read_text())
    doc["results"] = [r for r in doc["results"] if keep(r["planner"])]
    doc["collected"] = len(doc["results"])  # a whole run, not one stopped early
    assert doc["results"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _judged(capsys, results: str, tmp_path) -> tuple[str, str]:
    """What the text report's first line and the page say the run was judged on."""
    cli_main(["report", results, "--format", "text"])
    head = capsys.readouterr().out.splitlines()[0]
    page = tmp_path / "r.html"
    cli_main(["report", results, "--out", str(page)])
    html = page.read_text()
    return head.split("; judged: ", 1)[1], html.split("<br>Judged: ", 1)[1].split("</p>", 1)[0]


def test_a_run_of_built_in_planners_only_names_no_external_planner(tmp_path, capsys):
    results = _with_planners(tmp_path, lambda p: p in ("python", "validator"))
    assert _judged(capsys, results, tmp_path) == (BUILT_IN, BUILT_IN)


def test_a_run_of_an_external_planner_only_names_no_built_in_one(tmp_path, capsys):
    """As the terminal's "conformance profile" section names only the kinds that ran
    (conformance/plugin/profiles.py); the shared validator's rows are no planner's."""
    results = _with_planners(tmp_path, lambda p: p not in ("python",))
    assert _judged(capsys, results, tmp_path) == (EXTERNAL, EXTERNAL)


def test_a_run_of_both_names_both(tmp_path, capsys):
    assert _judged(capsys, str(run("a").results), tmp_path) == (DEFAULT, DEFAULT)
    assert DEFAULT == f"{BUILT_IN}, {EXTERNAL}"
