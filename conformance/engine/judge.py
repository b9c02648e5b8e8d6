"""Judge an :class:`~conformance.engine.observe.Observation` against its case, element by element:
no tensor, no planner, only the recorded data, so it can run in a process the planner never reached.

For a launcher case, for every (run, step) in order -- the two poisoned runs, then the plain run
of a launcher case (:mod:`conformance.engine.plain`) -- it compares
* the error raised with the expected one (a subclass of the expected built-in class, exact
  message, catalog id), or that none was raised (spec section 4;
  :mod:`conformance.engine.step_error`);
* the value returned with None (spec section 3);
* every input allocation (garbage tails and guard zones included) with its state before the call,
  in values and in torch's version counter (inputs are read-only, spec section 5);
* every element of every output allocation (guard zones included) with its expected state: the
  previous state with the golden's defined regions written, nothing else touched (spec section 5;
  :mod:`conformance.engine.output_differences`).

Each difference is recorded as data (:class:`~conformance.engine.verdict.Difference`) with the rule
that decides it (the corpus subject's ``element_rules``, spec section 8), and, for an element of an
output indexed by request (:meth:`~conformance.corpus.subject.Subject.by_request`), its request's
inputs; what the planner did in each section-6 situation the case reaches is credited from them
(:mod:`conformance.engine.situations`). When there is any, :class:`ConformanceFailure` is
raised: ``str()`` is the readable report
(case file, step, fields, first differing index with its neighbours and, under them, the
per-request inputs at the same indices, the rule and the spec's words for it
(:mod:`conformance.engine.failure_words`), the command that reruns just this case on this
planner) and
``.verdict`` the data, from which :func:`conformance.engine.verdict.status_of` gives the status.
"""

from __future__ import annotations

from collections import Counter

from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.corpus.case_model import Case
from conformance.corpus.subject import subject_of
from conformance.engine.diff import differing_indices, field_diff
from conformance.engine.failure_words import one_line
from conformance.engine.failure_words import where as _where
from conformance.engine.observe import Observation, Raised, StepObservation
from conformance.engine.output_differences import output_differences
from conformance.engine.outside import guard_writes
from conformance.engine.rerun import case_dir_arg, rerun_command
from conformance.engine.situations import credit_situations
from conformance.engine.step_error import error_difference
from conformance.engine.steps import expand_golden, runs_of
from conformance.engine.verdict import Difference, VerdictData

CONTRACT = _element_rules.CONTRACT
StepRules = _element_rules.StepRules
case_rules = _element_rules.case_rules


class ConformanceFailure(AssertionError):
    """A planner's behaviour differs from the case; ``str()`` is the whole readable report and
    ``verdict`` (a :class:`~conformance.engine.verdict.VerdictData`, or None for a failure that is
    not a comparison) what the judge saw."""

    def __init__(self, text: str, verdict: VerdictData | None = None) -> None:
        super().__init__(text)
        self.verdict = verdict


class _Judging:
    """The differences of one case, and the readable text of the first (run, step) that has any."""

    def __init__(self, case: Case, target_name: str, device: str) -> None:
        self.case, self.target_name, self.device = case, target_name, str(device)
        self.data = VerdictData()
        self.lines: list[str] = []  # the first failing (run, step)'s detail
        self.first: tuple[int, int] | None = None
        self.also: Counter = Counter()  # (run, step) -> differences after the first
        # (step, field, index) -> what differed there, in any run (with an access outside a
        # tensor seen: "outside"): every difference, the ones past verdict.KEPT too
        self.at_element: dict[tuple, set[str]] = {}
        self.got_at: dict[tuple, set] = {}  # (step, field, index) -> the values seen there

    def add(self, at: tuple[int, int], diff: Difference, text: str | None) -> None:
        """Record ``diff`` at (run index, step); ``text`` goes into the report when ``at`` is the
        first (run, step) that differs."""
        self.data.add(diff)
        self.at_element.setdefault((diff.step, diff.field, diff.index), set()).add(
            "outside" if diff.evidence else diff.what)
        if diff.what == "value" and diff.index is not None:
            self.got_at.setdefault((diff.step, diff.field, diff.index), set()).add(diff.got)
        if self.first is None:
            self.first = at
        if at == self.first:
            if text:
                self.lines.extend(text.splitlines())
        else:
            self.also[at] += 1

    def error(self, at, k: int, run: str, step, raised: Raised | None, rules: StepRules) -> bool:
        """Compare what was raised with ``step``'s expectation (spec section 4,
        :func:`conformance.engine.step_error.error_difference`); True when it matched."""
        found = error_difference(k, run, step.error, raised, rules, self.device)
        if found is None:
            return True
        self.add(at, *found)
        return False

    def returned(self, at, k: int, run: str, seen: StepObservation) -> None:
        """A launcher that returned normally returned None (spec section 3)."""
        if seen.raised is None and not seen.returned_none:
            self.add(at, Difference(k, run, "returned", "return", None, None, seen.returned_repr,
                                    CONTRACT),
                     f"returned {one_line(seen.returned_repr)}; the launcher returns None (spec "
                     "section 3)")

    def unchanged(self, at, k: int, run: str, seen: StepObservation) -> None:
        """Every input allocation kept its values and its version counter (spec section 5)."""
        for state in seen.inputs:
            if state.changed:
                diff = field_diff(state.name, state.before, state.after, offset=state.offset,
                                  length=state.length)
                first = differing_indices(state.before, state.after)[0]
                self.add(at, Difference(k, run, "input", state.name, first - state.offset,
                                        state.before[first], state.after[first], CONTRACT),
                         f"modified its input (inputs are read-only, spec §5)\n{diff}")
            elif state.version_after != state.version_before:
                self.add(at, Difference(k, run, "input", state.name, None, state.version_before,
                                        state.version_after, CONTRACT),
                         f"wrote to its input {state.name} in place (torch's version counter went "
                         f"from {state.version_before} to {state.version_after}), then restored "
                         f"its values: inputs are read-only (spec §5), and another stream may "
                         f"read them")

    def past_end(self, at, k: int, run: str, seen: StepObservation) -> None:
        """Nothing was written outside an argument's memory, into the hidden guards an engine maps
        after and before it (spec section 6: never read or write outside a tensor)."""
        differences, lines = guard_writes(k, run, seen.past_end, CONTRACT)
        for difference in differences:
            self.add(at, difference, None)
        if differences and at == self.first:
            self.lines.extend(lines)

    def outputs(self, at, k: int, run: str, seen: StepObservation, expected: dict,
                poison: dict, lengths: dict, rules: StepRules, error_ok: bool = True) -> None:
        """Every element of every output allocation equals ``expected`` (guard zones included:
        :func:`conformance.engine.output_differences.output_differences`); the lines go into the
        report when ``at`` is the first (run, step) that differs."""
        differences, lines = output_differences(self.case, k, run, seen, expected, poison,
                                                lengths, rules, error_ok,
                                                report=self.first in (None, at))
        for diff in differences:
            self.add(at, diff, None)
        self.lines.extend(lines)

    def fail(self) -> None:
        """Raise :class:`ConformanceFailure` when anything differed."""
        if not self.data.count:
            return
        case = self.case
        lines = [f"{case.id}[{self.target_name}]  ({case.location})", f"  {case.description}"]
        lines.extend("  " + line for line in self.lines)
        if self.also:
            more = sum(self.also.values())
            lines.append(f"  and {more} more difference(s) in {len(self.also)} later call(s)")
        rerun = rerun_command(case.id, self.target_name, case_dir_arg(case))
        lines.append(f"  rerun: {rerun}")
        raise ConformanceFailure("\n".join(lines), self.data)


def _judge_launcher(case: Case, seen: Observation, judging: _Judging) -> None:
    subject = subject_of(case)
    rules_per_step = case_rules(case)
    n = len(case.steps)
    poison: dict[str, list] = {}
    error_ok: dict[int, bool] = {}
    for step_seen in seen.steps:
        k, r, run = step_seen.index, step_seen.run_index, step_seen.run
        step, rules, at = case.steps[k], rules_per_step[k], (r, k)
        if k == 0:
            poison = step_seen.outputs_before
        # each call is judged on what the buffers held just before it (as the harness saw them),
        # so one wrong step is not counted again in every later one
        expected = step_seen.outputs_before
        if judging.first is None:
            judging.lines = [_where(k, n, r, run)]
        differences = judging.data.count  # an error step is ok with no difference of its own
        ok = judging.error(at, k, run, step, step_seen.raised, rules)
        judging.returned(at, k, run, step_seen)
        judging.unchanged(at, k, run, step_seen)
        judging.past_end(at, k, run, step_seen)
        if step.error is None and step_seen.raised is not None:
            continue  # the raise is the difference; what it left unwritten follows from it
        if step.error is None:
            expected = expand_golden(subject, expected, step.expect, step_seen.guard)
        judging.outputs(at, k, run, step_seen, expected, poison, seen.output_lengths, rules, ok)
        if step.error is not None:  # raised exactly its error, and wrote or changed nothing
            error_ok[k] = error_ok.get(k, True) and judging.data.count == differences
    judging.data.error_steps = [{"step": k, "id": case.steps[k].error["id"], "ok": ok}
                                for k, ok in sorted(error_ok.items())]
    credit_situations(judging.data.situations, judging.at_element, rules_per_step,
                      judging.got_at)


def judge(case: Case, observation: Observation, target_name: str, device) -> VerdictData:
    """Judge ``observation`` of ``case`` on the planner ``target_name`` that ran on ``device``.

    Returns:
        The verdict (no difference) when the planner did all the case requires.

    Raises:
        ConformanceFailure: any difference from the case's expectation (readable report, and the
            verdict as data in ``.verdict``).
    """
    judging = _Judging(case, target_name, device)
    want = len(runs_of(case)) * len(case.steps) if case.entry == "launcher" else 1
    if len(observation.steps) != want:
        raise ConformanceFailure(
            f"{case.id}[{target_name}]  ({case.location})\n  the observation holds "
            f"{len(observation.steps)} of {want} calls: the run did not finish, so nothing can "
            f"be judged\n  rerun: {rerun_command(case.id, target_name, case_dir_arg(case))}")
    if case.entry == "launcher":
        _judge_launcher(case, observation, judging)
    else:
        judging.lines = []
        ok = judging.error((0, 0), 0, "a", case.steps[0], observation.steps[0].raised,
                           StepRules())
        judging.data.error_steps = [{"step": 0, "id": case.steps[0].error["id"], "ok": ok}]
    judging.fail()
    return judging.data
