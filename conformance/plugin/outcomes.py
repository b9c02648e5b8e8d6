"""One table from pytest's outcome of a test item to the harness's words for it.

The terminal summary counts items by pytest's outcome names (its columns, :data:`OUTCOMES`); the
results file stores the matching status (:data:`STATUS`, the statuses of
:mod:`conformance.reporting.results_format`). :func:`outcome` decides which report of an item's
setup / call / teardown counts.
"""

from __future__ import annotations

import pytest

OUTCOMES: tuple[str, ...] = ("passed", "failed", "xfailed", "xpassed", "skipped", "error")
"""pytest's outcome of an item, in the terminal summary's column order."""
STATUS: dict[str, str] = dict(zip(OUTCOMES, ("pass", "fail", "xfail", "xpass", "skip", "error")))
"""pytest outcome -> the results file's status."""


def outcome(report: pytest.TestReport) -> str | None:
    """The item's outcome (one of :data:`OUTCOMES`) that ``report`` decides, counted once per
    item: the call's outcome, an xfail / xpass, a skip in setup, or an error in setup or teardown.
    None when this report decides nothing."""
    if hasattr(report, "wasxfail") and report.when in ("setup", "call"):
        if report.skipped:
            return "xfailed"
        return "xpassed" if report.when == "call" else None
    if report.when == "call":
        return report.outcome
    if report.when == "setup" and report.skipped:
        return "skipped"
    if report.failed:  # an error in setup or teardown
        return "error"
    return None
