"""The pytest front end: one test per (case, planner), selection options and the summary table.

Loaded by the repository's root ``conftest.py``, and in an installed wheel by its ``pytest11`` entry
point (``pytest --pyargs conformance``). ``pytest conformance/`` collects, from
``conformance/test_corpus.py``, one item per (case, planner) named ``case-id[planner]``:

* ``--planner NAME`` (repeatable): built-in name or ``module.path:callable``; default every
  built-in planner, the unavailable ones skipped with their reason.
* ``--case ID`` (repeatable): exact case ids; ``-k`` works as usual.
* ``--cases DIR`` (repeatable): folders of the corpus subject's case files; default the repository's
  ``cases/<subject>/``.
* ``--extra-cases DIR`` (repeatable): case directories run as well (:mod:`.extra_cases`).

Cases with ``"entry": "validator"`` / ``"allocate"`` exercise the shared validator / allocator and
run once, as ``case-id[validator]`` / ``case-id[allocator]``. A faulty case file fails as one item
``<file>[load]`` naming the file and JSON path; every other case still runs. Works under
``pytest -n auto`` (pytest-xdist): collection is deterministic and the summary is tallied from
reports on the controller.
"""

from __future__ import annotations

import fnmatch
import os
import shlex
import warnings
from pathlib import Path

import pytest

from conformance.plugin import gpu_pinning  # noqa: F401 - first: pins an xdist worker's GPU before CUDA use
from conformance.corpus.subjects import SubjectError

try:  # which corpus subject this process runs is chosen at its import: a refusal is a usage error
    import conformance.corpus.corpus_subject  # noqa: F401
except SubjectError as _exc:
    raise pytest.UsageError(f"conformance: {_exc}") from None
from conformance.corpus.case_file import CaseFileError, display_path, printable
from conformance.corpus.loader import OWN_FOLDER_HINT, Case, load_corpus
from conformance.corpus.text import terminal_text
from conformance.plugin.results_path import claim_results_file
from conformance.plugin.results_writer import ResultsWriter, add_results_options
from conformance.engine.runner import (
    CaseBuildError,
    ConformanceFailure,
    Target,
    case_dir_arg,
    rerun_command,
    resolve_device,
    run_case,
)
from conformance.corpus.entries import LOAD, SHARED_PLANNERS, planner_name_error
from conformance.engine.inputs import new_poison_seed, poison_seed, set_poison_seed
from conformance.engine.rerun import CORPUS_COMMAND, POISON_SEED_VARIABLE, RUN_SETTINGS
from conformance.plugin.tally import Summary
from conformance.paths import REPO_ROOT
from impls.planner_path import judge_path_fault
from conformance.plugin import one_call_items as subjects
from conformance.robustness.in_process import (
    PlannerEscape,
    guarded,
    install_interrupt_flag,
    torch_state_kept,
)
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.corpus_subject import registry as _registry

NO_DRIVER = _registry.NO_DRIVER
availability = _registry.availability
builtin_names = _registry.builtin_names
chosen_planners = _registry.chosen_planners
get_planner = _registry.get_planner
no_driver_hint = _registry.no_driver_hint
probe_all = _registry.probe_all

pytest_plugins = [
    # first: subjects imports it, and a plugin module imported before pytest registers it is not
    # assertion-rewritten (a PytestAssertRewriteWarning in every run)
    "conformance.plugin.extra_cases",  # --extra-cases: a repository's own cases with the corpus
    "conformance.plugin.subjects",  # --subject, --subject-module, the one-call subjects' items
    "conformance.plugin.isolation_options",  # --(no-)isolate, --isolate-timeout, --sandbox, --sanitize
    "conformance.plugin.profiles",  # --profile, --manifest: pins and known divergences
    "conformance.bench.plugin",  # conformance/bench: opt-in benchmarks, --bench-*
]
ANCHOR = "test_corpus.py"
LOADED_CASES = pytest.StashKey[tuple]()
"""``config.stash`` entry: (the case folders, the ids of every case loaded from them) of this
process's collection, which :mod:`.profiles` reads instead of loading the corpus again."""


def pytest_addoption(parser: pytest.Parser, pluginmanager) -> None:
    group = parser.getgroup("conformance", "kernel conformance")
    group.addoption("--planner", action="append", default=[], metavar="NAME",
                    help="planner to run: a built-in name (python -m conformance planners "
                         "lists them: python, triton, numba-cuda, triton-bound, ...) or "
                         "module.path:callable (repeatable; default: every built-in planner)")
    group.addoption("--case", action="append", default=[], metavar="ID",
                    help="run only this case id (repeatable)")
    group.addoption("--cases", action="append", default=[], metavar="DIR", type=Path,
                    help="directory of case files (repeatable; default: the repo's "
                         f"cases/{CORPUS_NAME}/)")
    group.addoption("--poison-seed", type=_seed, default=None, metavar="N",
                    help="draw the poison and guard fills from seed N (default: "
                         f"${POISON_SEED_VARIABLE}, else a fresh seed from os.urandom; recorded "
                         "in the results and in every rerun command)")
    add_results_options(group)
    config = pluginmanager.get_plugin("pytestconfig")
    if config is not None:  # before any option is checked: see claim_results_file
        claim_results_file(config)


def _seed(text: str) -> int:
    """argparse type of ``--poison-seed``: an integer >= 0."""
    import argparse

    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be >= 0")
    return value


def _planner_names(config: pytest.Config) -> list[str]:
    return subjects.corpus_planner_names(config, tuple(chosen_planners(None)))


def _use_poison_seed(config: pytest.Config) -> None:
    """This process's poison seed: ``--poison-seed``, else the controller's under pytest-xdist
    (one seed per run), else :data:`POISON_SEED_VARIABLE` (a rerun's), else a fresh one; recorded
    for rerun commands. The variable is removed from the environment, which the isolation worker
    and the availability probe would inherit."""
    seed = config.getoption("poison_seed")
    if seed is None and hasattr(config, "workerinput"):
        seed = config.workerinput.get("conformance_poison_seed")
    given = os.environ.pop(POISON_SEED_VARIABLE, None)
    if seed is None and given is not None:
        try:
            seed = _seed(given)
        except Exception as exc:  # noqa: BLE001 - argparse's error, said as a usage error
            raise pytest.UsageError(f"${POISON_SEED_VARIABLE}: {exc}") from None
    seed = new_poison_seed() if seed is None else seed
    set_poison_seed(seed)
    RUN_SETTINGS[POISON_SEED_VARIABLE] = str(seed)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist: every worker draws its fills from the controller's seed."""
    node.workerinput["conformance_poison_seed"] = poison_seed()


def pytest_configure(config: pytest.Config) -> None:
    _use_poison_seed(config)
    timeout = config.getoption("isolate_timeout")
    # the fix repeats the user's own command (its cases, results, options), less PYTHONPATH
    pytest_words = CORPUS_COMMAND[:CORPUS_COMMAND.index("pytest") + 1]  # python -P -m pytest
    command = shlex.join([*pytest_words, *map(str, config.invocation_params.args)])
    for name in config.getoption("planner"):  # before any of its code runs, in the probe or here
        fault = judge_path_fault(name, (str(REPO_ROOT),), command, whole=True) \
            if ":" in name else None
        if fault:
            raise pytest.UsageError(fault)
    probe_all(config.getoption("planner"), timeout)  # external planners: in children, at once
    one_call = subjects.one_call_planner_names(config) - set(builtin_names())
    for name in config.getoption("planner"):
        if name in one_call:  # a one-call subject's own planner (plugin.one_call_items)
            continue
        fault = planner_name_error(name)  # before anything is imported by that name
        if fault:
            raise pytest.UsageError(fault)
        a = availability(name, timeout)
        if not a.available and not a.fails and (":" in name or name not in builtin_names()):
            raise pytest.UsageError(a.reason)
    install_interrupt_flag()  # a planner's KeyboardInterrupt fails its case; Ctrl-C stops the run
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
        dirs = [p.resolve() for p in config.getoption("cases")] or None
        cases, errors = load_corpus(dirs) if subjects.judges_corpus(config) else ([], [])
        config.stash[LOADED_CASES] = (dirs, {case.id for case in cases})
        wanted = set(config.getoption("case"))
        for error in errors:
            name = printable(f"{display_path(error.path)}@{error.json_path}[load]")
            if not wanted or error.case_id in wanted:
                yield CaseFileItem.from_parent(self, name=name, error=error)
            else:  # not run, never hidden: a warning at the faulty file
                warnings.warn_explicit(UnselectedFaultWarning(
                    f"{name}: not run (--case selects other cases): {printable(error.message)}"),
                    UnselectedFaultWarning, filename=os.path.abspath(error.path), lineno=1)
        one_call, one_call_ids = subjects.collect(
            self, wanted, lambda name, text: CaseFileItem.from_parent(self, name=name, text=text))
        for twice in sorted(one_call_ids & {case.id for case in cases}):
            yield CaseFileItem.from_parent(self, name=f"{twice}[load]",
                                           text=f"case id {twice!r} is used by two subjects")
        shown = {error.case_id for error in errors if error.case_id in wanted}  # a [load] item each
        for missing in sorted(wanted - {case.id for case in cases} - one_call_ids - shown):
            faults = "".join(f"\n  {error}" for error in errors)
            text = f"--case {missing}: no case has this id" + (
                f"; these case files could not be loaded:{faults}" if faults else
                f"; {OWN_FOLDER_HINT}")
            yield CaseFileItem.from_parent(self, name=f"{missing}[missing]", text=text)
        targets = [(name, availability(name)) for name in _planner_names(config)]
        for case in cases:
            if wanted and case.id not in wanted:
                continue
            if case.entry in SHARED_PLANNERS:
                yield CaseItem.from_parent(self, name=f"{case.id}[{SHARED_PLANNERS[case.entry]}]",
                                           case=case, planner=SHARED_PLANNERS[case.entry], avail=None)
                continue
            for name, avail in targets:
                yield CaseItem.from_parent(self, name=f"{case.id}[{name}]", case=case,
                                           planner=name, avail=avail)
        yield from one_call


class UnselectedFaultWarning(UserWarning):
    """A case file fault that ``--case`` or a deselection (``-k``, ``-m``) left unselected: shown
    in the warnings summary, so that a run of a few cases never hides a file of the corpus that
    does not load."""


def pytest_deselected(items) -> None:
    """Each case file fault that ``-k`` or ``-m`` deselected, as an :class:`UnselectedFaultWarning`
    at the faulty file (not run, never hidden)."""
    for item in items:
        error = getattr(item, "error", None) if isinstance(item, CaseFileItem) else None
        if error is not None and hasattr(error, "path"):
            warnings.warn_explicit(UnselectedFaultWarning(
                f"{item.name}: not run (deselected): {printable(error.message)}"),
                UnselectedFaultWarning, filename=os.path.abspath(error.path), lineno=1)


class CaseFileItem(pytest.Item):
    """A case file (or one case in it) that could not be loaded, or a ``--case`` id not found."""

    def __init__(self, *, error: CaseFileError | None = None, text: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.error = error
        self.text = text or f"bad case file: {error}"
        self.user_properties.append(("planner", LOAD))

    def runtest(self) -> None:
        raise ConformanceFailure(self.text)

    def repr_failure(self, excinfo, style=None):
        return terminal_text(str(excinfo.value))

    def reportinfo(self):
        # a line number, never None: pytest asserts one for a skipped item (a JSON file has no
        # line of the case to point at; 0 is the file's first)
        return (self.error.path if self.error else self.path), 0, self.name


class CaseItem(pytest.Item):
    """One case on one planner."""

    def __init__(self, *, case: Case, planner: str, avail, **kwargs) -> None:
        super().__init__(**kwargs)
        self.case, self.planner, self.avail = case, planner, avail
        self.user_properties.append(("planner", planner))
        self.user_properties.append(("case", case.id))
        if avail is not None:  # the summary's mode column (plugin.tally)
            self.user_properties.append(("mode", avail.mode or "unavailable"))
        self.extra_keyword_matches.update(case.tags)  # `-k hazard` selects by tag
        if avail is not None and not avail.available and not avail.fails:
            self.add_marker(pytest.mark.skip(reason=terminal_text(f"{planner}: {avail.reason}")))
        for xfail in case.xfail:
            if fnmatch.fnmatchcase(planner, xfail["planner"]):
                self.add_marker(pytest.mark.xfail(reason=terminal_text(xfail["reason"]),
                                                  strict=True, raises=ConformanceFailure))

    def runtest(self) -> None:
        """Run the case in this process (see :mod:`conformance.robustness.in_process` for what is
        guarded): a planner that raises KeyboardInterrupt / SystemExit, calls ``os._exit`` or
        leaves torch's global state changed fails this case and the run goes on."""
        if self.avail is not None and self.avail.fails:  # its import did not finish in time
            self.user_properties.append(("status", "timeout"))
            self._fail(f"timeout: {self.avail.reason}")
        if self.avail is None:  # the shared validator or allocator
            target = Target(self.planner, None, resolve_device("cpu"))
        else:
            target = Target(self.planner, get_planner(self.planner),
                            resolve_device(self.avail.device))
        changed: list[str] = []
        try:
            with torch_state_kept(changed), guarded():
                run_case(self.case, target)
        except CaseBuildError as exc:  # the case's fault, before any planner call
            self.user_properties.append(("status", "error"))
            self._fail(f"error: the case's inputs cannot be built: {exc}")
        except PlannerEscape as exc:
            self._fail(f"{exc}: a launcher returns or raises an Exception (spec section 3); "
                       "the case failed and the run went on")
        except Exception as exc:
            if not changed:
                raise
            first = (str(exc).splitlines() or [""])[0]
            self._state_changed(changed, f"then the case raised {type(exc).__name__}: {first}")
        if changed:
            self._state_changed(changed)

    def _state_changed(self, changed: list[str], after: str = "") -> None:
        lines = [f"  {change}" for change in changed] + ([after] if after else [])
        self._fail("changed process-global torch state, which the caller and every later op of "
                   "its process see (set back for the next case):\n" + "\n".join(lines))

    def _fail(self, detail: str) -> None:
        case = self.case
        raise ConformanceFailure("\n".join([
            f"{case.id}[{self.planner}]  ({case.location})", f"  {case.description}",
            *("  " + line for line in detail.splitlines()),
            f"  rerun: {rerun_command(case.id, self.planner, case_dir_arg(case))}"]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            text = terminal_text(str(excinfo.value))  # a planner's or a case's text: escaped, cut
            return text + (f"\n  hint: {no_driver_hint()}" if NO_DRIVER in text else "")
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        # line 0, never None: pytest asserts a line for a skipped item (an unavailable planner)
        return self.case.path, 0, f"{self.case.id}[{self.planner}]"
