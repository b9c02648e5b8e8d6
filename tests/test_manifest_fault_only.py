"""A divergence that shows only as a fault (``"shows_as": "fault"`` in
cases/offsets-planner/divergences/schema.json; conformance/corpus/manifest.py ``fault_only``,
conformance/plugin/profiles.py): a case that passes where no such fault can be seen (in process,
or on CUDA tensors, memcheck included: reports/gpu/2026-12-06-e/) reads ``declared`` with a
message saying it was not observable, never an unexpected pass; where faults are seen (an isolated worker's guard pages
on CPU tensors) a pass is still the strict unexpected pass. Upstream's read of the seed slot past
the table in ``hazard-zero-extend-past-table`` is such a divergence: its value is thrown away, so a
GPU run without memcheck sees a pass."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.corpus.manifest import find_divergence, load_manifest
from tests.subproc import run_pytest

UPSTREAM_MANIFEST = (Path(__file__).resolve().parents[1] / "cases" / "offsets-planner"
                     / "divergences" / "sglang-offsets-kernel.json")


def _manifest(tmp_path: Path, planner: str, fault_only: bool) -> Path:
    entry = {"case": "bs-0", "section": "6", "reason": "a read past the table, thrown away",
             "status": ["fail", "crash"]}
    if fault_only:
        entry["shows_as"] = "fault"
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"planner": planner, "description": "d", "divergences": [entry]}))
    return path


def _run(tmp_path: Path, planner: str, fault_only: bool):
    proc, _ = run_pytest(tmp_path, "--planner", planner, "--manifest",
                         str(_manifest(tmp_path, planner, fault_only)), "--case", "bs-0")
    doc = json.loads((tmp_path / "results.json").read_text())
    (result,) = [r for r in doc["results"] if r["planner"] == planner]
    return proc, result


def test_the_field_loads_and_only_fault_is_allowed(tmp_path):
    manifest, fault = load_manifest(_manifest(tmp_path, "python", True))
    assert fault is None
    assert find_divergence([manifest], "python", "bs-0", ()).fault_only is True
    manifest, _ = load_manifest(_manifest(tmp_path, "python", False))
    assert find_divergence([manifest], "python", "bs-0", ()).fault_only is False
    doc = json.loads((tmp_path / "m.json").read_text())
    doc["divergences"][0]["shows_as"] = "value"
    (tmp_path / "m.json").write_text(json.dumps(doc))
    manifest, fault = load_manifest(tmp_path / "m.json")
    assert manifest is None and fault.json_path == "$.divergences[0].shows_as"


def test_a_pass_where_no_fault_can_be_seen_is_declared_not_an_unexpected_pass(tmp_path):
    """The built-in ``python`` planner runs in process: nothing there sees a read outside a
    tensor, so a fault-only divergence it does not show is declared, with the reason."""
    proc, result = _run(tmp_path, "python", True)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (result["status"], result["observed"]) == ("declared", "pass")
    assert result["message"].startswith(
        "declared divergence (fail/crash), not observable in this run: it shows only as a fault, "
        "and this case ran without guard pages (an isolated worker's, on CPU tensors; CUDA runs, "
        "memcheck included, cannot see a read just past a tensor)")
    proc, result = _run(tmp_path, "python", False)  # the same entry without shows_as: strict
    assert proc.returncode == 1 and (result["status"], result["observed"]) == ("xpass", "pass")


def test_a_pass_where_faults_are_seen_stays_an_unexpected_pass(tmp_path):
    """An external planner runs isolated; on CPU tensors its inputs are fenced by guard pages,
    which see the read: a fault-only divergence that does not show there is fixed (strict)."""
    planner = "impls.offsets_planner.python_planner:launch"
    proc, result = _run(tmp_path, planner, True)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert (result["status"], result["observed"]) == ("xpass", "pass")
    assert "declared divergence (fail/crash) passed" in proc.stdout


def test_upstreams_read_past_the_table_is_declared_fault_only():
    doc = json.loads(UPSTREAM_MANIFEST.read_text())
    entry = next(d for d in doc["divergences"] if d.get("case") == "hazard-zero-extend-past-table")
    assert entry["shows_as"] == "fault" and "crash" in entry["status"]
