"""One call's raise against the error its step expects (spec section 4): the difference, and the
report's text for it, or None when the call did what the step requires.

A step that expects no error must not raise (the step's error rule decides a raise: ``contract``,
``wrapper`` or the 0-d rule, the corpus subject's ``StepRules.error``). A step that expects one
must raise it exactly: its type, exact message and catalog id, compared part by part by
:func:`conformance.engine.error_parts.error_parts` (the rule, written there once); a wrong
error's difference keeps those parts.
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.engine.error_parts import conforms, documented_message, error_parts
from conformance.engine.failure_words import error_clause as _error_clause
from conformance.engine.failure_words import one_line, quoted
from conformance.engine.failure_words import rule_name as _rule_name
from conformance.engine.observe import Raised
from conformance.engine.verdict import ERROR_PARTS, Difference, error_kind

CONTRACT = _element_rules.CONTRACT
StepRules = _element_rules.StepRules


def error_difference(k: int, run: str, want: dict | None, raised: Raised | None,
                     rules: StepRules, device: str) -> tuple[Difference, str] | None:
    """(the difference, its report text) of step ``k``'s call in ``run``, which raised ``raised``
    (None: it returned) on ``device`` where the step expects the error ``want`` (None: none); None
    when it matched."""
    if want is None:
        if raised is None:
            return None
        text = (f"raised {one_line(raised.class_name)} on a valid step:\n"
                f"{quoted(raised.traceback_tail)}\n  decided by: {_rule_name(rules.error)}")
        if rules.error == CONTRACT:
            text += ("\n    spec §5: every input that passes validation is planned (section 6 "
                     "says what an out-of-contract value gets); no raise after the checks")
        return Difference(k, run, "raised", "error", None, None,
                          f"{raised.class_name}: {raised.message[:200]}", rules.error,
                          got_kind=raised.class_name), text
    message = documented_message(want, device)
    expected = f"{want['type']} [{want['id']}] {message!r}"
    if raised is None:
        return (Difference(k, run, "no-error", "error", None, expected, None, CONTRACT),
                f"expected {expected}\n     but the call returned normally\n"
                f"  decided by: contract (a step that must raise and returned, spec §8)"
                f"{_error_clause(want['id'])}")
    parts = error_parts(want, device, raised)
    if conforms(parts):
        return None
    got_id = parts["id"]["got"]  # one line, None when the message is no catalog entry's
    shown_id = "unidentified" if got_id is None else got_id
    got = f"{one_line(raised.class_name)} [{shown_id}] {raised.message!r}"
    type_ok = parts["type"]["same"]
    differed = [p for p in ERROR_PARTS if not parts[p]["same"]]
    matched = [p for p in ERROR_PARTS if parts[p]["same"]]
    detail = f"wrong error {' and '.join(differed)}"
    if matched:
        detail += f" ({' and '.join(matched)} matched)"
    detail += f"\n  expected {expected}\n       got {got}"
    if got_id is None:
        detail += ("\n  ([unidentified]: its message is no documented error's, so it has no "
                   "catalog id)")
    if raised.class_name == want["type"] and not type_ok:
        detail += (f"\n  ({one_line(raised.class_name)} here is a class of that name, not a "
                   f"subclass of the built-in {want['type']})")
    detail += f"\n  decided by: {_rule_name(rules.error)}{_error_clause(want['id'])}"
    kind = error_kind(raised.class_name, not type_ok and raised.class_name == want["type"],
                      got_id, not parts["message"]["same"] and parts["id"]["same"])
    return Difference(k, run, "error", "error", None, expected, got, rules.error,
                      got_kind=kind, error_parts=parts), detail
