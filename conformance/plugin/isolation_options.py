"""pytest options for crash isolation and the sanitizer (the mechanism is
:mod:`conformance.robustness.isolation`), registered from ``conformance/plugin/hooks.py``:

* ``--isolate``: every case runs in a child process, one per planner;
* ``--no-isolate``: no built-in planner's case does (not even a ``hazard`` case); an external
  planner's (``module:attr``) cases still do, always: its code never runs in pytest's process,
  where it could patch the judge (the summary says so when ``--no-isolate`` was given);
* by default an external planner's cases and the ``hazard`` cases run isolated, the built-ins'
  other cases in-process;
* ``--isolate-timeout S`` (default 60, must be > 0): seconds a case may take in the child;
* ``--isolate-linger S`` (default 2, >= 0): seconds each worker is left alone after its last
  case before it is told to end; a death in that time (a planner's thread that kills the process
  after the step) fails that case, and so does a write into the case's CPU storages since its last
  call, read once more at the end (:mod:`conformance.robustness.late_writes`,
  :mod:`conformance.plugin.worker_deaths`);
* ``--sandbox auto|namespace|none`` (default auto): whether the workers run in new user + PID +
  mount namespaces (:mod:`conformance.robustness.sandbox`): ``auto`` where the kernel allows it
  and the tensors live on the CPU (legacy CUDA IPC handles do not cross PID namespaces),
  ``namespace`` always (a worker that cannot have them does not start), ``none`` never. Unless
  ``none``, pytest's own process is made non-dumpable at configure time when the run collects
  the corpus. What the run had is the results fingerprint's ``sandbox`` and ``judge`` and the
  first line of the summary;
* ``--sanitize memcheck``: the children run under ``compute-sanitizer --tool memcheck``, every case
  isolated; a case during which the sanitizer reports an access error gets the status ``oob`` with
  the sanitizer's own lines. Without compute-sanitizer or a CUDA device the run stops at once with
  a usage error: never silently unsanitized.

A failed isolated item's report says ``crash``, ``timeout`` or ``oob``, the signal or exit code,
and the last lines the child printed (faulthandler's stack included); its ``user_properties`` get
``("status", ...)`` for the results file.
"""

from __future__ import annotations

import os
from functools import partial

import pytest
import torch

from conformance.arg_types import positive_seconds, seconds_at_least_zero
from conformance.engine.rerun import IMPORT_FIRST_ENV
from conformance.engine.runner import ConformanceFailure
from conformance.plugin import worker_deaths
from conformance.plugin.isolated_outcome import (RERUN_ISOLATED, carry_isolation_options,
                                                 failure_report, repr_failure, status_of)
from conformance.plugin.results_path import targets_corpus
from conformance.plugin.summary import note_lines
from conformance.robustness import probe_sandbox, sandbox, strays
from conformance.robustness.first_import import vouched
from conformance.robustness.isolated_case import case_request, judge_observed
from conformance.robustness.isolation import (
    DEFAULT_TIMEOUT,
    IsolationFailure,
    WorkerPool,
    should_isolate,
)
from conformance.robustness.sanitizer import (
    TOOLS,
    SanitizerUnavailable,
    find_sanitizer,
    sanitizer_prefix,
)
from conformance.robustness.worker_process import LINGER_SECONDS, WorkerUnavailable

SPECIAL = ("crash", "timeout", "oob")
"""Statuses an isolated case can get beyond pytest's outcomes (the results file's names)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance")
    group.addoption("--isolate", action="store_true",
                    help="run every case in a child process, one per planner (crash / timeout "
                         "isolation; the judge stays in this process)")
    group.addoption("--no-isolate", action="store_true",
                    help="run every case of a built-in planner in-process, hazard cases included "
                         "(an external planner's cases still run in a child, always)")
    group.addoption("--isolate-timeout", type=positive_seconds, default=DEFAULT_TIMEOUT,
                    metavar="S",
                    help=f"seconds an isolated case may run, > 0 (default {DEFAULT_TIMEOUT:g})")
    group.addoption("--isolate-linger", type=seconds_at_least_zero, default=LINGER_SECONDS,
                    metavar="S",
                    help="seconds each isolation worker is left alone after its last case before "
                         "it is told to end; a death in that time, or a write into the case's CPU "
                         "tensors since its last call, fails that case (default "
                         f"{LINGER_SECONDS:g}; 0: none)")
    group.addoption("--sandbox", choices=("auto", "namespace", "none"), default="auto",
                    help="run isolation workers in new user + PID + mount namespaces: auto (on "
                         "the CPU, where the kernel allows), namespace (required), none "
                         "(default auto)")
    group.addoption("--sanitize", choices=TOOLS, default=None, metavar="TOOL",
                    help="run the isolated children under compute-sanitizer --tool TOOL (memcheck); "
                         "an access error makes its case 'oob'; needs a CUDA device")


class Isolation:
    """The run's isolation: which items run in a child, the worker pool, the summary's note."""

    def __init__(self, config: pytest.Config) -> None:
        self.isolate = config.getoption("isolate")
        self.no_isolate = config.getoption("no_isolate")
        self.timeout = config.getoption("isolate_timeout")
        self.sanitize = config.getoption("sanitize")
        carry_isolation_options(config)  # every rerun line of this run carries them
        prefix = []
        if self.sanitize:
            if self.no_isolate:
                raise pytest.UsageError("--sanitize runs every case in a child: drop --no-isolate")
            try:
                prefix = sanitizer_prefix(self.sanitize, find_sanitizer())
            except SanitizerUnavailable as exc:
                raise pytest.UsageError(str(exc)) from None
            if not torch.cuda.is_available():
                raise pytest.UsageError(f"--sanitize {self.sanitize}: torch sees no CUDA device, "
                                        "and compute-sanitizer checks CUDA kernels only; no case "
                                        "was run unsanitized")
            self.isolate = True
            # The harness allocates every tensor the sanitized worker sees, and shares it through
            # CUDA IPC, which needs torch's caching allocator: an access that lands inside another
            # cached tensor is not memcheck's to see (the guard zones catch the near ones by value)
        try:  # checked here, where a bad name is a usage error, not a worker that dies at start
            vouched(os.environ.get(IMPORT_FIRST_ENV))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        option = config.getoption("sandbox")
        self.pool = WorkerPool(prefix, cuda=torch.cuda.is_available(), sandbox=option,
                               linger=config.getoption("isolate_linger"))
        # Another process of this uid cannot ptrace pytest nor open its /proc/<pid>/mem (one with
        # CAP_SYS_PTRACE here can: the workers' namespaces and dropped capabilities stop that one)
        if option == "none":
            self.judge_dumpable = "--sandbox none"
        elif not targets_corpus(config):  # the harness's own tests: debuggers still attach
            self.judge_dumpable = "not a corpus run"
        else:
            self.judge_dumpable = sandbox.non_dumpable()
        self.callers_children = frozenset(sandbox.children())  # a session run in-process
        if targets_corpus(config):  # a planner's orphans become this process's (strays.py)
            strays.adopt()
        self.config = config
        self.isolated_anyway: set[str] = set()  # external planners under --no-isolate
        self.cpu_planners: set[str] = set()  # isolated planners whose tensors live on the CPU
        self.started: set[str] = set()  # planners whose worker was spawned
        self.reported: dict[str, str] = {}  # planner -> sandbox, from the reports (xdist workers')

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        started = self.started
        for item in items:
            avail = getattr(item, "avail", None)
            if getattr(item, "engine", "corpus") != "corpus":  # plugin/one_call_items.py
                if self.sanitize and avail is not None and avail.available:
                    item.add_marker(pytest.mark.skip(reason=(
                        f"--sanitize {self.sanitize}: a one-call subject's case runs in pytest's "
                        "process, unsanitized; run that process under compute-sanitizer "
                        "instead (README, Subjects)")))
                continue
            if avail is None or not avail.available or not hasattr(item, "case"):
                continue  # the shared validator / allocator, a skipped planner, or not a case
            if should_isolate(item.case.tags, item.planner, self.isolate, self.no_isolate):
                if self.no_isolate:
                    self.isolated_anyway.add(item.planner)
                item.runtest = partial(self.run_isolated, item)
                # what can see a read just outside an input here (manifest.FAULT_DETECTORS)
                item.fault_detection = "guard pages" if avail.device == "cpu" else None
                if avail.device == "cpu":
                    self.cpu_planners.add(item.planner)
                item.repr_failure = partial(repr_failure, item.repr_failure)
                if item.planner not in started and not config.getoption("collectonly"):
                    started.add(item.planner)
                    self.pool.get(item.planner).spawn()  # imports while in-process cases run

    def run_isolated(self, item) -> None:
        """``runtest`` of an isolated item: the case runs in its planner's worker; the outcome
        becomes pass, ConformanceFailure or IsolationFailure (with its status property)."""
        case = item.case
        request = case_request(case, item.planner, item.avail.device)
        try:
            answer = self.pool.get(item.planner).run(request, self.timeout, bool(self.sanitize),
                                                     owner=item)
        except WorkerUnavailable as exc:
            if self.sanitize:  # the sanitizer refused: never go on unsanitized
                item.session.shouldstop = f"--sanitize {self.sanitize}: the sanitized worker " \
                                          "did not start"
            raise IsolationFailure(f"{case.id}[{item.planner}]  ({case.location})\n  {exc}") \
                from None
        worker = self.pool.get(item.planner)
        if worker.where:  # for the controller's fingerprint and summary under xdist
            item.user_properties.append(("sandbox", worker.where))
        status = status_of(answer)
        if status in ("observed", "state"):
            try:
                judge_observed(case, item.planner, answer)  # here, out of the planner's reach
            except ConformanceFailure as exc:
                if status == "state":  # both: what it computed and what it left behind
                    lines = "\n".join(f"    {c}" for c in answer["state_changed"])
                    raise ConformanceFailure(f"{exc}\n  and it changed process-global torch "
                                             f"state or its caller's tensor objects (the worker "
                                             f"was replaced):\n{lines}",
                                             exc.verdict) from None
                raise
            if status == "observed":
                return
        if status in SPECIAL or status == "case-error":
            item.user_properties.append(("status", "error" if status == "case-error" else status))
        item.user_properties.append((RERUN_ISOLATED, True))
        raise IsolationFailure(failure_report(item, status, answer))

    def sandbox_text(self) -> str | None:
        """What the isolated cases ran in, for the fingerprint and the summary: one worker's
        sandbox (``user+pid namespace`` / ``none: <why>``), or ``planner: ...`` parts when the
        workers differ; before any worker started, what they will be asked for; None when no case
        ran isolated."""
        got = {**self.reported, **self.pool.sandboxes()}
        if not got and not self.started:
            return None
        if not got:
            mode, why = self.pool.sandbox, self.pool.off_reason
            return f"none: {why}" if mode == "none" else f"{sandbox.NAMESPACE} (to be tried)"
        if len(set(got.values())) == 1:
            return next(iter(got.values()))
        return "; ".join(f"{p}: {w}" for p, w in sorted(got.items()))

    def judge_text(self) -> str:
        """Whether pytest's process is non-dumpable (``non-dumpable`` / ``dumpable: <why>``)."""
        return "non-dumpable" if self.judge_dumpable is None else f"dumpable: {self.judge_dumpable}"

    def pytest_runtest_logreport(self, report) -> None:
        props = dict(report.user_properties)
        if "sandbox" in props and "planner" in props:
            self.reported[props["planner"]] = props["sandbox"]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session):
        """After the last item: end the workers, each after its linger, and report a death after
        a case's last call as that case's failure (conformance/plugin/worker_deaths.py) while
        pytest still counts failures for its exit status."""
        result = yield
        worker_deaths.deliver(session.config, self.pool.close())
        return result

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        worker_deaths.from_node(self.config, node)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session) -> None:
        """End every worker (and, through its shepherd or its PID namespace, whatever it left
        running) before the results file's final write, so that nothing of a planner's outlives
        that write; then whatever of a planner outlived them, re-parented to this process
        (conformance/robustness/strays.py)."""
        self.pool.close()
        if targets_corpus(self.config):
            strays.kill_strays(spare=self.callers_children)

    def pytest_terminal_summary(self, terminalreporter, config) -> None:
        if hasattr(config, "workerinput"):
            return
        if self.pool.linger == 0 and (self.started or self.reported):
            for line in note_lines("isolation: --isolate-linger 0: a death or a write after the "
                                   "last case of each worker was not waited for (one before a "
                                   "worker's next case still fails the case before it)"):
                terminalreporter.write_line(line, yellow=True)
        for planner in sorted(self.isolated_anyway):
            for line in note_lines(f"isolation: {planner} ran in a child all the same "
                                   "(--no-isolate applies to built-in planners: an external "
                                   "planner's code never runs in this process)"):
                terminalreporter.write_line(line, yellow=True)
        if self.sanitize:
            terminalreporter.write_line(f"sanitizer: every case ran under compute-sanitizer "
                                        f"--tool {self.sanitize}")
            for planner in sorted(self.cpu_planners):
                for line in note_lines(f"sanitizer: {planner} runs on the CPU, where "
                                       "compute-sanitizer checks nothing"):
                    terminalreporter.write_line(line, yellow=True)

    def pytest_unconfigure(self, config) -> None:
        self.pool.close()
        if targets_corpus(config):  # a run stopped before its session finished, too
            strays.kill_strays(spare=self.callers_children)


@pytest.hookimpl(tryfirst=True)  # before the plugin's configure probes the external planners
def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Isolation(config), "conformance-isolation")
    # the probe imports the planner's module: its top level runs in the workers' sandbox too
    probe_sandbox.use_for_probes(config.getoption("sandbox"), torch.cuda.is_available())
