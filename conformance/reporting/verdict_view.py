"""A result's verdict (the results file's ``verdict``, :mod:`conformance.engine.verdict`) as the
report shows it: the one line that says what went wrong, the rules that decide it, and what each
documented error step did.

Everything here reads the verdict's data (its first difference, ``by_rule``, ``error_steps``);
a result without one (a case error, a changed torch state, a crash) has no summary here: the report
falls back on :func:`conformance.reporting.report.first_detail` of its text.
"""

from __future__ import annotations

from collections import Counter

from conformance.engine.verdict import describe, rule_line

PASSED = ("pass", "xpass")
"""Statuses whose planner did everything its case requires (an ``xpass`` is a declared divergence
that did not show): every error step raised exactly the documented error."""
ACCEPTED = ("declared",)
"""Statuses a manifest accepts (spec section 8): their error steps count as raised as documented
(the report names how many such cases a count holds)."""


def summary(result: dict) -> str | None:
    """What went wrong, in one line: the verdict's first difference (``step N:`` before it when
    it is not the case's first step); None without a verdict."""
    verdict = result.get("verdict")
    if not verdict or not verdict.get("differences"):
        return None
    diff = verdict["differences"][0]
    step = f"step {diff['step'] + 1}: " if diff["step"] else ""
    return step + describe(diff)


def more(result: dict) -> int:
    """How many differences the verdict holds besides the one :func:`summary` names."""
    verdict = result.get("verdict")
    return max(verdict["count"] - 1, 0) if verdict and verdict.get("differences") else 0


def rules(result: dict) -> str:
    """``decided by: contract (3), project rule past-row (1)``, from ``verdict.by_rule``; empty
    without a verdict."""
    verdict = result.get("verdict")
    return rule_line(Counter(verdict["by_rule"])) if verdict and verdict.get("by_rule") else ""


def error_outcomes(result: dict) -> dict[str, str]:
    """{error id: ``ok`` / ``failed`` / ``declared`` / ``not judged``} for each documented error
    the result's case expects (``error_ids``).

    From ``verdict.error_steps`` when the result has a verdict: ``failed`` when a step expecting
    that id failed in any run (not raised, another message, type or order; spec section 4),
    whatever else in the case differed. Without one: ``ok`` for a :data:`PASSED` status (nothing
    differed), ``declared`` for a declared divergence, ``not judged`` otherwise (a crash, a
    timeout, a sanitizer report, a skip, an xfail: nothing was compared, so nothing failed or
    passed).
    """
    ids = result.get("error_ids") or []
    verdict = result.get("verdict")
    status = result["status"]
    if verdict is None:
        outcome = ("ok" if status in PASSED else "declared" if status in ACCEPTED
                   else "not judged")
        return {i: outcome for i in ids}
    out = {}
    for i in ids:
        steps = [s["ok"] for s in verdict.get("error_steps", []) if s["id"] == i]
        if not steps:
            out[i] = "not judged"
        elif all(steps):
            out[i] = "ok"
        else:
            out[i] = "declared" if status in ACCEPTED else "failed"
    return out
