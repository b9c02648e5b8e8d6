"""The harness used from another repository: the built wheel alone, installed in a fresh venv
outside the checkout, runs the packaged corpus on a planner module of that other folder.

One module-scoped setup builds the wheel (``pip wheel --no-deps --no-build-isolation``, from a copy
of the checkout), makes a
venv under a temporary folder, installs only the wheel (``--no-deps``) and gives the venv this
environment's packages (torch, pytest, ...) through a ``.pth`` file naming this environment's
site-packages, so nothing is downloaded. The "other repository" is a temporary folder holding
``mykernels.py`` (a copy of ``tests/planted/installed_planners.py``) and ``mycases/`` (one case of
its own). Every command runs there with ``PYTHONPATH`` unset: the checkout is never on the path.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from conformance.paths import CASES_ROOT
from conformance.corpus.corpus_subject import CASE_SCHEMA_PATH, SPEC_PATH
from tests.case_docs import case_doc

REPO = Path(__file__).resolve().parent.parent
PLANTED = REPO / "tests" / "planted" / "installed_planners.py"
BUILD_LITTER = (".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                ".pytest_cache", ".hypothesis", "out")
"""Left out of the copy the wheel is built from (``out``: ``reports/out/``, a run's files)."""
pytestmark = pytest.mark.slow  # about 30-60 s: a wheel, a venv and three pytest sessions
EXTRA_ID = "external-no-prefix"
"""The other repository's own case: spec §7's decode of row 2 (:func:`tests.case_docs.case_doc`)."""


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER",
                        "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _run(argv: list, cwd: Path, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, env={**_env(), **extra},
                          capture_output=True, text=True, timeout=timeout)


def _check(proc: subprocess.CompletedProcess, code: int = 0) -> subprocess.CompletedProcess:
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


class Installed:
    """The venv with only the wheel installed, and the other repository's folder."""

    def __init__(self, root: Path) -> None:
        wheels, self.venv, self.work = root / "wheel", root / "venv", root / "work"
        source = root / "source"  # a clean copy: no stale build/ of an earlier build ships
        shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*BUILD_LITTER))
        _check(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                     "-q", "-w", wheels, source], cwd=root))
        (self.wheel,) = wheels.glob("planner_conformance-*.whl")
        _check(_run([sys.executable, "-m", "venv", "--without-pip", self.venv], cwd=root))
        self.python = self.venv / "bin" / "python"
        purelib = _check(_run([self.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              cwd=root)).stdout.strip()
        self.purelib = Path(purelib)
        (self.purelib / "outer-environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
        _check(_run([sys.executable, "-m", "pip", "--python", self.python, "install", "-q",
                     "--no-deps", self.wheel], cwd=root))
        self.work.mkdir()
        shutil.copy(PLANTED, self.work / "mykernels.py")
        (self.work / "mycases").mkdir()
        (self.work / "mycases" / "own.json").write_text(json.dumps(case_doc(EXTRA_ID)))

    def pytest(self, *args: str) -> subprocess.CompletedProcess:
        """README's command: ``CONFORMANCE_PLANNER_PATH=. python -P -m pytest --pyargs conformance``
        (the folder holds the planner; ``-P``: not on pytest's own path)."""
        return _run([self.python, "-P", "-m", "pytest", "--pyargs", "conformance", "-p",
                     "no:cacheprovider", "-q", *args], cwd=self.work, CONFORMANCE_PLANNER_PATH=".")

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return _run([self.python, "-m", "conformance", *args], cwd=self.work)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    root = tmp_path_factory.mktemp("installed-wheel")
    assert not root.resolve().is_relative_to(REPO)
    return Installed(root)


@pytest.fixture(scope="module")
def good_run(installed):
    """The whole corpus plus the other repository's case on the correct planner."""
    proc = installed.pytest("--planner", "mykernels:launch", "--extra-cases", "mycases")
    return proc, json.loads((installed.work / "reports/out/results.json").read_text())


def test_the_wheel_carries_the_corpus_and_its_schemas(installed):
    import zipfile

    names = set(zipfile.ZipFile(installed.wheel).namelist())
    shipped = {n.removeprefix("conformance/data/cases/") for n in names
               if n.startswith("conformance/data/cases/")}
    here = {p.relative_to(CASES_ROOT).as_posix() for p in CASES_ROOT.rglob("*")
            if p.suffix in (".json", ".jsonl", ".md")}
    assert shipped == here
    assert {"README.md", "offsets-planner/schema.json", "offsets-planner/README.md",
            "offsets-planner/divergences/schema.json", "entries-planner/README.md",
            "entries-planner/semantics.jsonl"} <= shipped
    assert {"conformance/data/reports/results.schema.json",
            "conformance/reporting/templates/report.html.j2",
            "conformance/reporting/templates/compare.html.j2"} <= names
    if (REPO / "docs" / "spec" / "offsets-planner.md").exists():
        assert "conformance/data/spec/offsets-planner.md" in names
    assert not any(n.startswith(("tests/", "cases/", "reports/")) for n in names)
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(installed.wheel).read(entry_points).decode()
    assert "[pytest11]\nconformance.plugin.hooks = conformance.plugin.hooks" in text


def test_the_venv_imports_the_wheel_not_the_checkout(installed):
    proc = _check(installed.cli("--help"))
    assert "planners" in proc.stdout
    where = _check(_run([installed.python, "-c",
                         "import conformance, impls, conformance.paths as p; "
                         "import conformance.corpus.corpus_subject as s; "
                         "print(conformance.__file__); print(impls.__file__); "
                         "print(p.INSTALLED); print(s.CASE_SCHEMA_PATH); print(s.SPEC_PATH)"],
                        cwd=installed.work)).stdout.split()
    assert [Path(w).is_relative_to(installed.purelib) for w in where[:2]] == [True, True]
    assert where[2] == "True"
    assert Path(where[3]).read_bytes() == CASE_SCHEMA_PATH.read_bytes()
    assert Path(where[3]).is_relative_to(installed.purelib)  # the wheel's data, not the checkout's
    assert Path(where[4]).read_bytes() == SPEC_PATH.read_bytes()
    assert Path(where[4]).is_relative_to(installed.purelib)


def test_the_whole_corpus_and_the_own_case_pass_on_a_correct_external_planner(installed, good_run):
    proc, results = good_run
    _check(proc)
    cases, _ = load_corpus()
    assert results["complete"] is True and results["exitstatus"] == 0
    assert sorted(r["case"] for r in results["results"]) == sorted([c.id for c in cases] + [EXTRA_ID])
    assert {r["status"] for r in results["results"]} == {"pass"}
    launcher = {r["planner"] for r in results["results"]} - {"validator", "allocator"}
    assert launcher == {"mykernels:launch"}
    own = next(r for r in results["results"] if r["case"] == EXTRA_ID)
    assert own["file"] == "mycases/own.json"
    assert f"{len(results['results'])} passed" in proc.stdout
    # written in the other repository's folder, never into the installed package
    assert not (installed.purelib / "reports").exists()
    assert not (installed.purelib / "conformance" / "reports").exists()


def test_report_is_written_in_the_current_folder(installed, good_run):
    _, results = good_run
    proc = _check(installed.cli("report"))
    page = installed.work / "reports" / "report.html"
    assert proc.stdout.strip() == "wrote reports/report.html"
    assert "mykernels:launch" in page.read_text()
    text = _check(installed.cli("report", "--format", "text")).stdout
    assert text.splitlines()[0].startswith(f"{len(results['results'])} results, 0 not passing")


def test_a_wrong_external_planner_fails_with_a_rerun_from_that_folder(installed):
    proc = installed.pytest("--planner", "mykernels:launch_wrong_write_offsets",
                            "--extra-cases", "mycases", "--case", "spec7-prefill-and-decodes",
                            "--case", EXTRA_ID, "--results", "reports/out/wrong.json")
    _check(proc, 1)
    results = json.loads((installed.work / "reports/out/wrong.json").read_text())
    by_case = {r["case"]: r for r in results["results"]}
    assert sorted(by_case) == sorted(["spec7-prefill-and-decodes", EXTRA_ID])
    assert {r["status"] for r in by_case.values()} == {"fail"}
    assert all("out_write_offsets" in r["message"] for r in by_case.values())
    words = shlex.split(by_case[EXTRA_ID]["rerun"])
    words = words[next(i for i, w in enumerate(words) if "=" not in w):]  # past NAME=value
    assert words[:6] == ["python", "-P", "-m", "pytest", "--pyargs", "conformance"]
    assert f"CONFORMANCE_PLANNER_PATH={installed.work} " in by_case[EXTRA_ID]["rerun"]  # absolute
    assert "--cases mycases --case external-no-prefix" in " ".join(words)
    again = installed.pytest(*words[6:])  # the rerun line, run from the same folder
    _check(again, 1)
    assert "1 failed" in again.stdout


def test_record_write_leaves_the_installed_corpus_alone(installed):
    path = (installed.purelib / "conformance" / "data" / "cases" / "offsets-planner" / "spec"
            / "section7-examples.json")
    before = path.read_bytes()
    proc = _check(installed.cli("record", "spec7-no-prefix", "--write"), 2)
    assert "not edited in place" in proc.stderr
    assert path.read_bytes() == before
    assert '"out_write_offsets": [0, 5]' in _check(installed.cli("record", "spec7-no-prefix")).stdout


def test_the_plugin_stays_quiet_in_the_other_repository_s_own_tests(installed, tmp_path):
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert sum([1, 2]) == 3\n")
    proc = _check(_run([installed.python, "-m", "pytest", "-p", "no:cacheprovider", "-q"],
                       cwd=tmp_path))
    assert "1 passed" in proc.stdout
    assert "conformance" not in proc.stdout
    left = {p.name for p in tmp_path.iterdir()} - {"__pycache__", ".benchmarks"}  # pytest-benchmark's own
    assert left == {"test_own.py"}
