"""``--planner-maxfail N``: stop running a planner's corpus cases once N of them failed.

Each later case of that planner is skipped before any of its code runs, with the reason (its
results status is ``skip``; its ``user_properties`` get ``("planner_maxfail", N)``), and the
summary counts those skips per planner. A failure is any failing report of a corpus item
(``fail``, ``crash``, ``timeout``, ``oob``, ``error``, a failing setup or teardown): the
planner is already not green, so the run answers "is it wrong?" without judging the rest.
Under pytest-xdist each worker counts its own failures (a planner may run up to N cases more
per worker).

``python -m conformance mutants`` passes ``--planner-maxfail 1``: one failing result kills a
mutant (:mod:`conformance.robustness.mutant_score`), and most die on one of their first cases.
"""

from __future__ import annotations

from collections import Counter

import pytest

from conformance.arg_types import positive_int

PROPERTY = "planner_maxfail"
"""The ``user_properties`` key of a case skipped by ``--planner-maxfail``."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("conformance").addoption(
        "--planner-maxfail", type=positive_int, default=None, metavar="N",
        help="skip a planner's later cases once N of its cases failed (>= 1; default: run "
             "every case)")


class PlannerMaxfail:
    """The failures per planner in this process, and the skips they caused."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.failed: Counter[str] = Counter()
        self.planners: dict[str, str] = {}  # nodeid -> planner, of the corpus items run here
        self.skipped: Counter[str] = Counter()  # planner -> cases skipped (all workers')

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        planner = getattr(item, "planner", None)
        if planner is None or not hasattr(item, "case"):
            return  # not a (case, planner) item
        self.planners[item.nodeid] = planner
        if self.failed[planner] >= self.limit:
            item.user_properties.append((PROPERTY, self.limit))
            pytest.skip(f"--planner-maxfail {self.limit}: {planner} failed "
                        f"{self.failed[planner]} case(s) before this one, which did not run")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        planner = self.planners.get(report.nodeid)
        if planner is not None and report.failed:
            self.failed[planner] += 1
        props = dict(report.user_properties)
        if report.skipped and PROPERTY in props:
            self.skipped[props.get("planner") or _planner_of(report.nodeid)] += 1

    def pytest_terminal_summary(self, terminalreporter, config) -> None:
        if hasattr(config, "workerinput") or not self.skipped:
            return
        for planner, count in sorted(self.skipped.items()):
            terminalreporter.write_line(
                f"--planner-maxfail {self.limit}: {count} case(s) of {planner} skipped after "
                f"its failures (not judged)", yellow=True)


def _planner_of(nodeid: str) -> str:
    """The planner of a corpus item's node id (``file::case[planner]``)."""
    return nodeid.rpartition("[")[2].rstrip("]") or nodeid


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("planner_maxfail")
    if limit is not None:
        config.pluginmanager.register(PlannerMaxfail(limit), "conformance-planner-maxfail")
