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


def _snapshot(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_upstream_refuses_to_write_over_the_committed_evidence(tmp_path):
    """``upstream 0.5.23 --out reports/upstream`` would replace the reviewed results, summary, page
    and run log of 0.5.23: refused (exit 2) before any fetch, every file unchanged, each named."""
    evidence = REPO / "reports" / "upstream"
    before = _snapshot(evidence / "0.5.23")
    proc = cli("upstream", "0.5.23", "--out", str(evidence), "--cache", str(tmp_path / "cache"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for name in ("results.json", "summary.md", "report.html", "run.txt"):
        assert str(evidence / "0.5.23" / name) in proc.stdout
    assert "never replaced" in proc.stdout
    assert _snapshot(evidence / "0.5.23") == before
    assert not (tmp_path / "cache").exists()  # nothing fetched


def test_upstream_refuses_an_existing_matrix_but_not_generated_output(tmp_path):
    """A folder outside reports/out/ that holds a matrix.md someone reviewed: refused for a
    several-release run; the default folder (reports/out/upstream, generated) is not, and the
    run goes on to judge (here: a --wheel that does not exist is the release's problem, exit 1)."""
    from conformance.paths import GENERATED_ROOT
    from conformance.upstream.command import DEFAULT_OUT

    (tmp_path / "matrix.md").write_text("reviewed")
    proc = cli("upstream", "0.5.20", "0.5.23", "--out", str(tmp_path))
    assert proc.returncode == 2 and str(tmp_path / "matrix.md") in proc.stdout
    assert (tmp_path / "matrix.md").read_text() == "reviewed"
    assert DEFAULT_OUT == GENERATED_ROOT / "upstream"
    missing = tmp_path / "sglang-0.5.23-py3-none-any.whl"
    proc = cli("upstream", "0.5.23", "--wheel", str(missing), "--cache", str(tmp_path / "c"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "sglang 0.5.23: not judged:" in proc.stdout


@pytest.mark.parametrize("command", ["upstream-entries", "upstream-launchers"])
def test_upstream_entries_and_launchers_refuse_reviewed_files(tmp_path, command):
    """Their --out holding a report of theirs outside reports/out/: refused, the file unchanged."""
    from conformance.corpus.subjects import discover
    from conformance.upstream.launchers_command import file_names

    args = [command, "0.5.23", "--out", str(tmp_path), "--wheel", str(tmp_path / "none.whl")]
    if command == "upstream-entries":
        name = "entries-build.md"
    else:
        subject = next(s for s in discover().values() if getattr(s, "UPSTREAM_LAUNCHERS", ()))
        launcher = subject.UPSTREAM_LAUNCHERS[0]
        name = file_names(launcher, "cpu")[0]
        assert name == f"launchers-{launcher}.json"
        args += ["--subject", subject.NAME, "--launcher", launcher, "--device", "cpu"]
    (tmp_path / name).write_text("reviewed")
    proc = cli(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "never replaced" in proc.stderr and str(tmp_path / name) in proc.stderr
    assert (tmp_path / name).read_text() == "reviewed"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # nothing else written


def test_an_untracked_case_file_makes_the_run_dirty(tmp_path, monkeypatch):
    """A results file's ``dirty`` is true when the checkout holds a file git neither tracks nor
    ignores (a new case file changes the corpus the commit names), false for a clean clone, and
    an ignored file (``reports/out/``) does not count. A clone in ``tmp_path`` stands in for the
    checkout."""
    import subprocess

    from conformance import fingerprint

    repo = tmp_path / "clone"
    for args in (["init", "-q", str(repo)], ["-C", str(repo), "config", "user.email", "a@b"],
                 ["-C", str(repo), "config", "user.name", "a"]):
        subprocess.run(["git", *args], check=True)
    (repo / ".gitignore").write_text("/out/\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "x"], check=True)
    monkeypatch.setattr(fingerprint, "REPO_ROOT", repo)
    monkeypatch.setattr(fingerprint, "fingerprint", lambda: {})

    def dirty():
        return fingerprint.run_fingerprint([], None, None)["dirty"]

    assert dirty() is False
    (repo / "out").mkdir()
    (repo / "out" / "results.json").write_text("{}")
    assert dirty() is False
    (repo / "my-first-case.json").write_text("{}")
    assert dirty() is True


# --- a report replaces only a report it wrote; committed evidence is written by no command -------


EVIDENCE = REPO / "reports" / "upstream" / "0.5.23"


def _evidence_snapshot():
    return {p: p.read_bytes() for p in sorted(EVIDENCE.iterdir()) if p.is_file()}


@pytest.mark.parametrize("fmt", ["html", "markdown", "text"])
def test_report_out_replaces_only_a_report_it_wrote(tmp_path, results, fmt):
    """A user's file (a README, a source file) is never replaced by ``--out``; a report written
    before (it carries the generator line) is."""
    mine = tmp_path / "README.md"
    mine.write_text("# my notes\n")
    proc = cli("report", str(results), "--format", fmt, "--out", str(mine))
    assert proc.returncode == 2
    assert f"--out {mine}: exists and is not a report this command wrote" in proc.stderr
    assert mine.read_text() == "# my notes\n"
    page = tmp_path / f"page.{fmt}"
    assert cli("report", str(results), "--format", fmt, "--out", str(page)).returncode == 0
    assert "generated by python -m conformance report" in page.read_text()
    again = cli("report", str(results), "--format", fmt, "--out", str(page))
    assert again.returncode == 0, again.stderr


def test_an_html_report_of_an_earlier_version_is_still_replaced(tmp_path, results):
    page = tmp_path / "report.html"
    page.write_text("<!DOCTYPE html>\n<html><head><title>Conformance report: 3 results, 0 not "
                    "passing</title></head></html>\n")
    assert cli("report", str(results), "--out", str(page)).returncode == 0
    assert "generated by python -m conformance report" in page.read_text()


def test_no_command_writes_into_committed_evidence(tmp_path, results):
    """``report --out``, ``report --publish``, ``pytest --results``, ``bench --json`` and
    ``mutants --json`` into ``reports/upstream/`` (or ``reports/gpu/``) are refused, every file
    there unchanged."""
    from tests.subproc import run_pytest

    before = _evidence_snapshot()
    for args in (("report", str(results), "--out", str(EVIDENCE / "summary.md"),
                  "--format", "markdown"),
                 ("report", str(results), "--out", str(EVIDENCE / "report.html")),
                 ("report", str(results), "--publish", str(EVIDENCE)),
                 ("bench", "--json", str(REPO / "reports" / "gpu" / "bench.json")),
                 ("mutants", "--json", str(EVIDENCE / "mutants.json"))):
        proc = cli(*args)
        assert proc.returncode == 2, (args, proc.stdout[-500:], proc.stderr[-500:])
        assert "is inside the committed evidence folder" in proc.stderr, proc.stderr
    proc, _ = run_pytest(tmp_path, "--planner", "python", "--case", "spec7-no-prefix",
                         "--results", str(EVIDENCE / "results.json"))
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "is inside the committed evidence folder reports/upstream/" in proc.stderr
    assert _evidence_snapshot() == before


def test_publish_never_replaces_a_file_it_did_not_write(tmp_path, results):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>my own page</p>\n")
    proc = cli("report", str(results), "--publish", str(site))
    assert proc.returncode == 2
    assert "its index.html is not one a publish wrote" in proc.stderr
    assert (site / "index.html").read_text() == "<p>my own page</p>\n"


def test_a_file_that_only_quotes_the_marker_is_not_a_report(tmp_path, results):
    """The marker counts where a report puts it (the page's head, a report's last line): a README
    or source file quoting it, or a report annotated below it, is never replaced."""
    readme = tmp_path / "README.md"
    readme.write_text("# notes\n\nreports carry `generated by python -m conformance report`\n")
    source = tmp_path / "report_files.py"
    source.write_text('GENERATOR = "generated by python -m conformance report"\n')
    page = tmp_path / "report.md"
    assert cli("report", str(results), "--format", "markdown", "--out", str(page)).returncode == 0
    page.write_text(page.read_text() + "\nREVIEWED: signed off by me\n")
    for target, fmt in ((readme, "markdown"), (source, "text"), (page, "markdown")):
        before = target.read_text()
        proc = cli("report", str(results), "--format", fmt, "--out", str(target))
        assert proc.returncode == 2, (target, proc.stdout[-300:])
        assert "exists and is not a report this command wrote" in proc.stderr
        assert target.read_text() == before
