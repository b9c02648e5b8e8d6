"""Upstream's newest published release against the corpus with its shipped manifest, the way
``python -m conformance upstream RELEASE`` runs it (the wheel from the package index, the launcher
loaded unchanged, Triton's interpreter without a GPU). Skipped, with the reason, when the wheel is
not cached and the index cannot be reached. Done means: 0 failures, every result classified (spec
section 8: contract failures are declared divergences; project-rule and wrapper-decided elements
read differs / not-wrapper), and the fingerprint naming the release and the wheel's hashes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.reporting.results_format import BAD
from conformance.upstream.command import default_cache
from conformance.upstream.wheel import FetchError, fetch_wheel
from tests.test_upstream_release import NEWEST

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = DEFAULT_CASES_DIR / "divergences" / "sglang-offsets-kernel.json"
UPSTREAM = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"


@pytest.mark.slow
def test_newest_release_with_its_manifest(tmp_path):
    try:
        fetch_wheel(NEWEST, default_cache() / "wheels", timeout=300)
    except FetchError as exc:
        pytest.skip(f"sglang {NEWEST}'s wheel is not cached and the package index cannot be reached: {exc}")
    proc = subprocess.run([sys.executable, "-m", "conformance", "upstream", NEWEST, "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    doc = json.loads((tmp_path / NEWEST / "results.json").read_text())
    assert doc["complete"] is True
    bad = [f"{r['status']} {r['id']}" for r in doc["results"] if r["status"] in BAD]
    assert not bad, "\n".join(bad)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    mine = [r for r in doc["results"] if r["planner"] == UPSTREAM]
    declared = {r["case"] for r in mine if r["status"] == "declared"}
    listed = {d["case"] for d in json.loads(MANIFEST.read_text())["divergences"]}
    assert declared == listed
    assert {r["status"] for r in mine} <= {"pass", "declared", "differs", "not-wrapper"}
    loaded = doc["fingerprint"]["planners"][UPSTREAM]["upstream"]
    assert loaded["release"] == NEWEST and loaded["matches_record"] is True
    assert list(loaded["stand_ins"]) == ["sglang.kernels.jit.utils"]
    assert len(loaded["wheel_sha256"]) == 64
    for name in ("summary.md", "report.html"):
        assert (tmp_path / NEWEST / name).stat().st_size > 0
