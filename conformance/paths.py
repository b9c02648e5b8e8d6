"""Where things are: the repository's folders and the default files, written once.

A leaf module: it imports nothing from the harness, so every folder of :mod:`conformance` may use it.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The checkout (or install) root: ``cases/``, ``reports/`` and ``conformance/`` sit below it."""
DEFAULT_CASES_DIR = REPO_ROOT / "cases"
"""The corpus that ``pytest conformance/`` runs when no ``--cases`` is given."""
CASE_SCHEMA_PATH = DEFAULT_CASES_DIR / "schema.json"
"""JSON Schema of a case file (``cases/README.md`` describes it)."""
DIVERGENCES_DIRNAME = "divergences"
"""The folder of a corpus (``cases/divergences/``) that holds known-divergence manifests, not cases."""
DIVERGENCES_SCHEMA_PATH = DEFAULT_CASES_DIR / DIVERGENCES_DIRNAME / "schema.json"
"""JSON Schema of a known-divergence manifest (``cases/divergences/README.md``)."""
FOUND_CASES_DIR = DEFAULT_CASES_DIR / "found"
"""Where ``python -m conformance fuzz`` writes the divergences it found, for review."""
RESULTS_SCHEMA_PATH = REPO_ROOT / "reports" / "results.schema.json"
"""JSON Schema of a results file (``reports/README.md``)."""
RESULTS_RELPATH = Path("reports/out/results.json")
"""Default results file of a ``pytest conformance/`` run, relative to pytest's rootdir."""
DEFAULT_RESULTS = REPO_ROOT / RESULTS_RELPATH
"""That file under this checkout: what ``python -m conformance report`` reads by default."""
DEFAULT_REPORT_HTML = REPO_ROOT / "reports" / "report.html"
"""Where ``python -m conformance report`` writes its page by default."""
DEFAULT_COMPARE_HTML = REPO_ROOT / "reports" / "compare.html"
"""Where ``python -m conformance report --compare`` writes its page by default."""
DEFAULT_BENCH_JSON = REPO_ROOT / "reports" / "out" / "bench.json"
"""Where ``python -m conformance bench`` writes pytest-benchmark's JSON by default."""
BENCH_DIR = REPO_ROOT / "conformance" / "bench"
"""The benchmark suite's folder (opt-in: collected only when named)."""
