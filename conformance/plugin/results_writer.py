"""One machine-readable results file per ``pytest conformance/`` run.

:class:`ResultsWriter`, registered by :mod:`conformance.plugin.hooks`, records every (case, planner) item
from its test reports and writes ``reports/out/results.json`` (``--results PATH``), the format of
``reports/results.schema.json``: per item the status (``pass``, ``fail``, ``xfail``, ``xpass``,
``skip``, ``error``, ``crash``, ``timeout``), the ConformanceFailure text when it failed, the
rerun command, the case's tags, source, file and expected error ids, the duration; and the run's
fingerprint (commit, date, host, GPU, library versions, each planner's mode).

* Under pytest-xdist only the controller writes: workers attach the case's metadata to
  ``report.user_properties`` (``case_meta``), which travel with the reports.
* Writes are atomic (a temporary file in the same folder, then :func:`os.replace`) and incremental:
  at session start (a run of the corpus replaces the previous run's file before collecting), after
  collection, then every ``--results-every`` results or :data:`FLUSH_SECONDS`, and at the end; a
  run killed midway leaves a valid file of what finished (``"complete": false``). ``complete`` is
  true only when pytest exits 0 or 1 with a result for every collected item.
* ``crash`` / ``timeout`` / ``oob`` (compute-sanitizer) come from crash isolation, ``error`` also
  from a case whose inputs cannot be built: a ``("status", "crash")`` user property or a
  ``conformance_status`` report attribute; a pytest-xdist worker that died mid-item is a ``crash``.
"""

from __future__ import annotations

import datetime
import json
import re
import time
from pathlib import Path

import pytest

from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import case_digest
from conformance.corpus.text import kept
from conformance.plugin.junit import label_testcase
from conformance.plugin.worker_deaths import AFTER
from conformance.plugin.case_folders import rerun_folders
from conformance.plugin.isolated_outcome import ISOLATE, RERUN_ISOLATED
from conformance.corpus.corpus_subject import section6 as _section6
from conformance.reporting.results_format import FINISHED_EXIT_CODES, FORMAT, JUDGED, RANK, VERSION
from conformance.reporting.results_format import write_json_atomic
from conformance.corpus.entries import LOAD, PSEUDO_PLANNERS
from conformance.plugin.outcomes import STATUS, outcome
from conformance.plugin.one_call_items import corpus_planner_names
from conformance.corpus.corpus_subject import registry as _registry
from conformance.engine.rerun import (RUN_ENVIRONMENT, RUN_SETTINGS, case_dir_arg,
                                      list_cases_command, rerun_command)
from conformance.engine.inputs import poison_seed
from conformance.fingerprint import run_fingerprint
from conformance.plugin.results_path import (DEFAULT_PATH, default_results_path, is_corpus_item,
                                             not_a_results_path, targets_corpus)

chosen_planners = _registry.chosen_planners
out_of_contract = _section6.out_of_contract

FLUSH_SECONDS = 3.0
_NODE = re.compile(r"^(?P<file>[^:]*)::(?P<case>.*)\[(?P<planner>[^\[\]]*)\]$")


def add_results_options(group) -> None:
    """Add ``--results PATH`` and ``--results-every N`` to the plugin's option group."""
    group.addoption("--results", metavar="PATH", type=Path, default=None,
                    help=f"results file to write (default: {DEFAULT_PATH} under the rootdir, or "
                         "under the current directory when the harness is an installed wheel)")
    group.addoption("--results-every", metavar="N", type=int, default=50,
                    help="rewrite the results file after every N results (default 50; also "
                         f"every {FLUSH_SECONDS:g} s and at the end)")


def case_meta(item: pytest.Item) -> dict | None:
    """The metadata of a corpus item that the results file keeps, or None for other items (an
    item of another engine gives its own: ``item.case_meta()``)."""
    own = getattr(item, "case_meta", None)
    if callable(own):
        return own()
    case = getattr(item, "case", None)
    if case is not None:
        errors = sorted({s.error["id"] for s in case.steps if s.error})
        return {"case": case.id, "description": case.description, "tags": list(case.tags),
                "source": case.source, "file": display_path(case.path),
                "json_path": case.json_path, "case_digest": case_digest(case), "entry": case.entry,
                "error_ids": errors, "rerun": rerun_command(case.id, item.planner, case_dir_arg(case)),
                "pins": case.pins, "out_of_contract": list(out_of_contract(case))}
    error = getattr(item, "error", None)
    if error is not None and hasattr(error, "json_path"):
        # the run's own folder options up to the one that holds the file, as the run gave them
        # (--extra-cases stays --extra-cases): a duplicate id needs the earlier file too
        cases, extra = rerun_folders(item.config, error.path)
        return {"case": error.case_id, "description": f"bad case file: {error}", "tags": [],
                "source": None, "file": display_path(error.path), "json_path": error.json_path,
                "entry": None, "error_ids": [],
                "rerun": list_cases_command(cases, extra=extra)}
    return None


def _list_command(config: pytest.Config) -> str:
    """The command that lists the cases of every folder of the run, with the run's own folder
    options (:func:`conformance.plugin.case_folders.rerun_folders`)."""
    cases, extra = rerun_folders(config)
    return list_cases_command(cases, extra=extra)


def _status(report: pytest.TestReport, props: dict) -> str | None:
    """The item's status from this report, or None when this report does not decide it."""
    judged = getattr(report, "conformance_status", None)  # conformance.plugin.profiles
    if judged in (*JUDGED, "xpass") and report.when == "call":
        return judged
    special = props.get("status") or judged
    if special in ("crash", "timeout", "oob", "error", "fail") and report.failed:
        return special  # "fail" only from a late write (conformance/plugin/worker_deaths.py)
    if report.failed and "crashed while running" in report.longreprtext:
        return "crash"  # pytest-xdist: the worker died in this item
    decided = outcome(report)
    return None if decided is None else STATUS[decided]


def _message(report: pytest.TestReport) -> str | None:
    """The item's message as the results file keeps it: cut to MAX_KEPT_MESSAGE characters
    (conformance/corpus/text.py)."""
    return kept(_whole_message(report))


def _whole_message(report: pytest.TestReport) -> str | None:
    if getattr(report, "conformance_message", None):  # conformance.plugin.profiles
        return report.conformance_message
    if report.skipped:
        if hasattr(report, "wasxfail"):
            return report.wasxfail or None
        longrepr = report.longrepr
        return longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    if report.failed:  # without pytest-xdist's "[gw0] linux -- Python 3.x ..." header line
        return re.sub(r"\A\[gw\d+\] [^\n]*\n", "", report.longreprtext)
    return getattr(report, "wasxfail", None) or None  # an xpass names its declared reason


class ResultsWriter:
    """Collects one result per (case, planner) from test reports and writes the results file.

    On a pytest-xdist worker it only tags items with their case metadata; the controller (or a
    plain run) writes.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.worker = hasattr(config, "workerinput")  # only tags items; the controller writes
        self.off = self.worker or config.getoption("collectonly")
        self.error: str | None = None
        given = config.getoption("results")
        self.path = given if given is not None else default_results_path(config)
        cases = [Path(p) for p in config.getoption("cases") or []]
        fault = None if self.off else not_a_results_path(self.path, cases)
        if fault:
            raise pytest.UsageError(f"--results {self.path}: {fault}")
        self.every = max(1, config.getoption("results_every"))
        self.results: dict[str, dict] = {}
        self.collected: int | None = None
        self.fingerprint: dict | None = None
        self.started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.pending, self.last_write = 0, 0.0

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Replace the previous run's file at once (``complete: false``, no results) when this run
        targets the corpus: a run that aborts at collection, or is killed before its first
        result, never leaves the previous run's file to be reported as this one's."""
        if not self.off and targets_corpus(self.config):
            self.write()

    # -- workers and plain runs: tag the items ------------------------------------------------
    @pytest.hookimpl(trylast=True)  # after -k / -m deselection: count what will run
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            meta = case_meta(item)
            if meta is not None:
                item.user_properties.append(("case_meta", meta))
        if not self.off:
            self._collected(sum(1 for i in items if is_corpus_item(i.nodeid)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        if self.collected is None and not self.off:
            self._collected(sum(1 for i in ids if is_corpus_item(i)))

    def _collected(self, count: int) -> None:
        if count:
            self.collected = count
            self.write()

    # -- the controller: record and write -----------------------------------------------------
    @pytest.hookimpl(tryfirst=True)  # before --junitxml writes the testcase (label_testcase)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.off:
            return
        props = dict(report.user_properties)
        planner = props.get("planner")
        match = _NODE.match(report.nodeid)
        if planner is None and not (match and is_corpus_item(report.nodeid)):
            return  # not a corpus item (the harness's own tests)
        meta = props.get("case_meta") or {}
        label_testcase(self.config, report, meta)
        planner = planner or match.group("planner")
        case = props.get("case") or meta.get("case") or (match and match.group("case"))
        key = report.nodeid
        entry = self.results.get(key)
        if entry is None:
            entry = self.results[key] = {
                "id": report.nodeid.split("::", 1)[-1], "case": case, "planner": planner,
                "status": None, "duration": 0.0, "message": None,
                "rerun": meta.get("rerun") or (
                    _list_command(self.config) if planner == LOAD
                    else rerun_command(case or "?", planner)),
                **{k: meta.get(k) for k in ("description", "file", "json_path", "entry",
                                            "source", "case_digest")},
                "tags": meta.get("tags", []), "error_ids": meta.get("error_ids", []),
                "pins": meta.get("pins"), "out_of_contract": meta.get("out_of_contract", []),
                "observed": None, "divergence": None, "worker": _worker_id(report),
                "verdict": None, "subject": meta.get("subject"), AFTER: None,
            }
        entry["duration"] = round(entry["duration"] + report.duration, 6)
        status = _status(report, props)
        if status is not None and (entry["status"] is None
                                   or RANK[status] > RANK[entry["status"]]):
            entry["status"], entry["message"] = status, _message(report)
            entry["observed"] = getattr(report, "conformance_observed", None) or status
            entry["divergence"] = getattr(report, "conformance_divergence", None)
            verdict = getattr(report, "conformance_verdict", None)  # conformance.plugin.profiles
            entry["verdict"] = json.loads(verdict) if verdict else None
            entry[AFTER] = props.get(AFTER)  # conformance.plugin.worker_deaths
            if props.get(RERUN_ISOLATED) and not entry["rerun"].endswith(ISOLATE):
                entry["rerun"] += ISOLATE  # as the failure's own rerun line says
        if report.when == "teardown" or status in ("crash", "timeout", "oob"):
            self.pending += 1
            if self.pending >= self.every or time.monotonic() - self.last_write > FLUSH_SECONDS:
                self.write()

    def document(self, *, complete: bool = False, exitstatus: int | None = None) -> dict:
        """The results file's contents now (finished items only, in completion order)."""
        if self.fingerprint is None:
            names = sorted({e["planner"] for e in self.results.values() if not e.get("subject")}
                           | set(corpus_planner_names(self.config, tuple(chosen_planners(None)))))
            names = [n for n in names if n not in PSEUDO_PLANNERS]
            self.fingerprint = run_fingerprint(names, _registry.availability, _registry.source_digest)
            self.fingerprint["poison_seed"] = poison_seed()  # the run's fills (reruns set it)
            # what an external planner was judged on (built-ins: every rule; spec section 8)
            self.fingerprint["profile"] = self.config.getoption("profile", None)
        isolation = self.config.pluginmanager.get_plugin("conformance-isolation")
        if isolation is not None:  # what the isolated cases ran in (conformance.plugin.isolation_options)
            self.fingerprint["sandbox"] = isolation.sandbox_text()
            self.fingerprint["judge"] = isolation.judge_text()
        results = [e for e in self.results.values() if e["status"] is not None]
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        return {"format": FORMAT, "version": VERSION, "complete": complete,
                "exitstatus": exitstatus, "started": self.started, "updated": now,
                "args": list(self.config.invocation_params.args),
                "environment": {**RUN_ENVIRONMENT, **RUN_SETTINGS}, "collected": self.collected,
                "fingerprint": self.fingerprint, "results": results}

    def write(self, **kwargs) -> None:
        """Write the file now (atomically)."""
        if self.off or self.error:
            return
        try:
            write_json_atomic(self.path, self.document(**kwargs))
        except OSError as exc:  # say so at the end; never stop the run for it
            self.error = f"cannot write {self.path}: {exc.strerror or exc}"
        self.pending, self.last_write = 0, time.monotonic()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.off or (not self.results and not self.collected
                        and not targets_corpus(self.config)):
            return
        finished = [e for e in self.results.values() if e["status"] is not None]
        whole = (int(exitstatus) in FINISHED_EXIT_CODES and self.collected is not None
                 and len(finished) >= self.collected)
        self.write(complete=whole, exitstatus=int(exitstatus))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.error:
            terminalreporter.write_line(f"conformance results: {self.error}", red=True)
        elif not self.off and (self.results or self.collected):
            terminalreporter.write_line(f"conformance results: {display_path(self.path)}")


def _worker_id(report: pytest.TestReport) -> str | None:
    """The pytest-xdist worker (``gw0``, ...) that sent ``report`` to the controller, else None."""
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    return getattr(gateway, "id", None)
