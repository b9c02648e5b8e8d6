"""``python -m conformance report`` never presents an incomplete, stale or hostile run as a clean
one: an incomplete run (killed, aborted at collection, stopped by ``-x``) is named in the first
line of every format and exits 1; a stale one (another commit, a planner's source changed) is named,
and ``--strict`` exits 1; ``--compare`` counts disappeared items and an incomplete side as
regressions; failure text never renders as Markdown of its own; unusable inputs and outputs get a
one-line error and exit 2. Real runs come from ``tests/report_runs.py``."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from conformance.cli import main as cli_main
from conformance.paths import RESULTS_SCHEMA_PATH
from conformance.reporting.results_format import STATUSES, load_results
from tests.report_runs import CASES, PLANNER, ROOT, run

DATA = ROOT / "tests" / "data"
HOSTILE = ("out_write_offsets differ\n```\n\n![tracker](http://evil.example/x.png)\n\n"
           "# All 191 cases pass\n<img src=http://evil.example/y.png>\n````\nend")


def _write(tmp_path: Path, name: str, doc: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _report(capsys, *args: str) -> tuple[int, str, str]:
    code = cli_main(["report", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_schema_statuses_are_the_one_list():
    schema = json.loads(RESULTS_SCHEMA_PATH.read_text())
    assert sorted(schema["$defs"]["status"]["enum"]) == sorted(STATUSES)


def test_the_causes_after_a_last_call_are_the_one_list():
    """conformance/robustness/after_last_call.py CAUSES: the schema's ``after_last_call`` and the
    failure groups' words name the same causes."""
    from conformance.reporting.failure_groups import _AFTER
    from conformance.robustness.after_last_call import CAUSES

    schema = json.loads(RESULTS_SCHEMA_PATH.read_text())
    assert schema["$defs"]["result"]["properties"]["after_last_call"]["enum"] == [None, *CAUSES]
    assert sorted(_AFTER) == sorted(CAUSES)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_killed_run_says_incomplete_in_its_first_line_and_exits_1(capsys, tmp_path, fmt):
    out = tmp_path / "report.out"
    code, _, err = _report(capsys, str(run("c").results), "--format", fmt, "--out", str(out))
    assert code == 1
    first = out.read_text().splitlines()[0]
    if fmt == "html":  # the page's first visible line is the banner, its title says it too
        page = out.read_text()
        assert "<title>INCOMPLETE RUN: the run did not finish" in page
        body = page[page.index("<body>"):]
        assert body.splitlines()[1].startswith('<p id="warning" class="banner">INCOMPLETE RUN:')
    else:
        assert first.lstrip("# ").removeprefix("Conformance: ").startswith(
            "INCOMPLETE RUN: the run did not finish (interrupted, killed, still running, or stopped by a usage error: pytest said which): "
            "5 of 15 collected items have a result"), first
    assert err.startswith("warning: INCOMPLETE RUN:")


def _pytest(*args: str, bug: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "REPORT_TEST_BUG": bug}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_aborted_run_replaces_the_previous_file(tmp_path, capsys):
    """A run that stops before collecting anything (here pytest's usage error for a missing path)
    leaves an incomplete file, never the previous complete run's."""
    results = tmp_path / "results.json"
    results.write_text(run("a").results.read_text())
    proc = _pytest("conformance/", "conformance/no_such_file.py", "--planner", "python",
                   "--results", str(results), "--cases", str(CASES.relative_to(ROOT) / "common"))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    doc = load_results(results)
    assert (doc["complete"], doc["results"], doc["exitstatus"]) == (False, [], 4)
    code, text, _ = _report(capsys, str(results), "--format", "text")
    assert code == 1 and text.startswith("INCOMPLETE RUN: the run did not finish")


def test_exitfirst_run_is_incomplete(tmp_path, capsys):
    results = tmp_path / "results.json"
    proc = _pytest("conformance/", "-x", "--planner", "python", "--planner", PLANNER,
                   "--results", str(results), "--cases", str(CASES.relative_to(ROOT) / "common"),
                   bug="scan")  # the first failure is the planted planner's second item
    assert proc.returncode == 1, proc.stdout[-2000:]
    doc = load_results(results)
    assert doc["complete"] is False and doc["collected"] == 15 and len(doc["results"]) < 15
    code, text, _ = _report(capsys, str(results), "--format", "text")
    assert code == 1 and text.startswith("INCOMPLETE RUN:")


def test_a_whole_run_of_this_checkout_has_no_warning(capsys):
    code, text, err = _report(capsys, str(run("a").results), "--format", "text")
    assert code == 0 and text.startswith("17 results, 6 not passing; run complete") and err == ""


def test_stale_results_are_named_and_strict_exits_1(tmp_path, capsys):
    doc = load_results(run("a").results)
    doc["fingerprint"]["commit"] = "0123456789ab" + "0" * 28
    doc["fingerprint"]["planners"]["python"]["source"]["sha256"] = "f" * 64
    path = _write(tmp_path, "old.json", doc)
    code, text, _ = _report(capsys, path, "--format", "text")
    first = text.splitlines()[0]
    assert code == 0 and first.startswith("STALE RESULTS: run at commit 0123456789ab, checkout at ")
    assert first.endswith("; source changed since the run: python")
    assert _report(capsys, path, "--format", "text", "--strict")[0] == 1


def test_an_external_planner_without_a_source_digest_is_named_and_strict_exits_1(tmp_path,
                                                                              capsys):
    """A run that recorded no digest of an external planner (impls/source_file.py refused) cannot
    show a change to its code: the report says so instead of staying silent."""
    doc = load_results(run("a").results)
    assert doc["fingerprint"]["planners"][PLANNER]["source"]["sha256"]  # a normal run has one
    doc["fingerprint"]["planners"][PLANNER]["source"] = None
    path = _write(tmp_path, "undigested.json", doc)
    code, text, _ = _report(capsys, path, "--format", "text")
    assert code == 0 and text.splitlines()[0] == (
        f"NO SOURCE DIGEST of {PLANNER}: a change to its code since the run cannot be seen")
    assert _report(capsys, path, "--format", "text", "--strict")[0] == 1


def test_compare_counts_disappeared_items_as_regressions(tmp_path, capsys):
    old = load_results(run("a").results)
    new = copy.deepcopy(old)
    new["results"] = [r for r in new["results"] if r["case"] != "spec7-lut-shift"]
    new["collected"] = len(new["results"])  # as when the case's file became unloadable
    a, b = _write(tmp_path, "a.json", old), _write(tmp_path, "b.json", new)
    code, md, _ = _report(capsys, "--compare", a, b, "--format", "markdown")
    assert code == 0
    assert md.splitlines()[2] == ("2 regression(s): 0 newly failing, 2 disappeared; 0 newly "
                                  "passing, 0 other status changes, 0 appeared, 15 unchanged")
    code, md, _ = _report(capsys, "--compare", a, a, "--format", "markdown")
    assert md.splitlines()[2].startswith("no regressions (0 newly failing, 0 disappeared); ")


def test_compare_with_an_incomplete_side(capsys):
    code, text, _ = _report(capsys, "--compare", str(run("a").results), str(run("c").results),
                            "--format", "text")
    lines = text.splitlines()
    assert code == 1
    assert lines[0].endswith(" (NEW INCOMPLETE)")
    assert lines[2].startswith("13 regression(s): NEW run INCOMPLETE (the run did not finish "
                               "(interrupted, killed, still running, or stopped by a usage error: pytest said which): 5 of 15 collected items "
                               "have a result), 0 newly failing, 12 disappeared; ")


def _html_of_markdown(md: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(md)


def test_markdown_failure_text_stays_text(tmp_path, capsys):
    doc = load_results(run("a").results)
    failing = next(r for r in doc["results"] if r["status"] == "fail")
    failing["message"] = f"{failing['id']}  (somewhere)\n  description\n  {HOSTILE}"
    passing = next(r for r in doc["results"] if r["status"] == "pass")
    new = copy.deepcopy(doc)
    target = next(r for r in new["results"] if r["id"] == passing["id"])
    target.update(status="fail", message=f"{passing['id']}  (x)\n  y\n  {HOSTILE}")
    a, b = _write(tmp_path, "a.json", doc), _write(tmp_path, "b.json", new)
    for args in ([a, "--format", "markdown", "--max-failures-per-group", "0"],  # every report
                 ["--compare", a, b, "--format", "markdown"]):
        code, md, _ = _report(capsys, *args)
        html = _html_of_markdown(md)
        assert "<img" not in html and "<h1>" not in html, html
        assert html.count("All 191 cases pass") == md.count("All 191 cases pass") > 0
        for block in html.split("<code")[1:]:  # every copy of the text is inside code
            assert "All 191 cases pass" not in block.split("</code>", 1)[1].split("<code")[0]


def test_non_utf8_results_file_is_one_line_error(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_bytes(b'{"format": "\xff\xfe"}')
    code, out, err = _report(capsys, str(path), "--format", "text")
    assert (code, out) == (2, "")
    assert err == f"error: {path}: byte 12: not UTF-8 (invalid start byte): not a results file\n"
    code, _, err = _report(capsys, "--compare", str(path), str(run("a").results))
    assert code == 2 and err.count("\n") == 1 and "not UTF-8" in err


def test_out_naming_a_folder_is_one_line_error(tmp_path, capsys):
    code, out, err = _report(capsys, str(run("a").results), "--out", str(tmp_path))
    assert (code, out) == (2, "")
    assert err == f"error: --out {tmp_path}: is a folder; name a file (or use --publish DIR)\n"
    code, _, err = _report(capsys, "--compare", str(run("a").results), str(run("a").results),
                           "--out", str(tmp_path))
    assert code == 2 and err.startswith(f"error: --out {tmp_path}: is a folder")
    taken = tmp_path / "site"
    taken.write_text("not a folder")
    code, _, err = _report(capsys, str(run("a").results), "--publish", str(taken))
    assert (code, err) == (2, f"error: --publish {taken}: is a file; name a folder\n")


@pytest.mark.parametrize("median", [0.0, float("nan")])
def test_bench_file_without_usable_medians_is_one_line_error(tmp_path, capsys, median):
    doc = json.loads((DATA / "bench-old.json").read_text())
    for bench in doc["benchmarks"]:
        bench["stats"]["median"] = median
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(doc))
    n = len(doc["benchmarks"])
    for args in ([str(run("a").results), "--bench", str(bench), "--out", str(tmp_path / "r.html")],
                 ["--compare", str(bench), str(DATA / "bench-new.json")]):
        code, _, err = _report(capsys, *args)
        assert code == 2 and err.count("\n") == 1, err
        assert err.startswith(f"error: {bench}: {n} of {n} medians are zero, negative or NaN")
