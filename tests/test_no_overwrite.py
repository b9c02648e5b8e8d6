"""No stale state, no overwrite (README, *Files the harness writes*): a report never writes over its
own input nor through a symlink, publishes world-readable files, refuses to compare two kinds of
file, and finds a planner's source file without running its package's ``__init__``."""

from __future__ import annotations

import json
import shutil
import stat
import sys

import pytest

from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.reporting.freshness import current_file
from tests.subproc import REPO, cli

RESULTS = REPO / "reports" / "upstream" / "0.5.23" / "results.json"
BENCH = REPO / "tests" / "data" / "bench-new.json"


@pytest.fixture
def results(tmp_path):
    path = tmp_path / "results.json"
    shutil.copyfile(RESULTS, path)
    return path


def test_report_refuses_to_write_over_its_own_input(results):
    before = results.read_bytes()
    proc = cli("report", str(results), "--out", str(results), "--format", "markdown")
    assert proc.returncode == 2
    assert "never writes over its own input" in proc.stderr
    assert results.read_bytes() == before


def test_publish_refuses_a_symlinked_index_and_writes_readable_files(tmp_path, results):
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere.html"
    site.mkdir()
    elsewhere.write_text("reviewed")
    (site / "index.html").symlink_to(elsewhere)
    proc = cli("report", str(results), "--publish", str(site))
    assert proc.returncode == 2 and "symlink" in proc.stderr
    assert elsewhere.read_text() == "reviewed"
    (site / "index.html").unlink()
    proc = cli("report", str(results), "--publish", str(site))
    assert proc.returncode == 0, proc.stderr
    for name in ("index.html", "results.json"):
        mode = stat.S_IMODE((site / name).stat().st_mode)
        assert mode & 0o044 == 0o044, oct(mode)  # group and others can read what is published
    assert json.loads((site / "results.json").read_text()) == json.loads(RESULTS.read_text())


def test_compare_of_a_results_file_and_a_benchmark_file_is_a_usage_error(results):
    proc = cli("report", "--compare", str(results), str(BENCH), "--format", "text")
    assert proc.returncode == 2
    assert "nothing of one kind on both sides" in proc.stderr


def test_the_source_file_is_found_without_running_the_package_init(tmp_path, monkeypatch):
    package = tmp_path / "trap"
    package.mkdir()
    (package / "__init__.py").write_text("raise SystemExit('the report ran planner code')\n")
    (package / "planner.py").write_text("def launch(**kwargs): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert current_file("trap.planner") == package / "planner.py"
    assert "trap" not in sys.modules


def test_a_symlinked_folder_in_the_cases_is_a_load_fault(tmp_path):
    from conformance.corpus.loader import load_corpus

    real, cases = tmp_path / "real", tmp_path / "cases"
    real.mkdir()
    cases.mkdir()
    shutil.copyfile(DEFAULT_CASES_DIR / "spec" / "section7-examples.json", real / "s7.json")
    (cases / "linked").symlink_to(real, target_is_directory=True)
    loaded, errors = load_corpus([cases])
    assert loaded == []
    assert [(e.path.name, e.json_path) for e in errors] == [("linked", "$")]
    assert "symlink to a folder: not followed" in str(errors[0])


@pytest.mark.parametrize("aborts", [["--planner", "no-such-planner"], ["--isolate-timeout", "0"],
                                    ["--sanitize", "memcheck"]])
def test_a_run_stopped_by_a_usage_error_leaves_no_stale_results(tmp_path, results, aborts):
    from tests.subproc import run_pytest

    if aborts[0] == "--sanitize":
        pytest.importorskip("torch")
        import torch

        if torch.cuda.is_available():
            pytest.skip("--sanitize memcheck runs on a machine with CUDA")
    proc, _ = run_pytest(tmp_path, *aborts)  # --results tmp_path/results.json: the copied file
    assert proc.returncode == 4, proc.stdout + proc.stderr
    report = cli("report", str(results), "--format", "text")
    assert report.returncode == 1
    assert "the run did not finish" in report.stdout
    assert "0 results" in report.stdout


@pytest.mark.parametrize("where", ["case-file", "inside-cases", "other-file"])
def test_results_never_replace_a_case_file_or_another_file(tmp_path, where):
    from tests.subproc import run_pytest

    cases = tmp_path / "cases"
    cases.mkdir()
    case_file = cases / "s7.json"
    shutil.copyfile(DEFAULT_CASES_DIR / "spec" / "section7-examples.json", case_file)
    target = {"case-file": case_file, "inside-cases": cases / "new.json",
              "other-file": tmp_path / "notes.txt"}[where]
    if where == "other-file":
        target.write_text("my notes")
    before = {p: p.read_bytes() for p in (case_file, target) if p.exists()}
    proc, _ = run_pytest(tmp_path, "--cases", str(cases), "--planner", "python",
                         "--results", str(target))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert f"--results {target}" in proc.stderr
    assert {p: p.read_bytes() for p in before} == before
    assert (where != "inside-cases") or not target.exists()
