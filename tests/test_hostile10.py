"""Tenth hostile review, kept as tests: an entrant's text in every sink, the rerun line of a hostile
case folder, the report's "Judged:" line and ``--compare`` across profiles, and a planner that
tells the plain run from the poisoned ones. Planted: tests/planted/hostile10_*.py. Each test
asserts what the harness must do; an attack that still works is a strict xfail whose reason names
the hole and the fix.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.planner_folder_runs import ROOT, conformance_command, corpus_run, results_of

pytestmark = pytest.mark.slow  # three corpus runs of a few planners each: about 25 s on 2 cores

TEXT = "tests.planted.hostile10_text"
POISON = "tests.planted.hostile10_poison"
CASE, ERROR_CASE = "spec7-prefill-and-decodes", "err-dtype-prefix-lens"
TEXT_PLANNERS = [f"{TEXT}:{p}" for p in ("raises_payload", "wrong_class_on_errors",
                                         "returns_payload", "prints_payload", "forges_lines")] + \
    ["tests.planted.hostile10_traceback:launch"]
POISON_PLANNERS = [f"{POISON}:{p}" for p in ("oob_only_on_plain", "oob_everywhere",
                                             "wrong_only_on_plain")]
RAW = "\x1b\r\x00\x0b\x0c\x7f\x85\x9b\u202e\u2066\u2028\ufffe"
"""Characters of the payload that must never reach a terminal or a file raw."""


def _raw_in(text: str, chars: str = RAW) -> list[str]:
    return sorted({repr(c) for c in chars if c in text})


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """One corpus run of every planted planner of this review on a valid and an error case, with
    pytest's JUnit XML; then the report in text, Markdown (to stdout and to a file) and HTML.
    Output read as bytes (``newline=''``: a raw ``\\r`` stays one)."""
    tmp = tmp_path_factory.mktemp("hostile10")
    results, junit = tmp / "results.json", tmp / "junit.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
         "-p", "no:hypothesispytest", "--results", str(results), f"--junitxml={junit}",
         *(a for p in TEXT_PLANNERS + POISON_PLANNERS for a in ("--planner", p)),
         "--case", CASE, "--case", ERROR_CASE],
        cwd=ROOT, env={k: v for k, v in os.environ.items()
                       if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONPATH",
                                    "CONFORMANCE_PLANNER_PATH")},
        capture_output=True, timeout=300)
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert results.exists(), out[-3000:]
    reports = {}
    for fmt in ("text", "markdown", "html"):
        page = tmp / f"report.{fmt}"
        rep = conformance_command(None, "report", str(results), "--format", fmt, "--out", str(page))
        assert rep.returncode == 0, rep.stdout + rep.stderr
        reports[fmt] = page.read_bytes().decode("utf-8")
    md = subprocess.run([sys.executable, "-m", "conformance", "report", str(results), "--format",
                         "markdown"], cwd=ROOT, capture_output=True, timeout=120)
    reports["markdown-stdout"] = md.stdout.decode("utf-8", "replace")
    statuses = {r["id"]: r["status"] for r in results_of(results)}
    return proc.returncode, out, statuses, junit, reports


def _item(case: str, planner: str) -> str:
    return f"{case}[{planner}]"


# === 1. untrusted text into every sink ========================================================


def test_every_text_planner_fails_its_valid_case(hostile_run):
    code, out, statuses, _, _ = hostile_run
    for planner in TEXT_PLANNERS:
        case = ERROR_CASE if planner.endswith("wrong_class_on_errors") else CASE
        assert statuses[_item(case, planner)] == "fail", (planner, out[-3000:])
    assert code == 1


def test_the_terminal_gets_no_raw_control_character(hostile_run):
    """Caught: class name, message, error_id, repr, printed output and the quoted source line
    all reach the terminal escaped (conformance/corpus/text.py terminal_text)."""
    _, out, _, _, _ = hostile_run
    assert _raw_in(out) == [], out[-3000:]
    assert "\\x1b[32mPASSED" in out  # still shown, escaped
    assert "\\u202eDELIAF" in out


def test_junit_xml_parses_and_holds_no_raw_control_or_tag(hostile_run):
    """Caught: pytest's own XML escaping (bin_xml_escape) of the failure text; the properties are
    the harness's own text."""
    _, _, _, junit, _ = hostile_run
    text = junit.read_bytes().decode("utf-8")
    ET.fromstring(text)  # well-formed despite NUL, VT, U+FFFE in the planner's text
    assert _raw_in(text) == []
    assert "<script>" not in text and "<img" not in text


def test_the_text_report_holds_no_raw_control_character(hostile_run):
    *_, reports = hostile_run
    assert _raw_in(reports["text"]) == []


def test_the_html_report_holds_no_tag_or_attribute_of_the_planner(hostile_run):
    """Caught: Jinja2's autoescape (a title="..." attribute included)."""
    *_, reports = hostile_run
    page = reports["html"]
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "onerror=alert(2)>" not in page.replace("&gt;", "")  # every > of it escaped


def test_the_markdown_report_holds_no_raw_control_character(hostile_run):
    *_, reports = hostile_run
    assert _raw_in(reports["markdown-stdout"]) == []
    assert _raw_in(reports["markdown"]) == []


def test_a_blank_line_in_a_planner_message_renders_no_markdown_of_its_own(hostile_run):
    from markdown_it import MarkdownIt

    *_, reports = hostile_run
    rendered = MarkdownIt().enable("table").render(reports["markdown"])
    assert "<h1>ALL 191 CASES PASSED" not in rendered
    assert '<img src="http://evil.example' not in rendered


def test_a_planner_message_cannot_forge_a_rerun_line(hostile_run):
    _, out, _, _, _ = hostile_run
    block = out[out.index(f"_ {_item(CASE, f'{TEXT}:forges_lines')} _"):]
    block = block[:block.index("\n_", 1)] if "\n_" in block[1:] else block
    reruns = [line for line in block.splitlines() if line.startswith("  rerun: ")]
    assert len(reruns) == 1 and "evil.example" not in reruns[0], reruns


def test_the_html_report_keeps_no_raw_bidi_override(hostile_run):
    *_, reports = hostile_run
    assert _raw_in(reports["html"], "\u202e\u2066\u202d\u2067") == []


# === 2. rerun lines of a hostile case folder ==================================================


def _case_folder(base: Path, name: str) -> Path:
    from conformance.corpus.loader import load_corpus

    case = next(c for c in load_corpus()[0] if c.id == CASE)
    folder = base / name / "cases"
    folder.mkdir(parents=True)
    (folder / "c.json").write_text(json.dumps(case.raw))
    return folder


def _rerun_line(out: str) -> str:
    """The one rerun line of the failure report. pytest's short summary repeats the whole message
    (and so the line) where it sees a CI machine (the CI or BUILD_NUMBER variable), so only the
    report above that summary is read."""
    report = out.split(" short test summary info ", 1)[0]
    lines = [m[1] for m in re.finditer(r"^  rerun: (.+)$", report, re.M)]
    assert len(lines) == 1, out[-3000:]
    return lines[0]


def test_a_rerun_line_of_a_case_folder_named_like_shell_code_runs_that_case(tmp_path):
    """Caught: the folder's name is one quoted word (shlex.join); pasted, the line reruns the
    case and runs nothing of the name."""
    folder = _case_folder(tmp_path, "a b;$(touch PWNED)'x\"`touch PWNED2`")
    proc = corpus_run(None, tmp_path / "r.json", "--cases", str(folder), "--planner",
                      "tests.planted.wrong_planners:off_by_one_scan")
    assert proc.returncode == 1, proc.stdout[-3000:]
    rerun = _rerun_line(proc.stdout)
    words = shlex.split(rerun)
    assert words[words.index("--cases") + 1] == str(folder)
    again = subprocess.run(["bash", "-c", rerun.replace("pytest conformance/",
                                                        f"{sys.executable} -m pytest conformance/ "
                                                        "-p no:cacheprovider -p "
                                                        "no:hypothesispytest", 1)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300,
                           env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"})
    assert "1 failed" in again.stdout, again.stdout[-2000:] + again.stderr[-1000:]
    assert not any(p.name.startswith("PWNED") for d in (ROOT, tmp_path) for p in d.iterdir())


def test_a_rerun_line_of_a_case_folder_with_a_control_character_names_that_folder(tmp_path):
    folder = _case_folder(tmp_path, "x\x1b[2Jy")
    proc = corpus_run(None, tmp_path / "r.json", "--cases", str(folder), "--planner",
                      "tests.planted.wrong_planners:off_by_one_scan")
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "\x1b" not in proc.stdout  # the terminal escaping itself holds
    rerun = _rerun_line(proc.stdout)
    assert "$'" in rerun  # the word in bash's ANSI-C quotes (rerun.shell_word)
    words = subprocess.run(["bash", "-c", rerun.replace("pytest conformance/",
                                                        "printf '%s\\0'", 1)],
                           capture_output=True, timeout=60).stdout.split(b"\0")
    assert words[words.index(b"--cases") + 1] == str(folder).encode()


# === 3. what a report says the run was judged on ==============================================

PAST_ROW = "tests.planted.divergent_planners:reads_past_row"  # differs on project rule past-row


@pytest.fixture(scope="module")
def profile_runs(tmp_path_factory):
    """{profile: results file} of one planner on hazard-prefix-past-row, judged on ``all`` (it
    fails) and on ``contract`` (it differs)."""
    tmp = tmp_path_factory.mktemp("hostile10-profiles")
    runs = {}
    for profile in ("all", "contract"):
        runs[profile] = tmp / f"{profile}.json"
        proc = corpus_run(None, runs[profile], "--planner", PAST_ROW, "--case",
                          "hazard-prefix-past-row", "--profile", profile)
        assert runs[profile].exists(), proc.stdout[-3000:]
    statuses = {p: [r["status"] for r in results_of(f)] for p, f in runs.items()}
    assert statuses == {"all": ["fail"], "contract": ["differs"]}, statuses
    return runs


def test_compare_across_profiles_is_no_clean_gate(profile_runs, tmp_path):
    proc = conformance_command(None, "report", "--compare", str(profile_runs["all"]),
                               str(profile_runs["contract"]), "--format", "markdown",
                               "--fail-on-regression")
    head = proc.stdout.splitlines()[2] if len(proc.stdout.splitlines()) > 2 else proc.stdout
    assert proc.returncode == 1 or "profile" in head, proc.stdout[:1500]


def test_a_profile_edited_to_a_stricter_one_is_named(profile_runs, tmp_path):
    doc = json.loads(profile_runs["contract"].read_text())
    assert doc["fingerprint"]["profile"] == "contract" and "--profile" in doc["args"]
    doc["fingerprint"]["profile"] = "all"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    proc = conformance_command(None, "report", str(edited), "--format", "text", "--strict")
    first = proc.stdout.splitlines()[0]
    assert proc.returncode == 1 and "(--profile all)" not in first, proc.stdout[:1500]


# === 4. telling the plain run from the poisoned ones ==========================================


def test_a_plan_wrong_only_on_plain_buffers_fails(hostile_run):
    """Caught: the plain run is judged element by element."""
    _, out, statuses, _, _ = hostile_run
    assert statuses[_item(CASE, f"{POISON}:wrong_only_on_plain")] == "fail", out[-3000:]


def test_a_write_past_the_end_on_every_run_is_oob(hostile_run):
    """The control of the next attack: in runs a and b the write lands in the guard zone."""
    _, out, statuses, _, _ = hostile_run
    assert statuses[_item(CASE, f"{POISON}:oob_everywhere")] == "oob", out[-3000:]


def test_a_write_past_the_end_only_on_plain_buffers_is_seen(hostile_run):
    """Caught: every shared CPU storage has a hidden guard after it (guard_pages.slack_bytes),
    the plain run's exact-size ones too; the planner still sees a storage of exactly its size."""
    _, out, statuses, _, _ = hostile_run
    assert statuses[_item(CASE, f"{POISON}:oob_only_on_plain")] == "oob", out[-3000:]
    report = out[out.index(f"{CASE}[{POISON}:oob_only_on_plain]"):]
    assert ("out_write_offsets: wrote 2 element(s) past the end of its allocation, the first 1 "
            "past its end (got 4702111234474983745 where the hidden guard held") in report, \
        report[:3000]
