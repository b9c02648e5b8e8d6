"""The cheap commands of README.md, cases/offsets-planner/README.md and reports/README.md, run as
written, print what those documents show: the planners, the case list, a recorded golden, a one-case run, a failure
with its rerun line, the summary table, and the report's first line for a run stopped by ``-x``.
(The README's summary table is checked against the printer in tests/test_readme.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from conformance.cli import main as cli_main
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.loader import load_corpus
from conformance.plugin.summary import HEADERS
from tests.subproc import cli

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text()
CASES_README = (REPO / "cases" / "offsets-planner" / "README.md").read_text()
REPORTS_README = (REPO / "reports" / "README.md").read_text()
WRONG = "tests.planted.wrong_planners:off_by_one_scan"


def _pytest(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "200"}
    for name in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "TRITON_INTERPRET",
                 "NUMBA_ENABLE_CUDASIM"):  # as in a user's shell (the rerun line names them)
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider",
                           *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def _blocks(text: str, lang: str = "") -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def _readme_planners() -> dict[str, set[str]]:
    """README's planner table: {planner: its modes}."""
    out = {}
    lines = README.splitlines()
    start = lines.index("| planner | modes | source |")
    for line in lines[start + 2:lines.index("", start)]:
        m = re.match(r"\| (`[^|]+) \| ([^|]+) \| ", line)
        if m:
            names = re.findall(r"`([^`]+)`", m.group(1))
            modes = set(re.findall(r"`([^`]+)`", m.group(2)))
            for name in names:
                out[name] = modes or out.get("triton", set()) | out.get("numba-cuda", set())
    return out


def test_list_planners_prints_the_readme_table(capsys):
    assert cli_main(["planners"]) == 0
    printed = [ln.split() for ln in capsys.readouterr().out.splitlines()[2:] if ln.strip()]
    documented = _readme_planners()
    assert sorted(documented) == sorted(row[0] for row in printed)
    for name, available, mode, *_ in printed:
        assert available == "yes" and mode in documented[name], (name, mode, documented[name])


def _within(example, actual) -> bool:
    """Whether every key of ``example`` (recursively, for objects) holds the same in ``actual``."""
    if isinstance(example, dict):
        return isinstance(actual, dict) and all(k in actual and _within(v, actual[k])
                                                for k, v in example.items())
    return example == actual


def test_list_cases_lists_every_case_and_the_documented_examples(capsys):
    assert "python -m conformance cases            # loads and lists every case" in CASES_README
    assert cli_main(["cases"]) == 0
    *table, count = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    cases, faults = load_corpus()
    assert faults == [] and [ln.split()[0] for ln in table[2:]] == [c.id for c in cases]
    assert count == f"{len(cases)} cases, 0 faulty file entries"
    by_id = {c.id: c for c in cases}
    examples = [json.loads(b) for b in _blocks(CASES_README, "json") if b.lstrip().startswith("{")]
    assert len(examples) >= 4
    for example in examples:  # each full example is the corpus's case (its file may say more)
        assert _within(example, by_id[example["id"]].raw), example["id"]


def test_record_without_write_prints_the_documented_golden(capsys):
    example = next(json.loads(b) for b in _blocks(CASES_README, "json")
                   if '"id": "spec7-padding-row-middle"' in b)
    assert cli_main(["record", "spec7-padding-row-middle"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {k: printed[k] for k in example["expect"]} == example["expect"]


@cache
def _failing_run() -> subprocess.CompletedProcess:
    return _pytest("--planner", WRONG, "--case", "spec7-prefill-and-decodes")


def test_the_readme_failure_sample_is_what_a_run_prints():
    sample = next(b for b in _blocks(README) if b.startswith(f"spec7-prefill-and-decodes[{WRONG}]"))
    # the run's poison seed starts every rerun line; README leaves it out (it says so)
    out = [re.sub(r"CONFORMANCE_POISON_SEED=\d+ ", "", line)
           for line in _failing_run().stdout.splitlines()]
    start = out.index(sample.splitlines()[0])
    assert out[start:start + len(sample.splitlines())] == sample.splitlines()
    assert sample.splitlines()[-1].endswith(
        "--results reports/out/rerun-spec7-prefill-and-decodes.json")


def test_one_case_on_python_ends_with_the_summary(tmp_path):
    assert "`pytest conformance/ --case spec7-padding-row-middle`" in README
    results = tmp_path / "one.json"
    proc = _pytest("--case", "spec7-padding-row-middle", "--planner", "python",
                   "--results", str(results))
    assert proc.returncode == 0, proc.stdout[-2000:]
    lines = proc.stdout.splitlines()
    head = lines.index(next(ln for ln in lines if "conformance summary" in ln))
    assert lines[head + 1] == f"subject {CORPUS_NAME}:"  # each subject's table under its name
    assert lines[head + 2].split() == list(HEADERS)
    assert lines[head + 4].split()[:4] == ["python", "cpu", "1", "0"]
    # one subject: the legend of its columns under its table, once
    assert lines[head + 5].startswith("pass..error: pytest's outcomes; judged: oob, ")
    assert sum(line.startswith("pass..error: ") for line in lines) == 1
    assert re.search(r"\b1 passed\b", lines[-1])
    # report --format text on this one-result file
    proc = cli("report", str(results), "--format", "text")  # in this process: no planner
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("1 result, 0 not passing; run complete")


def test_a_run_stopped_by_x_reads_as_reports_readme_says(tmp_path):
    documented = re.search(r"\| `INCOMPLETE RUN: ([^`]*?) \.\.\.` \| the run was stopped before its "
                           r"last item \(`-x`", REPORTS_README)
    assert documented, "reports/README.md: the -x row"
    results = tmp_path / "x.json"
    proc = _pytest("--planner", WRONG, "--case", "spec7-prefill-and-decodes", "--case",
                   "spec7-decode-seed", "-x", "--results", str(results))
    assert proc.returncode == 1 and "stopping after 1 failures" in proc.stdout
    report = cli("report", str(results), "--format", "text")
    assert report.returncode == 1
    assert report.stdout.splitlines()[0].startswith(f"INCOMPLETE RUN: {documented.group(1)}")


@pytest.mark.parametrize("doc, command", [
    (README, "python -m conformance record CASE_ID [--write]"),
    (CASES_README, "python -m conformance record ID [--write]"),
])
def test_the_record_command_the_docs_name_exists(doc, command, capsys):
    assert command in doc
    with pytest.raises(SystemExit) as stop:
        cli_main(["record", "--help"])
    assert stop.value.code == 0 and "--write" in capsys.readouterr().out


def test_a_one_call_subject_lists_its_own_planners_and_cases(capsys):
    from impls.canary_plan import subject as canary
    from conformance.paths import CASES_ROOT

    assert cli_main(["planners", "--subject", "canary-plan"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()[2:] if ln.strip()]
    assert [r[0] for r in rows] == list(canary.PLANNERS) and {r[1] for r in rows} == {"yes"}
    assert cli_main(["cases", "--subject", "canary-plan"]) == 0
    *table, count = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    cases = canary.load_cases(CASES_ROOT / canary.NAME)
    assert [ln.split()[0] for ln in table[2:]] == [c["id"] for c in cases]
    assert count == f"{len(cases)} cases, 0 faulty file entries"
    assert table[2].endswith(f"cases/canary-plan/{Path(cases[0]['_file']).name}:{cases[0]['_line']}")
    with pytest.raises(SystemExit) as exit_:
        cli_main(["cases", "--subject", "nope"])
    assert exit_.value.code == 2 and "--subject nope: not one of" in capsys.readouterr().err


def test_a_listing_piped_into_head_ends_quietly():
    """``python -m conformance cases | head -1``: the reader stops early; no traceback."""
    done = subprocess.run(f"{sys.executable} -m conformance cases | head -1", shell=True,
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.stdout.split()[0] == "id"
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
