"""One table from pytest's outcome of a test item to the harness's words for it.

The terminal summary counts items by pytest's outcome names (its columns, :data:`OUTCOMES`); the
results file stores the matching status (:data:`STATUS`, the statuses of
:mod:`conformance.reporting.results_format`). :func:`outcome` decides which report of an item's
setup / call / teardown counts.
"""

from __future__ import annotations

import pytest

from conformance.reporting.results_format import JUDGED

PYTEST_OUTCOMES: tuple[str, ...] = ("passed", "failed", "xfailed", "xpassed", "skipped", "error")
"""pytest's own outcomes of an item."""
OUTCOMES: tuple[str, ...] = PYTEST_OUTCOMES + JUDGED
"""The terminal summary's columns: pytest's outcomes, then the statuses
:mod:`conformance.plugin.profiles` judges (spec section 8), each its own column."""
STATUS: dict[str, str] = {**dict(zip(PYTEST_OUTCOMES, ("pass", "fail", "xfail", "xpass", "skip",
                                                       "error"))),
                          **{name: name for name in JUDGED}}
"""Summary column -> the results file's status."""


def outcome(report: pytest.TestReport) -> str | None:
    """The item's outcome (one of :data:`OUTCOMES`) that ``report`` decides, counted once per
    item: the call's outcome, an xfail / xpass, a skip in setup, or an error in setup or teardown.
    None when this report decides nothing. A status that :mod:`conformance.plugin.profiles` judged
    (``report.conformance_status``) counts as its own column."""
    judged = getattr(report, "conformance_status", None)
    if judged in JUDGED and report.when == "call":
        return judged
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
