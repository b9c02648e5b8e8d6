"""What a planner did where each section-6 situation of a case shows (spec section 6), credited
from every difference the judge saw at those elements in any run (not only the verdict's kept
ones): ``rule`` (as the row's rule says), ``raised``, ``raised-shared`` (a raise on a step that
shows other rows too: which one it raised on cannot be told, but it raised where this one shows),
``outside`` (an access outside a tensor), ``never-written``, ``upstream`` (every differing element
holds the value upstream's kernel gives there, :attr:`StepRules.upstream`, and is decided by that
row), or ``other``; for the 0-d rule,
``no-error``, ``rule`` or ``other``. The words
land in :attr:`conformance.engine.verdict.VerdictData.situations` (row key -> word), which the
reports read.
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import element_rules as _element_rules

ZERO_D = _element_rules.ZERO_D
StepRules = _element_rules.StepRules


def credit_situations(situations: dict[str, str], at_element: dict[tuple, set[str]],
                      rules_per_step: list[StepRules], got_at: dict[tuple, set]) -> None:
    """Credit each row that a step of the case shows (``rules_per_step``: each step's rules) in
    ``situations``, from ``at_element`` ((step, field, index) -> what differed there, in any run;
    ``outside`` for an access outside a tensor) and ``got_at`` (the same keys -> every value seen
    there where it was another value). A raise on a step where that row alone shows is
    ``raised``; on a step that reaches several rows, ``raised-shared`` for each (which one the
    planner raised on cannot be told, but none of them was simply not reached)."""
    errors = {step: what for (step, _, _), whats in at_element.items()
              for what in sorted(whats) if what in ("error", "no-error", "raised")}
    raised = {step for step, what in errors.items() if what == "raised"}
    for k, rules in enumerate(rules_per_step):
        if rules.error == ZERO_D:
            word = {"no-error": "no-error", None: "rule"}.get(errors.get(k), "other")
            _credit(situations, ZERO_D, word)
        for row, where in rules.shows.items():
            seen = set().union(*(at_element.get((k, name, index), ())
                                 for name, index in where))
            word = "rule"
            if k in raised:
                word = "raised" if len(rules.shows) == 1 else "raised-shared"
            elif "outside" in seen:
                word = "outside"
            elif "never-written" in seen:
                word = "never-written"
            elif seen:
                word = "upstream" if _as_upstream(k, row, where, at_element, got_at,
                                                  rules) else "other"
            _credit(situations, row, word)


def _as_upstream(k: int, row: str, where, at_element: dict, got_at: dict,
                 rules: StepRules) -> bool:
    """Whether every element of ``where`` that differed on step ``k`` differed only in value, is
    decided by ``row`` itself, and every value seen there is upstream's (``rules.upstream``:
    (field, index) -> value). Upstream's value is that of the row that decides the element (the
    flat read past the row): a seed that also shows another row (a past-row seed whose clamped
    slot is past the LUT shows ``lut-clamp`` too) says nothing of upstream's behaviour there."""
    differed = [(name, index) for name, index in where if (k, name, index) in at_element]
    return bool(differed) and all(
        at_element[(k, name, index)] == {"value"} and (name, index) in rules.upstream
        and rules.rule(name, index) == row
        and {int(v) for v in got_at.get((k, name, index), ())} == {rules.upstream[(name, index)]}
        for name, index in differed)


def _credit(situations: dict[str, str], row: str, word: str) -> None:
    """Keep the most telling word seen for ``row``: any deviation over ``rule``, and any other
    deviation over ``upstream`` (upstream's value on one step, another on a later one, is not
    upstream's behaviour)."""
    if situations.get(row) in (None, "rule") or (
            situations.get(row) == "upstream" and word not in ("rule", "upstream")):
        situations[row] = word
