"""What a planner did after its case's last call, reported as that case's failure.

A planner can leave a thread behind that kills its process once the harness has its answers (in a
server the process dies after the step), or that writes into the case's tensors. The worker
records such a death (:class:`conformance.robustness.worker_process.WorkerProcess`) or write
(:mod:`conformance.robustness.late_writes`) as its last case's, found before the next case begins
or while the pool waits out its linger at the end of the run. This module turns each into a
``teardown`` report of that case, outcome failed, status ``crash`` (a death), ``oob`` (a write
outside an argument's memory) or ``fail`` (a write inside it): the case's pass stays in the
terminal's progress, its error follows it, the results file keeps that status (a teardown error
replaces a pass, ``RANK`` of :mod:`conformance.reporting.results_format`), and pytest exits 1.

Where the report is made:
* one process: after the run loop (:func:`deliver`, from a wrapper of ``pytest_runtestloop``),
  so that pytest counts the failure in its exit status;
* a pytest-xdist worker may only report on the item it runs, so its deaths travel in
  ``config.workeroutput`` (:data:`KEY`) and the controller reports them when that node goes down
  (:func:`from_node`, from ``pytest_testnodedown``).
"""

from __future__ import annotations

import pytest

from conformance.corpus.text import terminal_text
from conformance.plugin.isolated_outcome import RERUN_ISOLATED, isolated_rerun

AFTER = "after_last_call"
"""The user property (and results-file field) that names what the planner did after the case's
last call: ``death``, ``hang``, ``write-inside``, ``write-outside`` or ``state``."""
KEY = "conformance_worker_deaths"
"""The ``config.workeroutput`` key under which a pytest-xdist worker hands its deaths over."""


def record(death: dict) -> dict:
    """The data of one death or late write (``owner``: the pytest item whose case ran last,
    ``status``, ``cause``, ``reason``, ``tail``, ``planner``) as plain values: ``nodeid``, ``location``,
    ``user_properties``, ``text``."""
    item, status = death["owner"], death.get("status", "crash")
    case = item.case
    after = {"crash": "in a server the process dies (or hangs) after the step",
             "oob": "in a server it lands in the neighbouring allocation",
             "fail": "in a server it lands in the plan while the next step reads it"}[status]
    if death.get("cause") == "state":
        after = "in a server its caller's process state changes under it after the step"
    # the header every failure report has (the case, then its description): the report's
    # one-line summary of a result without a verdict is the line after it (report.first_detail)
    lines = [f"{case.id}[{item.planner}]  ({case.location})", f"  {case.description}",
             f"  {status} (isolated): {death['reason']}; {after}",
             "  the case's outputs were judged before; this failure came after its last call"]
    if death.get("tail"):
        lines += ["  last lines of output:"] + ["    " + ln for ln in death["tail"].splitlines()]
    lines.append(f"  rerun: {isolated_rerun(item)}")
    props = [(k, v) for k, v in item.user_properties if k not in ("status", AFTER)]
    return {"nodeid": item.nodeid, "location": list(item.location),
            "user_properties": [*props, ("status", status), (RERUN_ISOLATED, True),
                                (AFTER, death.get("cause") or "death")],
            "text": terminal_text("\n".join(lines))}


def report(config: pytest.Config, data: dict, node=None) -> None:
    """Send one death's ``teardown`` report (``data`` from :func:`record`) to every
    ``pytest_runtest_logreport`` hook (terminal, results file, junit, the summary's tally)."""
    rep = pytest.TestReport(data["nodeid"], tuple(data["location"]), {}, "failed", data["text"],
                            "teardown", user_properties=[tuple(p) for p in
                                                         data["user_properties"]])
    if node is not None:
        rep.node = node  # as pytest-xdist sets it on the reports its workers send
    config.hook.pytest_runtest_logreport(report=rep)


def deliver(config: pytest.Config, deaths: list[dict]) -> None:
    """Report ``deaths`` (:meth:`conformance.robustness.isolation.WorkerPool.close`'s) now, or,
    on a pytest-xdist worker, hand them to the controller."""
    records = [record(d) for d in deaths]
    if hasattr(config, "workeroutput"):
        config.workeroutput[KEY] = config.workeroutput.get(KEY, []) + records
        return
    for data in records:
        report(config, data)


def from_node(config: pytest.Config, node) -> None:
    """On the controller: report the deaths a pytest-xdist worker handed over."""
    for data in (getattr(node, "workeroutput", None) or {}).get(KEY, []):
        report(config, data, node)
