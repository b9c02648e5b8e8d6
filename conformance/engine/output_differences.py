"""Every element of every output allocation of one call (one run of one step) against its
expected state, guard zones included (spec section 5): the differences, and the report's lines
for them (:mod:`conformance.engine.judge` puts them in its report when the call is the first
that differs).

Each differing element is one :class:`~conformance.engine.verdict.Difference`: ``outside``
outside the tensor (with its proof, :func:`conformance.engine.outside.outside_proof`),
``never-written`` where it still holds the poison it was filled with, ``written`` where it must
keep what it held, else ``value``; it carries the rule that decides it and, for an output indexed
by request, its request's inputs. The lines: per output, its diff
(:func:`conformance.engine.diff.field_diff`, with the per-request inputs under it), the count by
rule and the spec's words for each; on a step that must raise and did not raise exactly its error,
one line of what it wrote instead (the writes follow from the error's difference).
"""

from __future__ import annotations

from collections import Counter

from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.corpus.case_model import Case
from conformance.corpus.subject import subject_of
from conformance.engine.diff import differing_indices, field_diff
from conformance.engine.failure_words import RAISES_WRITE_NOTHING
from conformance.engine.failure_words import clause as _clause
from conformance.engine.observe import StepObservation
from conformance.engine.outside import outside_proof
from conformance.engine.plain import PLAIN
from conformance.engine.verdict import Difference, rule_line, rule_name

StepRules = _element_rules.StepRules


def output_differences(case: Case, k: int, run: str, seen: StepObservation, expected: dict,
                       poison: dict, lengths: dict, rules: StepRules, error_ok: bool = True,
                       report: bool = True) -> tuple[list[Difference], list[str]]:
    """The differences of step ``k`` of ``case`` in ``run`` between every element of every output
    allocation (``seen.outputs_after``) and ``expected`` (guard zones included; ``poison``: the
    outputs as the run's first step found them, ``lengths``: each output's length without its
    guard zones), and, when ``report``, the report's lines for them. On a step that must raise
    and did not raise exactly its error (``error_ok`` False), what it wrote is one line: the
    writes follow from the error's difference, reported above it, and each is kept as data all
    the same. An element of an output indexed by request carries its request's inputs, and the
    table under a field's diff shows them."""
    subject, step = subject_of(case), case.steps[k]
    guard, bs, raises = seen.guard, step.bs, step.error is not None
    differences: list[Difference] = []
    lines: list[str] = []
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
            differences.append(diff)
            counts[diff.rule] += 1
            firsts.setdefault(diff.rule, i)
            clauses[_clause(diff, bs, raises)] = None
        if counts and raises and not error_ok and report:
            wrote[name] = sum(counts.values())
        elif counts and report:
            lines.extend(field_diff(name, want, got, offset=guard, length=lengths[name],
                                    poison=None if run == PLAIN else poison[name],
                                    inputs=shown,
                                    also={f"first under {rule_name(r)}": i
                                          for r, i in firsts.items()}
                                    ).splitlines())
            lines.append("  " + rule_line(counts))
            lines.extend(f"    {clause}" for clause in clauses)
    if wrote:
        lines.append("  and wrote " + ", ".join(f"{n} element(s) of {name}"
                                                for name, n in wrote.items()))
        lines.append(f"    {RAISES_WRITE_NOTHING}")
    return differences, lines


def _at(values: list, i: int):
    return values[i] if i < len(values) else None
