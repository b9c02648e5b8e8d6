"""Eighth hostile review, kept as tests: an entrant's external planner in
``CONFORMANCE_PLANNER_PATH`` against the defenses of the seventh (the planner folder off the
judge's path, source digests with local imports, manifests' ``sources``, benchmark figures
withheld, no overwrite of reviewed files). Planted: tests/planted/hostile8_*.py.

Each test asserts what the harness must do. Attacks that worked when this review was written, each
fixed since (the fix after the arrow):

1. a package of sourceless bytecode (``h8twin/__init__.pyc``) beside the digested ``h8twin.py``:
   the import runs the package, :func:`impls.folder_lookup.lookup_in` (source loaders only) reads
   the file; a manifest reviewed against that file declares the bytecode's failures;
2. a launcher whose kernel module is sourceless bytecode (``h8kern.pyc``): no import recorded,
   so ``report --strict`` calls the run fresh after the kernel changed -> a local module with
   no source is recorded with a null digest (cannot be verified);
3. a manifest's ``sources`` pin the planner's own file only, not the local imports the digest
   records: a reviewed launcher with another kernel gets its failures declared -> every local
   import must be among them too;
4. ``report --bench`` compares the top file's SHA-256 only: a benchmark of other imported code
   is published beside the verdicts of the judged code -> the imports are compared too;
5. a writable ``PYTHONPATH`` folder that is not the planner's own: the probe plants a module
   there that the judge imports later (payload of tests/planted/hostile7_shadow.py): green run
   -> the sandbox makes every folder of the import path read-only;
6. ``repro --out`` and ``manifest --out`` write into committed evidence; ``repro --out``
   replaces any file -> both create new files only, never in committed evidence.

Defended: start-up hooks (``sitecustomize``, ``usercustomize``, ``.pth``) in the planner folder
never run in the judge.
"""

from __future__ import annotations

import json
import os
import py_compile
import shutil
from pathlib import Path

from tests.planner_folder_runs import ROOT, conformance_command, corpus_run, results_of, sha256_of

PLANTED = ROOT / "tests" / "planted"
CASE = "spec7-prefill-and-decodes"  # the inclusive scan fails it (tests/planted/wrong_planners.py)


def _bytecode(planted: str, target: Path) -> None:
    """``tests/planted/PLANTED`` compiled to sourceless bytecode at ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    py_compile.compile(str(PLANTED / planted), cfile=str(target), doraise=True)


def _manifest(path: Path, planner: str, sources: list[str]) -> Path:
    """A manifest reviewed against ``sources`` that declares the inclusive scan's failure of
    :data:`CASE` (as upstream's declares its reviewed bugs)."""
    path.write_text(json.dumps({
        "planner": planner, "description": "reviewed against the listed files", "sources": sources,
        "divergences": [{"case": CASE, "section": "6", "reason": "reviewed", "status": ["fail"]}]}))
    return path


# === 1. bytecode beside the digested file =====================================================


def test_a_bytecode_package_beside_the_digested_file_borrows_no_manifest(tmp_path):
    """Attack: the folder holds ``h8twin.py`` (a correct planner, the file a manifest was
    reviewed against) and a folder ``h8twin/`` whose ``__init__.pyc`` is the inclusive scan,
    compiled, without source. The import finds the package first (its ``__init__`` with any
    loader's suffix); the harness's :func:`impls.folder_lookup.lookup_in` asks a FileFinder with
    the source loader only, skips the package and digests ``h8twin.py``. The manifest's
    ``sources`` match that digest and the wrong code's failure read ``declared``. The digest must
    name no file the import does not run: no digest (no manifest applies), the failure stands."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(PLANTED / "hostile8_good.py", folder / "h8twin.py")
    _bytecode("hostile8_wrong.py", folder / "h8twin" / "__init__.pyc")
    manifest = _manifest(tmp_path / "m.json", "h8twin:launch", [sha256_of(folder / "h8twin.py")])
    results = tmp_path / "results.json"
    proc = corpus_run(folder, results, "--planner", "h8twin:launch", "--case", CASE,
                       "--manifest", str(manifest), "-p", "no:hypothesispytest")
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert results.exists(), out
    (result,) = results_of(results)
    assert result["observed"] == "fail", out  # the bytecode ran: the planner is wrong here
    source = json.loads(results.read_text())["fingerprint"]["planners"]["h8twin:launch"]["source"]
    assert (source or {}).get("sha256") != sha256_of(folder / "h8twin.py"), source
    assert result["status"] == "fail", f"read {result['status']!r}:\n{out}"
    assert proc.returncode == 1, out


# === 2. a sourceless kernel module ===========================================================


def test_a_sourceless_kernel_module_changed_after_the_run_is_not_fresh(tmp_path):
    """Attack: launcher ``h8launch.py`` imports ``h8kern``, which is ``h8kern.pyc`` alone (a
    correct kernel at the run). :func:`impls.source_imports.local_imports` takes a module with
    no source file for "not found" and records no import; after the run the bytecode becomes the
    inclusive scan and ``report --strict`` called the passing run fresh. A local import that
    cannot be pinned must read "cannot be verified" (strict exits 1)."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(PLANTED / "hostile8_launcher.py", folder / "h8launch.py")
    _bytecode("hostile8_good.py", folder / "h8kern.pyc")
    results = tmp_path / "results.json"
    proc = corpus_run(folder, results, "--planner", "h8launch:launch", "--case", CASE,
                       "-p", "no:hypothesispytest")
    assert proc.returncode == 0 and [r["status"] for r in results_of(results)] == ["pass"], \
        proc.stdout[-3000:] + proc.stderr[-2000:]
    _bytecode("hostile8_wrong.py", folder / "h8kern.pyc")  # other code since the run
    page = tmp_path / "report.md"
    rep = conformance_command(None, "report", str(results), "--strict", "--format", "markdown",
                       "--out", str(page))
    assert rep.returncode == 1, (rep.stdout + rep.stderr + page.read_text()[:1500])


# === 3. a manifest reviewed against a launcher ===============================================


def test_a_manifest_applies_only_with_the_local_imports_it_was_reviewed_with(tmp_path):
    """Attack: upstream's ``offsets_kernel.py`` imports its helpers from its own package
    (``plan/utils.py``); an entrant ships the reviewed file verbatim with helpers of its own.
    Here: a manifest reviewed against launcher ``h8launch.py`` (its SHA-256 in ``sources``),
    whose ``h8kern`` is now the inclusive scan. The run's digest records ``h8kern``'s other
    SHA-256, but :meth:`conformance.corpus.manifest.Manifest.names` checks the top file only, so
    the failure read ``declared``. It must stand."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(PLANTED / "hostile8_launcher.py", folder / "h8launch.py")
    shutil.copy(PLANTED / "hostile8_wrong.py", folder / "h8kern.py")
    manifest = _manifest(tmp_path / "m.json", "h8launch:launch", [sha256_of(folder / "h8launch.py")])
    results = tmp_path / "results.json"
    proc = corpus_run(folder, results, "--planner", "h8launch:launch", "--case", CASE,
                       "--manifest", str(manifest), "-p", "no:hypothesispytest")
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    (result,) = results_of(results)
    assert result["observed"] == "fail", out
    assert result["status"] == "fail", f"read {result['status']!r}:\n{out}"
    assert proc.returncode == 1, out


# === 4. a benchmark of other imported code ===================================================


def test_a_benchmark_of_another_kernel_module_is_withheld(tmp_path):
    """Attack: the judged run (launcher + correct ``h8kern.py``) passes; ``h8kern.py`` is then
    replaced, the benchmark run, and the judged kernel put back, so the results read fresh. The
    bench recorded the other kernel's SHA-256 among its imports, but
    :func:`conformance.reporting.bench_section.withheld` compares the launcher's own file only:
    the figure of code never judged stood beside the verdicts. It must read ``withheld``."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(PLANTED / "hostile8_launcher.py", folder / "h8launch.py")
    kern = folder / "h8kern.py"
    shutil.copy(PLANTED / "hostile8_good.py", kern)
    results = tmp_path / "results.json"
    proc = corpus_run(folder, results, "--planner", "h8launch:launch", "--case", CASE,
                       "-p", "no:hypothesispytest")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    judged = kern.read_text()
    kern.write_text(judged + "\n# another kernel: the code the benchmark times, never judged\n")
    bench = tmp_path / "bench.json"
    run = conformance_command(folder, "bench", "--planner", "h8launch:launch", "--bs", "1", "--mode",
                       "eager", "--scenario", "reused", "--rounds", "5", "--json", str(bench))
    assert run.returncode == 0 and bench.exists(), run.stdout[-3000:] + run.stderr[-2000:]
    kern.write_text(judged)
    page = tmp_path / "report.html"
    rep = conformance_command(folder, "report", str(results), "--bench", str(bench), "--strict",
                       "--out", str(page))
    text = page.read_text()
    # the other code is named first, before what else keeps the figure off (the run judged one case)
    why = "withheld: the benchmark ran other code than this run judged (its imports h8kern)"
    assert why in text and rep.returncode == 1, (
        rep.stdout + rep.stderr + " | ".join(l for l in text.splitlines() if "h8launch" in l))


# === 5. a writable PYTHONPATH folder that is not the planner's ===============================


def test_a_module_planted_in_another_pythonpath_folder_does_not_turn_the_run_green(tmp_path):
    """Attack: the planner folder is in ``CONFORMANCE_PLANNER_PATH`` as README says, and
    ``PYTHONPATH`` holds another folder of the entrant's (``lib/``, a helper library).
    :func:`impls.planner_path.judge_path_fault` refuses only the planner's own folder there,
    and the probe's sandbox keeps only the checkout and the interpreter's folders read-only: the
    probe writes ``sortedcontainers.py`` into ``lib/``, hypothesis's plugin imports it in pytest's
    process at the terminal summary, and the payload of tests/planted/hostile7_shadow.py marks the
    wrong planner's result ``pass`` and the exit status 0. Nothing the planner writes may run in
    the judge: the run fails as the planner is wrong (or is refused before the probe)."""
    lib, planner = tmp_path / "lib", tmp_path / "planner"
    lib.mkdir()
    planner.mkdir()
    shutil.copy(PLANTED / "hostile8_other_folder.py", planner / "h8other.py")
    marker = tmp_path / "marker"
    results = tmp_path / "results.json"
    proc = corpus_run(planner, results, "--planner", "h8other:launch", "--case", CASE,
                       PYTHONPATH=str(lib), HOSTILE7_MARKER=str(marker))
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert not marker.exists(), marker.read_text() + out
    assert proc.returncode in (1, 4), f"a wrong planner's run exited {proc.returncode}:\n{out}"
    if proc.returncode == 1:
        assert [r["status"] for r in results_of(results)] == ["fail"], out


# === 6. files a command must not write =======================================================


def test_repro_out_never_replaces_a_kept_file_nor_writes_into_committed_evidence(tmp_path):
    """Attack: ``python -m conformance repro CASE --planner P --out FILE`` wrote its script over
    any file (a reviewed manifest, a committed results file) and into ``reports/upstream/``. It
    must refuse both, as ``report --out`` and ``bench --json`` do."""
    kept = tmp_path / "reviewed.json"
    kept.write_text('{"reviewed": true}\n')
    rep = conformance_command(None, "repro", CASE, "--planner", "python", "--out", str(kept))
    assert kept.read_text() == '{"reviewed": true}\n', rep.stderr[-2000:]
    assert rep.returncode != 0, rep.stderr[-2000:]
    evidence = ROOT / "reports" / "upstream" / f"h8-repro-{os.getpid()}.py"
    try:
        rep = conformance_command(None, "repro", CASE, "--planner", "python", "--out", str(evidence))
        assert not evidence.exists() and rep.returncode != 0, rep.stderr[-2000:]
    finally:
        evidence.unlink(missing_ok=True)


def test_manifest_out_never_writes_into_committed_evidence(tmp_path):
    """Attack: ``python -m conformance manifest --out`` refuses an existing file but writes a new
    one anywhere, ``reports/upstream/`` and ``reports/gpu/`` included. It must refuse them."""
    source = ROOT / "reports" / "upstream" / "cpu-results-no-manifest.json"
    if not source.exists():
        source = next((ROOT / "reports" / "upstream").rglob("results.json"))
    planner = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
    evidence = ROOT / "reports" / "gpu" / f"h8-manifest-{os.getpid()}.json"
    try:
        rep = conformance_command(None, "manifest", "--from", str(source), "--planner", planner,
                           "--out", str(evidence))
        assert not evidence.exists() and rep.returncode != 0, rep.stderr[-2000:]
    finally:
        evidence.unlink(missing_ok=True)


# === defended: start-up hooks in the planner folder ===========================================


def test_start_up_hooks_in_the_planner_folder_never_run_in_the_judge(tmp_path):
    """``sitecustomize.py``, ``usercustomize.py`` and a ``.pth`` file in the planner folder: the
    folder is never on the judge's path at start-up (nor a worker's), so none runs there."""
    folder = tmp_path / "entrant"
    folder.mkdir()
    shutil.copy(PLANTED / "hostile8_wrong.py", folder / "h8hooked.py")
    for name in ("sitecustomize.py", "usercustomize.py", "h8hookmod.py"):
        shutil.copy(PLANTED / "hostile8_site_hooks.py", folder / name)
    (folder / "h8hooks.pth").write_text("import h8hookmod\n")
    marker = tmp_path / "marker"
    results = tmp_path / "results.json"
    proc = corpus_run(folder, results, "--planner", "h8hooked:launch", "--case", CASE,
                       "-n", "2", "-p", "no:hypothesispytest", HOSTILE8_MARKER=str(marker))
    out = proc.stdout[-3000:] + proc.stderr[-2000:]
    assert not marker.exists(), marker.read_text()
    assert proc.returncode == 1 and [r["status"] for r in results_of(results)] == ["fail"], out
