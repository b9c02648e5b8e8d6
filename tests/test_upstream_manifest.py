"""Upstream's own launcher against the corpus with its shipped manifest: runs only where
``sglang`` is importable (a local copy of upstream's files, never committed; see
reports/upstream/PROVENANCE.md). Done means: no result the harness or the manifest leaves
unclassified (spec section 8: contract failures are declared divergences, project-rule and
wrapper cases are reported as such)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from conformance.reporting.results_format import BAD
from tests.subproc import run_pytest

UPSTREAM = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
MANIFEST = Path(__file__).resolve().parent.parent / "cases" / "divergences" / \
    "sglang-offsets-kernel.json"


def test_upstream_launcher_with_its_manifest(tmp_path, monkeypatch):
    module = pytest.importorskip(UPSTREAM.split(":")[0])
    root = Path(module.__file__).resolve().parents[5]  # sglang/kernels/ops/kv_canary/plan/x.py
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    if not torch.cuda.is_available():
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    proc, _ = run_pytest(tmp_path, "--planner", UPSTREAM, "--isolate", timeout=1800)
    doc = json.loads((tmp_path / "results.json").read_text())
    mine = [r for r in doc["results"] if r["planner"] == UPSTREAM]
    bad = [f"{r['status']} {r['id']}" for r in doc["results"] if r["status"] in BAD]
    assert not bad, "\n".join(bad)
    assert proc.returncode == 0, proc.stdout[-3000:]
    declared = {r["case"] for r in mine if r["status"] == "declared"}
    listed = {d["case"] for d in json.loads(MANIFEST.read_text())["divergences"]}
    assert declared == listed
    assert {r["status"] for r in mine} <= {"pass", "declared", "differs", "not-wrapper"}
    assert sum(r["status"] == "not-wrapper" for r in mine) == 6
