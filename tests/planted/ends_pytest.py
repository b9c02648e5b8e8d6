"""A pytest plugin (``-p tests.planted.ends_pytest``) that ends pytest's own process with
``_exit(3)`` (no teardown, no summary) when it is about to run a case of
``tests.planted.report_planners:configurable`` that ``REPORT_TEST_BUG`` names: ``exit-bs3`` (bs 3)
or ``exit-padding`` (bs 3 with the padding row 0). It stands for a planner that kills the harness,
which an external planner can no longer do (it runs in the isolation worker), so the report tests
can still show what a killed run leaves."""

from __future__ import annotations

import ctypes
import os

from conformance.corpus.arrays import evaluate


def pytest_runtest_call(item) -> None:
    if "configurable" not in getattr(item, "planner", "") or not hasattr(item, "case"):
        return
    bugs = set(os.environ.get("REPORT_TEST_BUG", "").split(","))
    rows = evaluate(item.case.steps[0].inputs.get("req_pool_indices", []))
    if len(rows) == 3 and ("exit-bs3" in bugs or ("exit-padding" in bugs and 0 in rows)):
        ctypes.CDLL(None)._exit(3)
