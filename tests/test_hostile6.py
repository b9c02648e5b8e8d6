"""Sixth hostile review, kept as tests: a contest entrant's external planner against the recent
code: the editable and virtualenv finders the source digest now accepts
(impls/editable_finders.py, impls/finder_data.py, impls/known_finders.py) and the failure groups
keyed on the new ``got_kind`` of a difference (conformance/reporting/failure_groups.py,
conformance/engine/verdict.py). Planted: tests/planted/hostile6_shadow_init.py (the ``__init__``
of an entrant's editable package), tests/planted/hostile6_errors.py.

One test per attempt. Caught: a plain test asserting the harness's verdict. Not caught: a strict
xfail whose reason names the hole and a fix; the test states what the harness should do (it
passes once fixed). A hole's mechanism is checked in its fixture (outside the xfail), so a strict
xfail never passes by accident of a broken attack.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOOD = "from impls.offsets_planner.python_planner import launch  # the plan the run judged\n"
WRONG = "from tests.planted.wrong_planners import off_by_one_scan as launch  # another plan\n"
ERRORS = "tests.planted.hostile6_errors"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# === 1. the editable finder's placeholder path entry: a folder the harness met absent ==========


def _chained_venv(base: Path) -> Path:
    """A venv of its own whose site-packages processes this environment's (its ``.pth`` files,
    this checkout's editable install among them) after its own: the entrant's ``pip install -e``
    goes into it, the harness's environment is untouched. Returns its site-packages."""
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "zz_hostile6_base.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    return site


def _editable_entrant(base: Path, site: Path) -> None:
    """``pip install -e`` (offline, this setuptools: its template) of project ``h6ent`` 0.1, whose
    ``kern`` is the right plan and whose ``__init__`` is tests/planted/hostile6_shadow_init.py,
    into the venv of ``site``."""
    project = base / "h6ent-project"
    (project / "h6ent").mkdir(parents=True)
    (project / "h6ent" / "__init__.py").write_text(
        (ROOT / "tests" / "planted" / "hostile6_shadow_init.py").read_text())
    (project / "h6ent" / "kern.py").write_text(GOOD)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
        '\n[project]\nname = "h6ent"\nversion = "0.1"\n')
    prefix = site.parents[2]
    out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                          "-e", str(project), "--prefix", str(prefix)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert list(site.glob("__editable__.h6ent-0.1.pth"))


@pytest.fixture(scope="module")
def placeholder_run(tmp_path_factory):
    """A real corpus run of ``h6ent.kern:launch`` (an entrant's editable install, its finder
    exactly setuptools' template: known) from a working directory of its own, ``--sandbox none``
    (as every GPU run by default). Checked here: the harness's own editable install put its
    relative placeholder entry on sys.path, the probe's import of ``h6ent`` (its undigested
    ``__init__``) wrote the shadow package into the folder of that name, and the workers ran the
    shadow (the right ``kern`` passes this case; the off-by-one scan fails it)."""
    base = tmp_path_factory.mktemp("placeholder")
    site = _chained_venv(base)
    _editable_entrant(base, site)
    python = site.parents[2] / "bin" / "python"
    work = base / "work"
    work.mkdir()
    results = base / "results.json"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HOSTILE6_SHADOW="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [str(python), "-m", "pytest", str(ROOT / "conformance"), "--rootdir", str(ROOT),
         "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-q", "--sandbox", "none",
         "--planner", "h6ent.kern:launch", "--case", "spec7-prefill-and-decodes",
         "--results", str(results)],
        cwd=work, env=env, capture_output=True, text=True, timeout=400)
    assert results.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(results.read_text())
    assert doc["complete"], proc.stdout[-3000:]
    shadows = list(work.glob("__editable__.*.__path_hook__/h6ent/kern.py"))
    assert [p.read_text() for p in shadows] == [WRONG], proc.stdout[-3000:]
    assert [(r["case"], r["status"]) for r in doc["results"]] == [
        ("spec7-prefill-and-decodes", "fail")], proc.stdout[-3000:]
    return doc


@pytest.mark.slow  # a venv, an editable install and a corpus run: about 20 s
def test_the_digest_names_the_file_the_workers_ran_past_the_placeholder(placeholder_run):
    """Caught: the harness's own editable install appends a RELATIVE placeholder entry
    ('__editable__.planner_conformance-<version>.finder.__path_hook__') to sys.path, whose
    finder the harness cached at start (the folder absent: setuptools' namespace hook); the
    probe's import of the entrant's undigested package __init__ writes a shadow package into a
    folder of that name in the working directory, which every child (the workers) then searches
    with a fresh FileFinder ahead of the editable finders. The lookup refuses a relative entry
    that names an existing path (impls/known_finders.py _path_search): no digest, rather than
    the pristine file's, which did not run."""
    source = placeholder_run["fingerprint"]["planners"]["h6ent.kern:launch"]["source"]
    assert source is None
    assert placeholder_run["results"][0]["status"] == "fail"  # the shadow ran, and failed


# === 2. the failure groups: a wrong error whose got_kind reads as the documented one ==========


@pytest.fixture(scope="module")
def error_run(tmp_path_factory):
    """A real corpus run of the planted wrong-error planners on one error case; the results
    document and its failure groups (as the report and the summary build them)."""
    from conformance.reporting import failure_groups
    from conformance.reporting.results_format import load_results
    from tests.subproc import run_pytest

    tmp = tmp_path_factory.mktemp("errors")
    proc, _ = run_pytest(tmp, "--planner", f"{ERRORS}:fake_builtin_class", "--planner",
                         f"{ERRORS}:right_id_wrong_message", "--case", "err-dtype-prefix-lens")
    doc = load_results(tmp / "results.json")
    assert doc["complete"], proc.stdout[-3000:]
    statuses = {r["planner"]: r["status"] for r in doc["results"]}
    assert set(statuses.values()) == {"fail"}, statuses  # both are wrong errors
    words = {g["planner"]: [p["words"] for p in g["patterns"]]
             for g in failure_groups.groups(doc["results"])}
    return doc, words, proc.stdout


def _expected_kind(doc) -> str:
    (step,) = [s for r in doc["results"] for s in r["verdict"]["error_steps"]][:1]
    return step["id"]


@pytest.mark.slow  # a corpus run of two external planners: about 10 s
def test_a_fake_builtin_class_does_not_read_as_the_documented_error(error_run):
    doc, words, _ = error_run
    wanted = _expected_kind(doc)
    (text,) = words[f"{ERRORS}:fake_builtin_class"]
    assert text.endswith(f"got ValueError (not the built-in) [{wanted}] (contract)"), text


@pytest.mark.slow  # shares error_run
def test_the_documented_id_with_another_message_does_not_read_as_the_documented_error(error_run):
    doc, words, _ = error_run
    wanted = _expected_kind(doc)
    (text,) = words[f"{ERRORS}:right_id_wrong_message"]
    assert text.endswith(f"got ValueError [{wanted}], another message (contract)"), text


def test_control_characters_in_a_got_kind_are_escaped_in_every_rendering():
    """Caught: a raised class name (the child's word) with ESC sequences, backticks, pipes and
    HTML reaches the terminal lines escaped, the Markdown as one code span per cell, HTML
    autoescaped."""
    from conformance.reporting import failure_groups

    nasty = "ValueError\x1b[32m PASSED\x1b[0m`|<img src=x onerror=alert(1)>"
    result = {"planner": "p", "case": "c1", "status": "fail", "verdict": {
        "differences": [{"step": 0, "run": "r", "what": "raised", "field": "error", "index": None,
                         "expected": None, "got": nasty, "rule": "contract",
                         "got_kind": nasty}], "error_steps": []}}
    found = failure_groups.groups([result])
    lines = failure_groups.terminal_lines(found)
    assert not any("\x1b" in line for line in lines) and "\\x1b[32m" in "".join(lines)
    md = failure_groups.markdown_lines(found)
    row = md[-1].splitlines()[-1]
    assert row.count(" | ") == 3, row  # four cells: the pipe inside is escaped
    import jinja2
    html = jinja2.Environment(autoescape=True).from_string("{{ w }}").render(
        w=found[0]["patterns"][0]["words"])
    assert "<img" not in html


def test_a_hand_edited_what_with_format_fields_is_refused_by_the_schema(tmp_path):
    """Attempt: a results file whose difference's ``what`` is a format string (``{0}``: words()
    formats the fallback template with it). Caught: the results schema's enum refuses the file
    before any report is built."""
    from conformance.reporting import failure_groups
    from conformance.reporting.results_format import load_results

    with pytest.raises(IndexError):
        failure_groups.words(("fail", "{0}", "f", "contract", None, None))  # the mechanism
    doc = json.loads((ROOT / "reports" / "upstream" / "0.5.23" / "results.json").read_text())
    bad = next(r for r in doc["results"] if r.get("verdict") and r["verdict"].get("differences"))
    bad["verdict"]["differences"][0]["what"] = "{0}"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(Exception) as info:
        load_results(path)
    assert not isinstance(info.value, IndexError)


def test_a_child_is_given_only_absolute_path_entries(monkeypatch, tmp_path):
    """The probe's and the workers' PYTHONPATH (impls.source_file.child_pythonpath): this
    process's sys.path with its empty entry as the working directory, a relative entry (an
    editable install's placeholder, added after start) left out, the inherited PYTHONPATH last."""
    from impls.source_file import child_pythonpath

    placeholder = "__editable__.x-1.finder.__path_hook__"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", "/abs/one", placeholder, "rel/two", "/abs/three"])
    assert child_pythonpath("/inherited").split(os.pathsep) == [
        str(tmp_path), "/abs/one", "/abs/three", "/inherited"]
    assert child_pythonpath(None).split(os.pathsep) == [str(tmp_path), "/abs/one", "/abs/three"]


def test_a_relative_entry_naming_a_folder_here_refuses_the_lookup(monkeypatch, tmp_path):
    """The lookup itself: a relative sys.path entry that names a folder of the working directory
    refuses it (a child would search that folder afresh); the same entry with no such folder is
    passed over as the import passes it over."""
    from impls.source_file import REFUSED_FINDER, lookup

    placeholder = "__editable__.y-1.finder.__path_hook__"
    (tmp_path / "pkgh6").mkdir()
    (tmp_path / "pkgh6" / "__init__.py").write_text("")
    (tmp_path / "pkgh6" / "mod.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path[:], placeholder, str(tmp_path)])
    assert lookup("pkgh6.mod") == (str(tmp_path / "pkgh6" / "mod.py"), None)
    (tmp_path / placeholder).mkdir()
    assert lookup("pkgh6.mod") == (None, REFUSED_FINDER)
