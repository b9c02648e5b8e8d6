"""Judge an :class:`~conformance.engine.observe.Observation` against its case, element by element:
no tensor, no planner, only the recorded data, so it can run in a process the planner never reached.

For a launcher case, for every (run, step) in order -- the two poisoned runs, then the plain run
of a launcher case (:mod:`conformance.engine.plain`) -- it compares
* the error raised with the expected one (a subclass of the expected built-in class, exact
  message, catalog id), or that none was raised (spec section 4);
* the value returned with None (spec section 3);
* every input allocation (garbage tails and guard zones included) with its state before the call,
  in values and in torch's version counter (inputs are read-only, spec section 5);
* every element of every output allocation (guard zones included) with its expected state: the
  previous state with the golden's defined regions written, nothing else touched (spec section 5).

Each difference is recorded as data (:class:`~conformance.engine.verdict.Difference`) with the rule
that decides it (the corpus subject's ``element_rules``, spec section 8), and, for an element of an
output indexed by request (:meth:`~conformance.corpus.subject.Subject.by_request`), its request's
inputs. When there is any, :class:`ConformanceFailure` is raised: ``str()`` is the readable report
(case file, step, fields, first differing index with its neighbours and, under them, the
per-request inputs at the same indices, the rule and the spec's words for it
(:mod:`conformance.engine.failure_words`), the command that reruns just this case on this
planner) and
``.verdict`` the data, from which :func:`conformance.engine.verdict.status_of` gives the status.
"""

from __future__ import annotations

from collections import Counter

from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.corpus.loader import Case
from conformance.corpus.subject import subject_of
from conformance.engine.diff import differing_indices, field_diff
from conformance.engine.failure_words import RAISES_WRITE_NOTHING
from conformance.engine.failure_words import clause as _clause, error_clause as _error_clause
from conformance.engine.failure_words import one_line, quoted
from conformance.engine.failure_words import rule_name as _rule_name, where as _where
from conformance.engine.observe import Observation, Raised, StepObservation
from conformance.engine.outside import guard_writes, outside_proof
from conformance.engine.plain import PLAIN
from conformance.engine.rerun import case_dir_arg, rerun_command
from conformance.engine.steps import expand_golden, runs_of
from conformance.engine.verdict import Difference, VerdictData, error_kind, rule_line, rule_name
from conformance.corpus.corpus_subject import errors as _errors

identify = _errors.identify
CONTRACT = _element_rules.CONTRACT
ZERO_D = _element_rules.ZERO_D
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

    def add(self, at: tuple[int, int], diff: Difference, text: str | None) -> None:
        """Record ``diff`` at (run index, step); ``text`` goes into the report when ``at`` is the
        first (run, step) that differs."""
        self.data.add(diff)
        self.at_element.setdefault((diff.step, diff.field, diff.index), set()).add(
            "outside" if diff.evidence else diff.what)
        if self.first is None:
            self.first = at
        if at == self.first:
            if text:
                self.lines.extend(text.splitlines())
        else:
            self.also[at] += 1

    def error(self, at, k: int, run: str, step, raised: Raised | None, rules: StepRules) -> bool:
        """Compare what was raised with ``step``'s expectation (spec section 4); True when it
        matched."""
        want = step.error
        if want is None:
            if raised is None:
                return True
            text = (f"raised {one_line(raised.class_name)} on a valid input:\n"
                    f"{quoted(raised.traceback_tail)}\n  decided by: {_rule_name(rules.error)}")
            if rules.error == CONTRACT:
                text += ("\n    spec §5: every input that passes validation is planned (section 6 "
                         "says what an out-of-contract value gets); no raise after the checks")
            self.add(at, Difference(k, run, "raised", "error", None, None,
                                    f"{raised.class_name}: {raised.message[:200]}", rules.error,
                                    got_kind=raised.class_name), text)
            return False
        message = want["message"].replace("{device}", self.device)
        expected = f"{want['type']} [{want['id']}] {message!r}"
        if raised is None:
            self.add(at, Difference(k, run, "no-error", "error", None, expected, None, CONTRACT),
                     f"expected {expected}\n     but the call returned normally\n"
                     f"  decided by: contract (a step that must raise and returned, spec §8)"
                     f"{_error_clause(want['id'])}")
            return False
        got_id = raised.error_id or identify(raised.message)
        got = f"{one_line(raised.class_name)} [{one_line(got_id)}] {raised.message!r}"
        type_ok = want["type"] in raised.builtin_bases
        if type_ok and raised.message == message and got_id == want["id"]:
            return True
        detail = f"wrong error\n  expected {expected}\n       got {got}"
        if raised.class_name == want["type"] and not type_ok:
            detail += (f"\n  ({one_line(raised.class_name)} here is a class of that name, not a "
                       f"subclass of the built-in {want['type']})")
        detail += f"\n  decided by: {_rule_name(rules.error)}{_error_clause(want['id'])}"
        kind = error_kind(raised.class_name, not type_ok and raised.class_name == want["type"],
                          got_id, raised.message != message and got_id == want["id"])
        self.add(at, Difference(k, run, "error", "error", None, expected, got, rules.error,
                                got_kind=kind), detail)
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
        """Every element of every output allocation equals ``expected`` (guard zones included).
        On a step that must raise and did not raise exactly its error (``error_ok`` False), what
        it wrote is one line: the writes follow from the error's difference, reported above it,
        and each is kept as data all the same. An element of an output indexed by request
        carries its request's inputs, and the table under a field's diff shows them."""
        subject, step = subject_of(self.case), self.case.steps[k]
        guard, bs, raises = seen.guard, step.bs, step.error is not None
        rows: dict[str, list[int]] = {}  # the step's per-request inputs, read at the first diff
        defined = {} if raises else subject.defined_lengths(bs)  # what the step's golden writes
        wrote: Counter = Counter()  # on a step that must raise: output name -> elements written
        for name in subject.outputs:
            want, got = expected[name], seen.outputs_after[name]
            before = seen.outputs_before.get(name, want)
            counts: Counter = Counter()
            clauses: dict[str, None] = {}  # the spec's words for the differing elements, in order
            firsts: dict[str, int] = {}  # rule -> allocation index of its first differing element
            differing, by_request = differing_indices(want, got), subject.by_request(name)
            if differing and by_request and not rows:
                rows = subject.request_rows(step.inputs, bs)
            shown = rows if by_request else {}
            for i in differing:
                index, e, g = i - guard, _at(want, i), _at(got, i)
                proof = outside_proof(name, index, lengths[name], g)
                if index < 0 or index >= lengths[name]:
                    what = "outside"
                elif g == _at(before, i) and e != g and run != PLAIN:
                    # still the poison it held: nothing was read. On the plain run what it held
                    # (0, or the step before's value) is a value a planner writes too: "value"
                    what, proof = "never-written", None
                elif e == _at(before, i) and not 0 <= index < defined.get(name, 0):
                    what = "written"  # must keep what it held (a defined element is a value)
                else:
                    what = "value"
                request = {n: v[index] for n, v in shown.items() if 0 <= index < len(v)}
                diff = Difference(k, run, what, name, index, e, g, rules.rule(name, index), proof,
                                  request or None)
                self.add(at, diff, None)
                counts[diff.rule] += 1
                firsts.setdefault(diff.rule, i)
                clauses[_clause(diff, bs, raises)] = None
            if counts and raises and not error_ok and at == self.first:
                wrote[name] = sum(counts.values())
            elif counts and at == self.first:
                self.lines.extend(field_diff(name, want, got, offset=guard, length=lengths[name],
                                             poison=None if run == PLAIN else poison[name],
                                             inputs=shown,
                                             also={f"first under {rule_name(r)}": i
                                                   for r, i in firsts.items()}
                                             ).splitlines())
                self.lines.append("  " + rule_line(counts))
                self.lines.extend(f"    {clause}" for clause in clauses)
        if wrote:
            self.lines.append("  and wrote " + ", ".join(f"{n} element(s) of {name}"
                                                         for name, n in wrote.items()))
            self.lines.append(f"    {RAISES_WRITE_NOTHING}")

    def situations(self, rules_per_step: list[StepRules]) -> None:
        """What the planner did where each section-6 situation shows (spec section 6), from every
        difference at those elements in any run (not only the verdict's kept ones). A raise
        is credited to a row only on a step where that row alone shows: a step that reaches two
        rows cannot say which one the planner raised on."""
        errors = {step: what for (step, _, _), whats in self.at_element.items()
                  for what in sorted(whats) if what in ("error", "no-error", "raised")}
        raised = {step for step, what in errors.items() if what == "raised"}
        for k, rules in enumerate(rules_per_step):
            if rules.error == ZERO_D:
                word = {"no-error": "no-error", None: "rule"}.get(errors.get(k), "other")
                self._credit(ZERO_D, word)
            for row, where in rules.shows.items():
                seen = set().union(*(self.at_element.get((k, name, index), ())
                                     for name, index in where))
                word = "rule"
                if k in raised:
                    if len(rules.shows) > 1:
                        continue  # a raise on a step that shows several rows names none of them
                    word = "raised"
                elif "outside" in seen:
                    word = "outside"
                elif "never-written" in seen:
                    word = "never-written"
                elif seen:
                    word = "other"
                self._credit(row, word)

    def _credit(self, row: str, word: str) -> None:
        """Keep the most telling word seen for ``row``: any deviation over ``rule``."""
        if self.data.situations.get(row) in (None, "rule"):
            self.data.situations[row] = word

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


def _at(values: list, i: int):
    return values[i] if i < len(values) else None


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
    judging.situations(rules_per_step)


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
