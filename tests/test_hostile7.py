"""Seventh hostile review, kept as tests: a contest entrant's external planner whose module lives
in the entrant's own folder, against the judge's import path, the reports and the known-divergence
manifests. Planted: tests/planted/hostile7_shadow.py, tests/planted/hostile7_borrowed_manifest.py.

All three attacks worked before the fixes they name:

1. The planner's folder was on ``PYTHONPATH``, so on pytest's own ``sys.path`` ahead of
   site-packages; the probe wrote ``sortedcontainers.py`` there and hypothesis's plugin imported
   it in pytest's process at the terminal summary, which turned the run green (exit 0). Now the
   folder goes in ``CONFORMANCE_PLANNER_PATH`` (children only; impls/planner_path.py) and a
   planner folder on ``PYTHONPATH`` is refused before the probe.
2. The report, run with that ``PYTHONPATH`` as it once asked, imported a planted ``tabulate.py``.
   Now it reads the run's folders without importing from them.
3. Upstream's manifest applied to any module named like upstream's, with a ``dist-info`` of the
   entrant's own naming the release: now a manifest lists the SHA-256 of the files it was
   reviewed against (``sources``) and applies to those only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASE = "spec7-prefill-and-decodes"  # the inclusive scan fails it (tests/planted/wrong_planners.py)


def _env(folder: Path, variable: str = "CONFORMANCE_PLANNER_PATH", **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTHONPATH",
                        "CONFORMANCE_PLANNER_PATH")}
    env.update({variable: str(folder)}, **extra)
    return env


def _corpus_run(folder: Path, results: Path, *args: str, env_extra: dict | None = None,
                addopts: str = "", variable: str = "CONFORMANCE_PLANNER_PATH"
                ) -> subprocess.CompletedProcess:
    """``pytest conformance/ ARGS`` from the checkout, the entrant's ``folder`` in ``variable``
    (the planner folders, as README says; or PYTHONPATH), with the plugins of this environment as
    a user's run has them (hypothesis's among them)."""
    env = _env(folder, variable, **(env_extra or {}))
    if addopts:
        env["PYTEST_ADDOPTS"] = addopts
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-p", "no:cacheprovider", "-q",
         "--results", str(results), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _statuses(results: Path) -> list[str]:
    return [r["status"] for r in json.loads(results.read_text())["results"]]


# === 1. a module shadowed in the entrant's folder, imported later by pytest =====================


@pytest.fixture(scope="module")
def shadow_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("entrant")
    shutil.copy(ROOT / "tests" / "planted" / "hostile7_shadow.py", folder / "h7shadow.py")
    return folder


def test_a_module_planted_in_the_planners_pythonpath_folder_does_not_turn_the_run_green(
        shadow_folder, tmp_path):
    """Attack: the planner's module, imported by the sandboxed probe, writes ``sortedcontainers.py``
    into its own folder. Were that folder on pytest's sys.path (PYTHONPATH, as README once said),
    hypothesis's pytest plugin would import the payload in pytest's own process at the terminal
    summary: it marks every result ``pass``, rewrites the results file through the harness's
    writer and sets the exit status to 0. In ``CONFORMANCE_PLANNER_PATH`` the folder is on the
    children's path only: the run fails as the planner is wrong."""
    marker = tmp_path / "marker"
    results = tmp_path / "results.json"
    proc = _corpus_run(shadow_folder, results, "--planner", "h7shadow:launch", "--case", CASE,
                       env_extra={"HOSTILE7_MARKER": str(marker)})
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert results.exists(), out
    assert (shadow_folder / "sortedcontainers.py").exists() or proc.returncode != 0, out
    assert proc.returncode == 1, f"a wrong planner's run exited {proc.returncode}:\n{out}"
    assert _statuses(results) == ["fail"], out
    assert not marker.exists(), marker.read_text()


def test_the_report_with_the_runs_pythonpath_runs_no_planner_code(shadow_folder, tmp_path):
    """Attack: the same planner writes ``tabulate.py`` there too, which ``python -m conformance
    report`` imports at start. The report needs no PYTHONPATH (it reads the run's recorded planner
    folder without importing from it), so the payload, which would make every results document
    read ``pass``, never runs: the run failed and its report says so."""
    results = tmp_path / "results.json"
    proc = _corpus_run(shadow_folder, results, "--planner", "h7shadow:launch", "--case", CASE,
                       addopts="-p no:hypothesispytest")
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert proc.returncode == 1 and _statuses(results) == ["fail"], out
    if not (shadow_folder / "tabulate.py").exists():  # the sandbox kept the folder read-only:
        from tests.planted.hostile7_shadow import PAYLOAD  # plant it as an unsandboxed probe would

        (shadow_folder / "tabulate.py").write_text(PAYLOAD)
    page = tmp_path / "report.md"
    rep = subprocess.run([sys.executable, "-m", "conformance", "report", str(results),
                          "--format", "markdown", "--out", str(page)],
                         cwd=ROOT, env=_env(shadow_folder), capture_output=True, text=True,
                         timeout=120)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    text = page.read_text()
    assert "1 result, 1 not passing" in text, text[:1500]


def test_a_planner_folder_on_pythonpath_is_refused_before_the_probe(tmp_path):
    """The same attack with the folder on PYTHONPATH (where README once put it): refused with a
    usage error before the probe imports the planner, so nothing is planted and nothing runs."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "planted" / "hostile7_shadow.py", folder / "h7shadow.py")
    results = tmp_path / "results.json"
    proc = _corpus_run(folder, results, "--planner", "h7shadow:launch", "--case", CASE,
                       variable="PYTHONPATH")
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "a folder on the judge's own import path" in proc.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["h7shadow.py"]  # nothing planted


# === 2. upstream's known-divergence manifest borrowed by name ==================================


@pytest.fixture
def borrowed(tmp_path) -> Path:
    """The entrant's folder: package ``sglang.h7`` (no sglang is installed here) whose
    ``kv_canary/plan/offsets_kernel.py`` is tests/planted/hostile7_borrowed_manifest.py, and a
    ``sglang-0.5.23.dist-info``."""
    folder = tmp_path / "entrant"
    plan = folder / "sglang" / "h7" / "kv_canary" / "plan"
    plan.mkdir(parents=True)
    for package in (plan, plan.parent, plan.parent.parent, plan.parent.parent.parent):
        (package / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "planted" / "hostile7_borrowed_manifest.py",
                plan / "offsets_kernel.py")
    info = folder / "sglang-0.5.23.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.23\n")
    return folder


def test_upstreams_manifest_does_not_declare_an_entrants_failures(borrowed, tmp_path):
    """Attack: name the module ``sglang.h7.kv_canary.plan.offsets_kernel`` (upstream's manifest
    names ``sglang.*kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel``, fnmatch: any
    module of a package ``sglang`` the entrant ships itself) and put ``sglang-0.5.23.dist-info`` in
    the entrant's folder (the ``releases`` check reads metadata there). The inclusive scan fails
    ``random-decode-prefill-bs-1025`` (a wrong write offset, nothing the manifest is about) and
    read ``declared``. The manifest now lists the SHA-256 of the files it was reviewed against
    (``sources``): the entrant's file is none of them, so the failure stands."""
    results = tmp_path / "results.json"
    planner = "sglang.h7.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
    proc = _corpus_run(borrowed, results, "--planner", planner,
                       "--case", "random-decode-prefill-bs-1025",
                       addopts="-p no:hypothesispytest")
    out = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert results.exists(), out
    (result,) = json.loads(results.read_text())["results"]
    assert result["observed"] == "fail", out  # the planner is wrong here
    assert result["status"] == "fail", f"read {result['status']!r}:\n{out}"
    assert proc.returncode == 1, out


def test_a_manifest_applies_to_the_files_it_lists_only(tmp_path):
    """``sources`` gates a manifest on the harness's own digest of the planner's file; without
    ``sources`` the name pattern alone decides (a manifest of one's own planner)."""
    from conformance.corpus.manifest import load_manifest

    upstream = ROOT / "cases" / "offsets-planner" / "divergences" / "sglang-offsets-kernel.json"
    manifest, fault = load_manifest(upstream)
    assert fault is None
    name = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
    released = "b2de9670740afb283edc8b6c33c8e77698a6d4f255fde30469b68d94dff7c800"  # 0.5.20, 0.5.23
    utils = "d4f55a6637cf5d75ee6b32d0a26b7a60fff8d69d38b26f40653c45d7243fb11e"  # plan/utils.py
    source = {"sha256": released, "imports": [{"module": "u", "file": "u.py", "sha256": utils}]}
    assert manifest.names(name, source)
    assert not manifest.names(name, {**source, "sha256": "0" * 64}) and not manifest.names(name)
    other_kernel = {"sha256": released, "imports": [{"module": "u", "file": "u.py",
                                                      "sha256": "0" * 64}]}
    assert not manifest.names(name, other_kernel)  # the reviewed file beside another kernel
    unpinned = {"sha256": released, "imports": [{"module": "u", "file": None, "sha256": None}]}
    assert not manifest.names(name, unpinned)
    assert not manifest.names("mine:launch", source)
    doc = json.loads(upstream.read_text())
    del doc["sources"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    manifest, fault = load_manifest(bare)
    assert fault is None and manifest.names(name, None) and manifest.names(name, other_kernel)
