"""The conformance summary's tally: outcomes per (subject, planner), counted from test reports on
the controller (pytest-xdist included), printed by :func:`conformance.plugin.summary.render` at
the end of ``pytest conformance/``."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from conformance.corpus.entries import LOAD, PSEUDO_PLANNERS, SHARED_PLANNERS
from conformance.corpus.text import terminal_text
from conformance.corpus.case_file import display_path
from conformance.engine.rerun import shell_command
from conformance.plugin.case_folders import rerun_folders
from conformance.plugin.one_call_items import SUBJECTS, corpus_planner_names, planners_of
from conformance.plugin.outcomes import OUTCOMES, outcome
from conformance.plugin.summary import legend_lines, render as summary_lines
from conformance.reporting import failure_groups

NOT_JUDGED = ("skipped", "xfailed", "xpassed", "error")
"""Outcomes of an item whose planner's outputs were not judged (for :func:`failed_everywhere`)."""
SPECIAL_STATUSES = ("oob", "crash", "timeout")
"""Results-file statuses of failed items the summary names under its table (crash isolation and
the sanitizer: conformance/plugin/isolation_options.py)."""


def failed_everywhere(ran: dict[tuple, set], failed: dict[tuple, set],
                      case_dirs: list = (), extra_dirs: list = ()) -> list[str]:
    """A line per case that failed (``failed``: pytest's plain failure, no judged status) on every
    planner that ran it, where two or more did (``ran``: (subject, case id) -> planner names):
    planners that share no code rarely fail a case alike, so its expected values are suspect.
    Planners that share the code at fault (a planner and its bound form, say) fail alike too,
    which the line says. Its ``record`` command loads the run's case folders as the run named them
    (``case_dirs``: its ``--cases``, empty for the corpus; ``extra_dirs``: its ``--extra-cases``),
    quoted for a POSIX shell."""
    folders = [*(word for d in case_dirs for word in ("--cases", display_path(d))),
               *(word for d in extra_dirs for word in ("--extra-cases", display_path(d)))]
    out = []
    for key in sorted(failed):
        names = ran.get(key, set())
        if len(names) >= 2 and failed[key] >= names:
            subject, case_id = key
            where = f" (subject {subject})" if subject else ""
            record = shell_command(["python", "-m", "conformance", *folders, "record", case_id],
                                   {})
            out.append(f"{case_id}{where}: failed on every planner that ran it "
                       f"({', '.join(sorted(names))}); unless they share the code at fault, "
                       f"check the case's expected values: `{record}` prints the reference "
                       f"planner's")
    return out


def subjects_not_run(config: pytest.Config, builtins: tuple[str, ...]) -> list[str]:
    """A line per subject this run chose whose cases ran on no planner because ``--planner``
    names none of its planners (``builtins``: the corpus engine's built-in names), so that a
    planner name only another subject knows never reads as a subject judged and passing."""
    given = config.getoption("planner")
    if not given:
        return []
    out = []
    for name, module in sorted(config.stash.get(SUBJECTS, {}).items()):
        if module.ENGINE == "corpus":
            runs, known = corpus_planner_names(config, builtins), (*builtins, "module:callable")
        else:
            runs, known = planners_of(module, config), tuple(module.PLANNERS)
        if not runs:
            out.append(f"subject {name}: not run: --planner names none of its planners "
                       f"({', '.join(known)})")
    return out


class Summary:
    """Tallies outcomes per (subject, planner) from test reports (on the controller under xdist)
    and prints one table per subject at the end of the run, each under a ``subject NAME:`` line:
    the corpus engine's first (its items carry no ``subject`` property; its name is the corpus
    subject's ``NAME``), then each one-call subject's; the legend of their columns once, under the
    last."""

    def __init__(self) -> None:
        self.tally: dict[tuple, Counter] = defaultdict(Counter)
        self.special: dict[tuple, Counter] = defaultdict(Counter)
        self.seconds: dict[tuple, float] = defaultdict(float)
        self.modes: dict[tuple, str] = {}  # (subject, planner) -> its mode, from its items
        self.ran: dict[tuple, set] = defaultdict(set)  # (subject, case id) -> planners judged
        self.failed: dict[tuple, set] = defaultdict(set)  # ... -> planners with a plain failure
        self.passed: set[str] = set()  # nodeids whose call was counted ``passed``

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        planner = props.get("planner")
        if planner is None:
            return
        key = (props.get("subject") or "", planner)
        if "mode" in props:
            self.modes[key] = props["mode"]
        decided = outcome(report)
        if decided == "passed":
            self.passed.add(report.nodeid)
        elif decided == "error" and report.when == "teardown" and report.nodeid in self.passed:
            # an error after a passed call (a worker's death or a late write after the case's
            # last call, conformance/plugin/worker_deaths.py): the item counts once, as its error
            self.passed.discard(report.nodeid)
            self.tally[key]["passed"] -= 1
        if decided is not None:
            self.tally[key][decided] += 1
            special = props.get("status")
            if decided == "failed" and special in SPECIAL_STATUSES:
                self.special[key][special] += 1
            case = (key[0], props.get("case"))
            if case[1] is not None and decided not in NOT_JUDGED:
                self.ran[case].add(planner)
                if decided == "failed" and special is None:
                    self.failed[case].add(planner)
        self.seconds[key] += report.duration

    def subjects(self) -> list[str]:
        """The subjects tallied, the corpus engine's (``""``) first."""
        return sorted({subject for subject, _ in self.tally})

    def rows(self, subject: str = "") -> list[list]:
        """One row per planner of ``subject`` (``""``: the corpus engine's): name, mode, a count
        per outcome, seconds."""
        rows = []
        keys = [k for k in self.tally if k[0] == subject]
        for key in sorted(keys, key=lambda k: (k[1] in SHARED_PLANNERS.values() or k[1] == LOAD,
                                               k[1])):
            planner = key[1]
            if planner in SHARED_PLANNERS.values():
                mode = "shared"
            elif planner == LOAD:
                mode = "-"
            else:  # every planner's item carries its mode (corpus_items, one_call_items)
                mode = self.modes.get(key) or "unavailable"
            counts = self.tally[key]
            rows.append([planner, mode, *[counts.get(o, 0) for o in OUTCOMES],
                         f"{self.seconds[key]:.1f}"])
        return rows

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if not self.tally or hasattr(config, "workerinput"):
            return
        terminalreporter.section("conformance summary")
        isolation = config.pluginmanager.get_plugin("conformance-isolation")
        where = isolation.sandbox_text() if isolation is not None else None
        if where is not None:  # what isolated cases ran in (conformance.plugin.isolation_options)
            terminalreporter.write_line(terminal_text(f"isolation sandbox: {where}; judge "
                                                      f"{isolation.judge_text()}"))
        from conformance.corpus.corpus_subject import NAME as CORPUS_NAME, registry

        for subject in self.subjects():
            terminalreporter.write_line(f"subject {subject or CORPUS_NAME}:")
            for line in summary_lines(self.rows(subject)):
                terminalreporter.write_line(line)
        for line in legend_lines():  # once: every subject's table has the same columns
            terminalreporter.write_line(line)

        for line in subjects_not_run(config, tuple(registry.chosen_planners(None))):
            terminalreporter.write_line(terminal_text(line))
        for line in failed_everywhere(self.ran, self.failed, *rerun_folders(config)):
            terminalreporter.write_line(terminal_text(line))
        for (subject, planner), counts in sorted(self.special.items()):
            parts = ", ".join(f"{counts[s]} {s}" for s in SPECIAL_STATUSES if counts[s])
            label = f"{planner} ({subject})" if subject else planner
            terminalreporter.write_line(f"{label}: failed includes {parts}"
                                        + (" (oob: compute-sanitizer saw an access outside an "
                                           "allocation)" if counts["oob"] else ""))
        for line in failure_groups.terminal_lines(run_groups(config),
                                                  title=failure_groups.SUMMARY_TITLE):
            terminalreporter.write_line(line)


def run_groups(config: pytest.Config) -> list[dict]:
    """The run's failures grouped by their first difference
    (:func:`conformance.reporting.failure_groups.groups`), from the results writer's records: the
    data the results file holds, so that the report groups them alike."""
    writer = config.pluginmanager.get_plugin("conformance-results")
    records = getattr(writer, "results", None) or {}
    return failure_groups.groups(
        [{**r, "planner": f"{r['planner']} ({r['subject']})" if r.get("subject") else r["planner"]}
         for r in records.values() if r.get("status") is not None],
        order=lambda name: (name in PSEUDO_PLANNERS, name),  # as the tables: pseudo-planners last
        profile=config.getoption("profile", None))
