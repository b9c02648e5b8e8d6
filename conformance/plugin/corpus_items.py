"""The corpus engine's pytest items: the JSON corpus collected in place of
``conformance/test_corpus.py`` (:class:`CorpusFile`), one :class:`CaseItem` per (case, planner)
named ``case-id[planner]``, and a :class:`CaseFileItem` for a case file that does not load
(``<file>@<json path>[load]``) or a ``--case`` id that names no case (``ID[missing]``).

Collected by :mod:`conformance.plugin.hooks` (its ``pytest_pycollect_makemodule``). A failing
case's text ends with its rerun command (:func:`conformance.engine.rerun.rerun_command`). A case
file fault that ``--case``, ``-k`` or ``-m`` leaves unselected is an
:class:`UnselectedFaultWarning` at the file, never hidden.
"""

from __future__ import annotations

import os
import warnings

import pytest

from conformance.corpus.case_file import CaseFileError, display_path, printable
from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.entries import LOAD, SHARED_PLANNERS
from conformance.corpus.case_model import Case
from conformance.corpus.case_xfail import match_xfail, unmatched_text
from conformance.corpus.close_match import did_you_mean
from conformance.corpus.loader import OWN_FOLDER_HINT, load_corpus
from conformance.corpus.text import terminal_text
from conformance.engine.runner import (
    CaseBuildError,
    ConformanceFailure,
    Target,
    case_dir_arg,
    rerun_command,
    resolve_device,
    run_case,
)
from conformance.plugin import one_call_items as subjects
from conformance.robustness.in_process import PlannerEscape, guarded, torch_state_kept

NO_DRIVER = _registry.NO_DRIVER
availability = _registry.availability
get_planner = _registry.get_planner
builtin_names = _registry.builtin_names
source_digest = _registry.source_digest
no_driver_hint = _registry.no_driver_hint

LOADED_CASES = pytest.StashKey[tuple]()
"""``config.stash`` entry: (the case folders, {id: file} of every case loaded from them) of this
process's collection, which :mod:`.profiles` reads instead of loading the corpus again."""


def planner_names(config: pytest.Config) -> list[str]:
    """The planners each corpus case runs on: ``--planner`` (its corpus ones), else every
    built-in planner of the corpus subject."""
    return subjects.corpus_planner_names(config, tuple(_registry.chosen_planners(None)))


class CorpusFile(pytest.File):
    """Collects the JSON corpus in place of ``conformance/test_corpus.py``."""

    def collect(self):
        config = self.config
        dirs = [p.resolve() for p in config.getoption("cases")] or None
        cases, errors = load_corpus(dirs) if subjects.judges_corpus(config) else ([], [])
        config.stash[LOADED_CASES] = (dirs, {case.id: case.path for case in cases})
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
            text = f"--case {missing}: no case has this id" + did_you_mean(
                missing, [*(case.id for case in cases), *one_call_ids]) + (
                f"; these case files could not be loaded:{faults}" if faults else
                f"; {OWN_FOLDER_HINT}")
            yield CaseFileItem.from_parent(self, name=f"{missing}[missing]", text=text)
        targets = [(name, availability(name)) for name in planner_names(config)]
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


def warn_deselected(items) -> None:
    """Each case file fault that ``-k`` or ``-m`` deselected, as an :class:`UnselectedFaultWarning`
    at the faulty file (not run, never hidden)."""
    for item in items:
        error = getattr(item, "error", None) if isinstance(item, CaseFileItem) else None
        if error is not None and hasattr(error, "path"):
            warnings.warn_explicit(UnselectedFaultWarning(
                f"{item.name}: not run (deselected): {printable(error.message)}"),
                UnselectedFaultWarning, filename=os.path.abspath(error.path), lineno=1)


class XfailNotAppliedWarning(UserWarning):
    """A case's own ``xfail`` whose pattern names an external planner whose code the entry's
    ``sources`` do not list: not applied (its result stands), and said in the warnings summary."""


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
        if case.xfail:
            self._declare(case, planner, builtin=avail is None or planner in builtin_names())

    def _declare(self, case: Case, planner: str, builtin: bool) -> None:
        """The case's own ``xfail`` that applies to this planner as a strict xfail
        (:func:`conformance.corpus.case_xfail.match_xfail`: an external planner's code must be
        among the entry's ``sources``); each entry that names it but not its code, an
        :class:`XfailNotAppliedWarning` at the case file. ``builtin``: a built-in planner, or
        the harness's shared validator or allocator (``avail`` None), matched by name alone."""
        source = None if builtin else source_digest(planner)
        found = match_xfail(case.xfail, planner, builtin, source)
        if found.applied is not None:
            self.add_marker(pytest.mark.xfail(reason=terminal_text(found.applied["reason"]),
                                              strict=True, raises=ConformanceFailure))
        for entry in found.unmatched:
            warnings.warn_explicit(XfailNotAppliedWarning(terminal_text(
                unmatched_text(case.id, planner, entry, source))), XfailNotAppliedWarning,
                filename=os.path.abspath(case.path), lineno=1)

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
