"""Judge an :class:`~conformance.engine.observe.Observation` against its case: no tensor, no
planner, only the recorded data, so it can run in a process the planner never reached.

For a launcher case, for every (run, step) in order, it requires
* the expected error (a subclass of the expected built-in class, exact message, catalog id) or none;
* a launcher that returned normally to have returned None (spec section 3);
* every input allocation (garbage tails and guard zones included) unchanged, in values and in torch's
  version counter (inputs are read-only, spec section 5);
* every output allocation (guard zones included) equal to its expected state: the previous state
  with the golden's defined regions written, nothing else touched (spec section 5).
The first difference raises :class:`ConformanceFailure`, whose text names the case file, the step,
the field, the first differing index and the command that reruns just this case on this planner.
"""

from __future__ import annotations

from conformance.corpus.loader import Case
from conformance.engine.diff import field_diff
from conformance.engine.inputs import GUARD
from conformance.engine.observe import Observation, Raised, StepObservation
from conformance.engine.rerun import case_dir_arg, rerun_command
from conformance.engine.steps import RUNS, expand_golden
from conformance.corpus.subject import subject_of
from impls.errors import identify


class ConformanceFailure(AssertionError):
    """A planner's behaviour differs from the case; ``str()`` is the whole readable report."""


class Verdict:
    """The context of one judged step, so that a failure can say where it happened.

    ``fail(detail)`` raises :class:`ConformanceFailure` with the case's header, ``where`` and the
    rerun command around ``detail``.
    """

    def __init__(self, case: Case, target_name: str, device: str) -> None:
        self.case, self.target_name, self.device, self.where = case, target_name, str(device), ""

    def fail(self, detail: str) -> None:
        """Raise the readable :class:`ConformanceFailure` for ``detail`` (one or more lines)."""
        head = f"{self.case.id}[{self.target_name}]  ({self.case.location})"
        lines = [head, f"  {self.case.description}"]
        if self.where:
            lines.append(f"  {self.where}")
        lines.extend("  " + line for line in detail.splitlines())
        rerun = rerun_command(self.case.id, self.target_name, case_dir_arg(self.case))
        lines.append(f"  rerun: {rerun}")
        raise ConformanceFailure("\n".join(lines))

    def error(self, step, raised: Raised | None) -> None:
        """Compare what was raised with ``step``'s expectation (spec section 4)."""
        want = step.error
        if want is None:
            if raised is not None:
                self.fail(f"raised {raised.class_name} on a valid input:\n{raised.traceback_tail}")
            return
        message = want["message"].replace("{device}", self.device)
        expected = f"{want['type']} [{want['id']}] {message!r}"
        if raised is None:
            self.fail(f"expected {expected}\n     but the call returned normally")
        got_id = raised.error_id or identify(raised.message)
        got = f"{raised.class_name} [{got_id}] {raised.message!r}"
        type_ok = want["type"] in raised.builtin_bases
        if not (type_ok and raised.message == message and got_id == want["id"]):
            detail = f"wrong error\n  expected {expected}\n       got {got}"
            if raised.class_name == want["type"] and not type_ok:
                detail += (f"\n  ({raised.class_name} here is a class of that name, not a subclass "
                           f"of the built-in {want['type']})")
            self.fail(detail)

    def returned(self, seen: StepObservation) -> None:
        """A launcher that returned normally returned None (spec section 3)."""
        if seen.raised is None and not seen.returned_none:
            self.fail(f"returned {seen.returned_repr}; the launcher returns None (spec section 3)")

    def unchanged(self, seen: StepObservation) -> None:
        """Every input allocation kept its values and its version counter (spec section 5)."""
        for state in seen.inputs:
            if state.changed:
                diff = field_diff(state.name, state.before, state.after, offset=state.offset,
                                  length=state.length)
                self.fail(f"modified its input (inputs are read-only, spec §5)\n{diff}")
            if state.version_after != state.version_before:
                self.fail(f"wrote to its input {state.name} in place (torch's version counter went "
                          f"from {state.version_before} to {state.version_after}), then restored "
                          f"its values: inputs are read-only (spec §5), and another stream may "
                          f"read them")

    def outputs(self, seen: StepObservation, expected: dict[str, list], poison: dict[str, list],
                lengths: dict[str, int]) -> None:
        """Every output allocation equals ``expected`` (guard zones included)."""
        for name in subject_of(self.case).outputs:
            diff = field_diff(name, expected[name], seen.outputs_after[name], offset=GUARD,
                              length=lengths[name], poison=poison[name])
            if diff:
                self.fail(diff)


def _judge_launcher(case: Case, seen: Observation, verdict: Verdict) -> None:
    subject = subject_of(case)
    n = len(case.steps)
    poison: dict[str, list] = {}
    expected: dict[str, list] = {}
    for step_seen in seen.steps:
        k, r, run = step_seen.index, step_seen.run_index, step_seen.run
        step = case.steps[k]
        if k == 0:
            poison = step_seen.outputs_before
            expected = poison
        verdict.where = f"step {k + 1} of {n}, " if n > 1 else ""
        verdict.where += f"run {r + 1} of 2 (fresh poison {run!r})"
        if r:
            verdict.where += (": the first run matched, so the output depends on what the "
                              "buffers held before, or is nondeterministic")
        verdict.error(step, step_seen.raised)
        verdict.returned(step_seen)
        verdict.unchanged(step_seen)
        if step.error is None:
            expected = expand_golden(subject, expected, step.expect)
        verdict.outputs(step_seen, expected, poison, seen.output_lengths)


def judge(case: Case, observation: Observation, target_name: str, device) -> None:
    """Judge ``observation`` of ``case`` on the planner ``target_name`` that ran on ``device``.

    Raises:
        ConformanceFailure: the first difference from the case's expectation (readable report).
    """
    verdict = Verdict(case, target_name, device)
    want = len(RUNS) * len(case.steps) if case.entry == "launcher" else 1
    if len(observation.steps) != want:
        verdict.fail(f"the observation holds {len(observation.steps)} of {want} calls: the run did "
                     f"not finish, so nothing can be judged")
    if case.entry == "launcher":
        _judge_launcher(case, observation, verdict)
    else:
        verdict.error(case.steps[0], observation.steps[0].raised)
