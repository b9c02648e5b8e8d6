"""Known divergences declared for a range of releases (``releases`` in
cases/offsets-planner/divergences/schema.json, conformance/corpus/manifest.py): in the range they
apply, outside it they do not, and a malformed range is a load fault. The "installed" release is
pytest's own distribution, whose version importlib.metadata reports here."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest
from packaging.version import Version

from conformance.corpus.manifest import find_divergence, load_manifest


def write(tmp_path, releases, distribution="pytest"):
    entry = {"case": "bs-0", "section": "5", "reason": "upstream bug", "status": "fail"}
    if releases is not None:
        entry["releases"] = releases
    doc = {"planner": "mod:launch", "description": "d", "divergences": [entry]}
    if distribution is not None:
        doc["distribution"] = distribution
    path = tmp_path / "m.json"
    path.write_text(json.dumps(doc))
    return path


def found(tmp_path, releases, distribution="pytest"):
    manifest, fault = load_manifest(write(tmp_path, releases, distribution))
    assert fault is None, fault
    return find_divergence([manifest], "mod:launch", "bs-0", ())


def test_a_range_that_holds_the_running_release_applies(tmp_path):
    major = Version(version("pytest")).major
    d = found(tmp_path, f">={major},<{major + 1}")
    assert d is not None
    assert f"declared for pytest >={major},<{major + 1}; this run: pytest {version('pytest')}" in d.describe()


def test_a_range_without_it_does_not_apply(tmp_path):
    assert found(tmp_path, "<1") is None
    assert found(tmp_path, None) is not None  # no range: every release


def test_a_distribution_that_is_not_installed_is_in_no_range(tmp_path):
    assert found(tmp_path, ">=0", distribution="no-such-distribution-here") is None


@pytest.mark.parametrize("releases, distribution, message", [
    ("not a range", "pytest", "not a PEP 440 specifier"),
    (">=1", None, "needs the manifest's distribution"),
])
def test_a_bad_range_is_a_load_fault(tmp_path, releases, distribution, message):
    manifest, fault = load_manifest(write(tmp_path, releases, distribution))
    assert manifest is None and message in fault.message
    assert fault.json_path == "$.divergences[0].releases"


def test_a_fixed_release_in_the_range_reads_as_an_unexpected_pass(tmp_path):
    """A planner that meets a case declared for its (pytest's) release range: xpass, the run
    fails, and the message names the range and the release; outside the range: a plain pass."""
    from tests.subproc import run_pytest

    def run(releases):
        path = tmp_path / "m.json"
        path.write_text(json.dumps({"planner": "python", "description": "d", "distribution": "pytest",
                                    "divergences": [{"case": "bs-0", "section": "5", "reason": "bug",
                                                     "releases": releases, "status": "fail"}]}))
        proc, _ = run_pytest(tmp_path, "--planner", "python", "--manifest", str(path), "--case", "bs-0")
        doc = json.loads((tmp_path / "results.json").read_text())
        return proc, {r["status"] for r in doc["results"] if r["planner"] == "python"}

    major = Version(version("pytest")).major
    proc, seen = run(f">={major}")
    assert proc.returncode == 1 and seen == {"xpass"}
    assert "declared divergence (fail) passed" in proc.stdout
    assert f"[declared for pytest >={major}; this run: pytest {version('pytest')}]" in proc.stdout
    proc, seen = run("<1")
    assert proc.returncode == 0 and seen == {"pass"}
