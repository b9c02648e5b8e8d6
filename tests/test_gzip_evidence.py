"""Committed GPU evidence is stored gzipped (reports/gpu/README.md): the report's readers take a
``.json.gz`` as they take the plain file, and a damaged one is a clear error, never a crash."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conformance.reporting import bench_figures
from conformance.reporting.compare import compare
from conformance.reporting.results_format import ResultsError, load_results

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "reports" / "gpu" / "2026-12-05" / "joint-repoll"


def _plain_copy(gz: Path, tmp_path: Path) -> Path:
    plain = tmp_path / gz.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    return plain


def test_results_read_gzipped_equal_plain(tmp_path):
    gz = RUN / "corpus-builtins.json.gz"
    doc = load_results(gz)
    assert doc == load_results(_plain_copy(gz, tmp_path))
    assert len(doc["results"]) == 711
    assert {r["status"] for r in doc["results"]} == {"pass"}


def test_bench_read_gzipped_equal_plain(tmp_path):
    gz = RUN / "bench.json.gz"
    rows, doc = bench_figures.load_bench(gz)
    rows_plain, doc_plain = bench_figures.load_bench(_plain_copy(gz, tmp_path))
    assert rows == rows_plain and doc == doc_plain
    assert rows, "the committed bench run has figures"


def test_cut_short_gzip_is_a_results_error(tmp_path):
    data = (RUN / "corpus-builtins.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ResultsError, match=r"cut\.json\.gz: cannot read: not a whole gzip file"):
        load_results(cut)


def test_plain_json_named_gz_is_a_results_error(tmp_path):
    fake = tmp_path / "plain.json.gz"
    fake.write_text(json.dumps({"format": "planner-conformance-results"}))
    with pytest.raises(ResultsError, match="not a whole gzip file"):
        load_results(fake)


def test_compare_reads_gzipped_runs():
    """baseline-r3 ran five planners, joint-repoll three of them: 711 results compared, none
    changed status (both runs are all-pass)."""
    model = compare(RUN.parent / "baseline-r3" / "corpus-builtins.json.gz", RUN / "corpus-builtins.json.gz")
    assert model["has_results"] and model["unchanged"] == 711
    assert model["newly_failing"] == [] and model["newly_passing"] == []
    assert sorted(model["planner_sets"]["only_old"]) == ["triton", "triton-bound"]

