"""``--planner-maxfail N``: stop running a planner's corpus cases once N of them failed.

Each later case of that planner is skipped before any of its code runs, with the reason (its
results status is ``skip``; its ``user_properties`` get ``("planner_maxfail", N)``), and the
summary counts those skips per planner. A failure is any failing report of a corpus item
(``fail``, ``crash``, ``timeout``, ``oob``, ``error``, a failing setup or teardown): the
planner is already not green, so the run answers "is it wrong?" without judging the rest.
A case counts once however many of its reports fail (a call and its teardown both failing is
one failed case). Under pytest-xdist each worker counts its own failures (a planner may run up
to N cases more per worker).

``python -m conformance mutants`` passes ``--planner-maxfail 1``: one failing result kills a
mutant (:mod:`conformance.robustness.mutant_score`), and none runs the cases after its first
failure (some die on their first case, others after 130-180 of 197).
"""

from __future__ import annotations

from collections import Counter, defaultdict

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
        self.failed: defaultdict[str, set[str]] = defaultdict(set)  # planner -> failed case ids
        self.skipped: Counter[str] = Counter()  # planner -> cases skipped (all workers')

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        planner = getattr(item, "planner", None)
        if planner is None or not hasattr(item, "case"):
            return  # not a (case, planner) item
        if len(self.failed[planner]) >= self.limit:
            item.user_properties.append((PROPERTY, self.limit))
            pytest.skip(f"--planner-maxfail {self.limit}: {planner} failed "
                        f"{len(self.failed[planner])} case(s) before this one, which did not run")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)  # a case item's "planner" (plugin.corpus_items)
        planner = props.get("planner")
        if planner is None:
            return
        if report.failed:
            self.failed[planner].add(report.nodeid)
        elif report.skipped and PROPERTY in props:
            self.skipped[planner] += 1

    def pytest_terminal_summary(self, terminalreporter, config) -> None:
        if hasattr(config, "workerinput") or not self.skipped:
            return
        for planner, count in sorted(self.skipped.items()):
            terminalreporter.write_line(
                f"--planner-maxfail {self.limit}: {count} case(s) of {planner} skipped after "
                f"its failures (not judged)", yellow=True)


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("planner_maxfail")
    if limit is not None:
        config.pluginmanager.register(PlannerMaxfail(limit), "conformance-planner-maxfail")
