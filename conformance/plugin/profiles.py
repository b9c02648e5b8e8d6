"""Judge each result by what its case pins and by the known-divergence manifests (spec section 8).

pytest options (registered through :mod:`conformance.plugin.hooks`'s ``pytest_plugins``):

* ``--profile contract|project|all`` (default ``contract``): what an external planner
  (``module.path:callable``) is judged on. ``contract`` judges what the contract decides;
  ``project`` adds the project rules; ``all`` adds the wrapper's check. Built-in planners are
  always judged on all three. A difference only on elements a rule outside the profile decides is
  reported ``differs`` (a project rule) or ``not-wrapper``, neither a failure nor a pass.
* ``--manifest PATH`` (repeatable): a known-divergence manifest kept outside the corpus; those in
  each corpus's ``divergences/`` folder apply by themselves (:mod:`conformance.corpus.manifest`),
  each to its own folder's cases only (an ``--extra-cases`` folder never excuses the corpus's).
* ``--no-manifests``: ignore every manifest (see each divergence as the failure it is).

A result a manifest declares is ``declared`` when its observed outcome is one the manifest names;
a declared case that passes is an unexpected pass (``xpass``, fails the run: strict), unless the
divergence shows only as a fault (``"shows_as": "fault"``) and the case ran where no such fault can
be seen (in process, or on CUDA tensors, sanitized or not: ``manifest.FAULT_DETECTORS``): then it
is ``declared`` (observed ``pass``), its message saying it was not observable; another outcome
stays the failure it is, with the declaration named. Reading or writing outside a tensor is never
a project rule (spec section 6, last line): a crash, a timeout, a sanitizer report (status
``oob`` from the isolation worker) or a value that can only come from outside a tensor
(:mod:`conformance.engine.outside`) is a contract failure whatever the case pins; the last two get
the status ``oob``.

Statuses are computed from the judge's verdict (:mod:`conformance.engine.verdict`: every differing
element or error with the rule that decides it, spec section 8), never from a report's text: a
difference that the contract decides fails the case whatever it pins; one that only a project rule
or the wrapper decides is ``differs`` / ``not-wrapper`` for a planner not judged on that rule. The
verdict travels on the report as JSON (``conformance_verdict``) into the results file.

The judged status travels on the report (``conformance_status``, ``conformance_observed``,
``conformance_message``, ``conformance_divergence``: plain strings, so pytest-xdist carries them)
for the results file and the summary table; the terminal summary says which profile ran and
prints the per-planner divergence profile (:mod:`conformance.reporting.divergence_profile`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.corpus.case_file import printable
from conformance.corpus.loader import load_corpus
from conformance.corpus.manifest import (FAULT_DETECTORS, find_divergence, load_manifests,
                                         unknown_cases)
from conformance.engine.verdict import DEFAULT_PROFILE, PROFILES, VerdictData, status_of
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.plugin.corpus_items import LOADED_CASES, CaseFileItem
from conformance.plugin.one_call_items import judges_corpus
from conformance.plugin.summary import WIDTH
from conformance.reporting import divergence_profile
from conformance.corpus.corpus_subject import registry as _registry

builtin_names = _registry.builtin_names

DIFFERS = {"project": "differs", "wrapper": "not-wrapper"}
"""The status of a difference on a case whose pin the planner is not judged on."""
PASSING = {"declared": "D", "differs": "d", "not-wrapper": "w"}
"""Judged statuses that do not fail the run, with their progress letter."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance")
    group.addoption("--profile", choices=tuple(PROFILES), default=DEFAULT_PROFILE,
                    help="what an external planner is judged on: contract (default), project "
                         "(+ project rules) or all (+ the wrapper's check); built-ins: all")
    group.addoption("--manifest", action="append", default=[], type=Path, metavar="PATH",
                    help="known-divergence manifest to apply besides those in "
                         "<cases>/divergences/ (repeatable)")
    group.addoption("--no-manifests", action="store_true",
                    help="apply no known-divergence manifest")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(ProfileJudge(config), "conformance-profiles")


STRICT = PROFILES["all"]
"""What a result's ``observed`` status is judged on: every rule (the planner's behaviour as it is,
before a profile or a manifest excuses anything)."""


def report_verdict(call) -> VerdictData | None:
    """The judge's verdict carried by a call's :class:`ConformanceFailure`, or None."""
    exc = call.excinfo.value if call.excinfo is not None else None
    return getattr(exc, "verdict", None)


def observed_status(report: pytest.TestReport, verdict: VerdictData | None) -> str | None:
    """The call report's outcome as a results status (pass, fail, crash, timeout, oob), judged
    on every rule, or None for a skip or an xfail that this plugin leaves alone."""
    if hasattr(report, "wasxfail") or report.skipped:
        return None
    if report.passed:
        return "pass"
    special = dict(report.user_properties).get("status")
    if special in ("crash", "timeout", "oob"):
        return special
    if verdict is None:
        return "fail"  # not a comparison: a case error, torch state changed, an escape
    return status_of(verdict, STRICT)[0]


class ProfileJudge:
    """Reclassifies corpus reports (see the module docstring) and prints the profile summary."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.profile = config.getoption("profile")
        self.dirs = [p.resolve() for p in config.getoption("cases")] or [DEFAULT_CASES_DIR]
        if config.getoption("no_manifests"):
            self.manifests, self.faults = [], []
        else:
            self.manifests, self.faults = load_manifests(self.dirs, config.getoption("manifest"))
        self.results: dict[str, dict] = {}
        self.digests: dict[str, dict | None] = {}

    def source(self, planner: str) -> dict | None:
        """``planner``'s code as the harness read it (the run's source digest, the registry's
        ``source_digest``: its file's and its local imports' SHA-256), kept per planner: what a
        manifest's ``sources`` are matched against."""
        if planner not in self.digests:
            self.digests[planner] = _registry.source_digest(planner)
        return self.digests[planner]

    def judged_pins(self, planner: str, item=None) -> tuple[str, ...]:
        """The pins ``planner`` is judged on: all for a built-in (a one-call subject's planners
        always are: ``conformance/plugin/one_call_items.py``), else the profile's."""
        if planner in builtin_names() or getattr(item, "engine", "corpus") != "corpus":
            return PROFILES["all"]
        return PROFILES[self.profile]

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        corpus = [i for i in items if hasattr(i, "case")]
        if not corpus or not judges_corpus(config):
            return  # the manifests name corpus cases: a run without that corpus checks none
        dirs, known = config.stash.get(LOADED_CASES, (None, None))  # every case, not the selected
        if known is None or (dirs or [DEFAULT_CASES_DIR]) != self.dirs:
            known = {c.id: c.path for c in load_corpus(self.dirs)[0]}
        faults = self.faults + unknown_cases(self.manifests, known)
        parent = corpus[0].parent
        for fault in faults:
            items.insert(0, CaseFileItem.from_parent(
                parent, name=f"{fault.path.name}@{fault.json_path}[load]", error=fault))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when != "call" or getattr(item, "avail", None) is None:
            return  # not a planner's corpus item (validator, allocator, load, harness tests)
        verdict = report_verdict(call)
        observed = observed_status(report, verdict)
        if observed is None:
            return
        if verdict is not None:
            report.conformance_verdict = json.dumps(verdict.to_json(), separators=(",", ":"))
        self.judge(report, item, observed, verdict)

    def judge(self, report: pytest.TestReport, item, observed: str,
              verdict: VerdictData | None) -> None:
        """Set the report's judged status (and outcome) from ``observed`` and ``verdict``."""
        case, planner = item.case, item.planner
        report.conformance_observed = observed
        text = report.longreprtext if report.failed else ""
        divergence = find_divergence(self.manifests, planner, case.id, case.tags,
                                     self.source(planner), case.path)
        if divergence is not None:
            where = f"{divergence.manifest.name} {divergence.json_path}"
            report.conformance_divergence = f"{where}: {divergence.describe()}"
            declared = "/".join(divergence.statuses)
            unseen = divergence.fault_only and getattr(item, "fault_detection", None) is None
            if observed == "pass" and unseen:  # the run cannot see what the manifest declares
                report.conformance_status = "declared"
                report.conformance_message = (
                    f"declared divergence ({declared}), not observable in this run: it shows "
                    f"only as a fault, and this case ran without {' or '.join(FAULT_DETECTORS)} "
                    f"(an isolated worker's, on CPU tensors; CUDA runs, memcheck included, cannot "
                    f"see a read just past a tensor); every output was right. "
                    f"{divergence.describe()} [{where}]")
            elif observed == "pass":
                report.outcome, report.conformance_status = "failed", "xpass"
                report.longrepr = (f"{case.id}[{planner}]  ({case.location})\n  declared "
                                   f"divergence ({declared}) passed: {divergence.describe()}\n"
                                   f"  remove it from {where} (strict)")
            elif observed in divergence.statuses:
                report.outcome, report.longrepr = "passed", None
                report.conformance_status = "declared"
                report.conformance_message = (f"declared divergence ({observed}), "
                                              f"{divergence.describe()} [{where}]\n{text}")
            else:
                report.conformance_status = observed
                report.longrepr = (f"{text}\n  {where} declares {declared}, got {observed}: "
                                   f"{divergence.describe()}")
            return
        if observed == "oob":
            report.conformance_status = "oob"
            if verdict is not None and verdict.outside:
                report.longrepr = f"{text}\n  out of bounds: {verdict.outside} (spec §6, last line)"
            return
        if observed != "fail" or verdict is None:
            return
        status, rules = status_of(verdict, self.judged_pins(planner, item))
        if status in DIFFERS.values():
            what = "differs from project rule" if status == "differs" else "not the wrapper"
            named = ", ".join(rules)
            report.outcome, report.longrepr = "passed", None
            report.conformance_status = status
            judged = "+".join(self.judged_pins(planner, item))
            report.conformance_message = (f"{what} {named} (every difference is decided by "
                                          f"{named}; profile {self.profile} judges {judged})"
                                          f"\n{text}")

    def pytest_report_teststatus(self, report, config):
        status = getattr(report, "conformance_status", None)
        if report.when == "call" and status in PASSING:
            return status, PASSING[status], status.upper()
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call" or not hasattr(report, "conformance_observed"):
            return
        props = dict(report.user_properties)
        meta = props.get("case_meta") or {}
        self.results[report.nodeid] = {
            "planner": props.get("planner"), "case": props.get("case"),
            "status": getattr(report, "conformance_status", None) or report.outcome,
            "observed": report.conformance_observed,
            "message": getattr(report, "conformance_message", None) or report.longreprtext,
            "out_of_contract": meta.get("out_of_contract", []), "subject": props.get("subject"),
            "verdict": json.loads(getattr(report, "conformance_verdict", None) or "null")}

    def _judged_lines(self, tr, most: int = 10) -> None:
        """Name the results judged, not failed (:data:`DIFFERS`'s statuses), up to ``most`` of
        them: the counts line says only how many. Each on one line: a case id and a planner name
        through :func:`~conformance.corpus.case_file.printable`, their line breaks escaped too
        (docs/robustness.md, *Untrusted text*: a name's line break would start a line of its
        own, "12 passed" say, that no result wrote)."""
        judged = sorted((r["status"], r["case"], r["planner"]) for r in self.results.values()
                        if r["status"] in DIFFERS.values())
        if not judged:
            return
        tr.write_line(f"judged, not failed ({len(judged)}: every difference is a project rule's "
                      f"or the wrapper's, which --profile {self.profile} does not judge):")
        for status, case, planner in judged[:most]:
            tr.write_line(f"  {status}: {printable(case)}[{printable(planner)}]")
        if len(judged) > most:
            tr.write_line(f"  and {len(judged) - most} more: python -m conformance report "
                          f"--format text lists them")

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if hasattr(config, "workerinput") or not self.results:
            return
        ran = {r["planner"] for r in self.results.values() if r.get("subject") is None}
        external = sorted(ran - set(builtin_names()))  # a one-call subject's are built-in
        tr = terminalreporter
        tr.section("conformance profile")
        if ran & set(builtin_names()) or any(r.get("subject") for r in self.results.values()):
            tr.write_line(f"built-in planners judged on: {'+'.join(PROFILES['all'])}")
        if external:
            tr.write_line(f"external planners judged on: {'+'.join(PROFILES[self.profile])} "
                          f"(--profile {self.profile})")
        for m in self.manifests:
            if any(m.names(name, self.source(name)) for name in ran):  # applied ones
                tr.write_line(f"manifest {m.path.name}: planner {m.planner}, "
                              f"{len(m.divergences)} declared divergence(s)")
        if config.getoption("no_manifests"):
            tr.write_line("manifests: none applied (--no-manifests)")
        self._judged_lines(tr)
        model = divergence_profile.profile(list(self.results.values()))
        if not divergence_profile.reached(model):
            tr.write_line("divergence profile: no case of this run reached a situation of spec §6")
            return
        tr.write_line("divergence profile (what each planner does in spec §6's situations):")
        for line in divergence_profile.render(model, width=WIDTH - 2).splitlines():
            tr.write_line("  " + line)
