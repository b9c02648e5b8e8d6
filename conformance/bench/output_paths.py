"""Where a bench run under pytest may write: ``--bench-report`` and ``--benchmark-json`` are
refused in committed evidence at the session's start, as ``python -m conformance bench`` refuses
them (:func:`conformance.paths.evidence_fault`), so a reviewed file is never overwritten by a run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.paths import evidence_fault

OPTIONS = (("--bench-report", "bench_report"), ("--benchmark-json", "benchmark_json"))
"""(command-line option, its ``config.getoption`` name) of every file a bench run writes."""


def check(config: pytest.Config) -> None:
    """Refuse a bench output path in committed evidence.

    Raises:
        pytest.UsageError: ``--bench-report`` or ``--benchmark-json`` lies in committed evidence
            (the fault's one line).
    """
    for option, name in OPTIONS:
        path = config.getoption(name, None)
        fault = evidence_fault(option, Path(path)) if isinstance(path, (str, Path)) else None
        if fault:
            raise pytest.UsageError(fault)
