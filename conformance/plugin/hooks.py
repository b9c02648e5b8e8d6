"""The pytest front end: one test per (case, planner), selection options and the summary table.

Loaded by the repository's root ``conftest.py``. ``pytest conformance/`` collects, from
``conformance/test_corpus.py``, one item per (case, planner) named ``case-id[planner]``:

* ``--planner NAME`` (repeatable): built-in name or ``module.path:callable``; default every
  built-in planner, the unavailable ones skipped with their reason.
* ``--case ID`` (repeatable): exact case ids; ``-k`` works as usual.
* ``--cases DIR`` (repeatable): case directories; default the repository's ``cases/``.

Cases with ``"entry": "validator"`` / ``"allocate"`` exercise the shared validator / allocator and
run once, as ``case-id[validator]`` / ``case-id[allocator]``. A faulty case file fails as one item
``<file>[load]`` naming the file and JSON path; every other case still runs. Works under
``pytest -n auto`` (pytest-xdist): collection is deterministic and the summary is tallied from
reports on the controller.
"""

from __future__ import annotations

import fnmatch
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from tabulate import tabulate

from conformance.plugin import gpu_pinning  # noqa: F401 - first: pins an xdist worker's GPU before CUDA use
from conformance.corpus.loader import Case, CaseFileError, display_path, load_corpus
from conformance.plugin.results_writer import ResultsWriter, add_results_options
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from conformance.reporting.results_format import JUDGED
from impls.registry import (
    availability,
    builtin_names,
    get_planner,
)

pytest_plugins = ["conformance.robustness.isolation",  # --isolate, --no-isolate, --isolate-timeout
                  "conformance.plugin.profiles",  # --profile, --manifest: pins and known divergences
                  "conformance.bench.plugin"]  # conformance/bench: opt-in benchmarks, --bench-*
ANCHOR = "test_corpus.py"
SHARED = {"validator": "validator", "allocate": "allocator"}
OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "skipped", "error", *JUDGED)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "offsets-planner conformance")
    group.addoption("--planner", action="append", default=[], metavar="NAME",
                    help="planner to run: python, triton, numba-cuda or module.path:callable "
                         "(repeatable; default: every built-in planner)")
    group.addoption("--case", action="append", default=[], metavar="ID",
                    help="run only this case id (repeatable)")
    group.addoption("--cases", action="append", default=[], metavar="DIR", type=Path,
                    help="directory of case files (repeatable; default: the repo's cases/)")
    add_results_options(group)


def _planner_names(config: pytest.Config) -> list[str]:
    return config.getoption("planner") or list(builtin_names())


def pytest_configure(config: pytest.Config) -> None:
    for name in config.getoption("planner"):
        a = availability(name)
        if not a.available and (":" in name or name not in builtin_names()):
            raise pytest.UsageError(a.reason)
    config.pluginmanager.register(Summary(), "conformance-summary")
    config.pluginmanager.register(ResultsWriter(config), "conformance-results")


def pytest_pycollect_makemodule(module_path: Path, parent):
    if module_path.name == ANCHOR and module_path.parent == Path(__file__).parent.parent:
        return CorpusFile.from_parent(parent, path=module_path)
    return None


class CorpusFile(pytest.File):
    """Collects the JSON corpus in place of ``conformance/test_corpus.py``."""

    def collect(self):
        config = self.config
        cases, errors = load_corpus([p.resolve() for p in config.getoption("cases")] or None)
        wanted = set(config.getoption("case"))
        for error in errors:
            if not wanted or error.case_id in wanted:
                name = f"{display_path(error.path)}@{error.json_path}[load]"
                yield CaseFileItem.from_parent(self, name=name, error=error)
        for missing in sorted(wanted - {case.id for case in cases}):
            faults = "".join(f"\n  {error}" for error in errors)
            text = f"--case {missing}: no case has this id" + (
                f"; these case files could not be loaded:{faults}" if faults else "")
            yield CaseFileItem.from_parent(self, name=f"{missing}[missing]", text=text)
        targets = [(name, availability(name)) for name in _planner_names(config)]
        for case in cases:
            if wanted and case.id not in wanted:
                continue
            if case.entry in SHARED:
                yield CaseItem.from_parent(self, name=f"{case.id}[{SHARED[case.entry]}]",
                                           case=case, planner=SHARED[case.entry], avail=None)
                continue
            for name, avail in targets:
                yield CaseItem.from_parent(self, name=f"{case.id}[{name}]", case=case,
                                           planner=name, avail=avail)


class CaseFileItem(pytest.Item):
    """A case file (or one case in it) that could not be loaded, or a ``--case`` id not found."""

    def __init__(self, *, error: CaseFileError | None = None, text: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.text = text or f"bad case file: {error}"
        self.user_properties.append(("planner", "load"))

    def runtest(self) -> None:
        raise ConformanceFailure(self.text)

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value)

    def reportinfo(self):
        return (self.error.path if self.error else self.path), None, self.name


class CaseItem(pytest.Item):
    """One case on one planner."""

    def __init__(self, *, case: Case, planner: str, avail, **kwargs) -> None:
        super().__init__(**kwargs)
        self.case, self.planner, self.avail = case, planner, avail
        self.user_properties.append(("planner", planner))
        self.user_properties.append(("case", case.id))
        self.extra_keyword_matches.update(case.tags)  # `-k hazard` selects by tag
        if avail is not None and not avail.available:
            self.add_marker(pytest.mark.skip(reason=f"{planner}: {avail.reason}"))
        for xfail in case.xfail:
            if fnmatch.fnmatchcase(planner, xfail["planner"]):
                self.add_marker(pytest.mark.xfail(reason=xfail["reason"], strict=True,
                                                  raises=ConformanceFailure))

    def runtest(self) -> None:
        if self.avail is None:  # the shared validator or allocator
            target = Target(self.planner, None, resolve_device("cpu"))
        else:
            target = Target(self.planner, get_planner(self.planner),
                            resolve_device(self.avail.device))
        run_case(self.case, target)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.case.path, None, f"{self.case.id}[{self.planner}]"


def _outcome(report: pytest.TestReport) -> str | None:
    """pass/fail/xfail/xpass/skip/error of a report, or the status conformance.plugin.profiles
    judged, counted once per item (None otherwise)."""
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


class Summary:
    """Tallies outcomes per planner from test reports (on the controller under xdist) and prints
    the table at the end of the run."""

    def __init__(self) -> None:
        self.tally: dict[str, Counter] = defaultdict(Counter)
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        planner = dict(report.user_properties).get("planner")
        outcome = _outcome(report)
        if planner is not None and outcome is not None:
            self.tally[planner][outcome] += 1
        if planner is not None:
            self.seconds[planner] += report.duration

    def rows(self) -> list[list]:
        """One row per planner: name, mode, a count per outcome, seconds."""
        rows = []
        for planner in sorted(self.tally, key=lambda p: (p in SHARED.values() or p == "load", p)):
            if planner in SHARED.values():
                mode = "shared"
            elif planner == "load":
                mode = "-"
            else:
                mode = availability(planner).mode or "unavailable"
            counts = self.tally[planner]
            rows.append([planner, mode, *[counts.get(o, 0) for o in OUTCOMES],
                         f"{self.seconds[planner]:.1f}"])
        return rows

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if not self.tally or hasattr(config, "workerinput"):
            return
        terminalreporter.section("conformance summary")
        table = tabulate(self.rows(), headers=["planner", "mode", *OUTCOMES, "seconds"],
                         tablefmt="github")
        for line in table.splitlines():
            terminalreporter.write_line(line)
