"""The readable text of a one-call verdict (:mod:`conformance.engine.one_call`): a count of its
differences by rule, then the first :data:`SHOWN` of them. The verdict itself
(:class:`~conformance.engine.verdict.VerdictData`) keeps more, and decides the status; this text
is only what a person reads.
"""

from __future__ import annotations

from conformance.engine.verdict import VerdictData

SHOWN = 8
"""Differences a failure's text lists (the verdict keeps more)."""


def failure_text(verdict: VerdictData) -> str:
    """The readable lines of a verdict with differences: a count by rule, then the first
    :data:`SHOWN` differences (run, field, index, expected, got, what, rule)."""
    by_rule = ", ".join(f"{rule} ({n})" for rule, n in sorted(verdict.by_rule.items()))
    lines = [f"{verdict.count} difference(s), decided by: {by_rule}"]
    for d in verdict.differences[:SHOWN]:
        at = d.field if d.index is None else f"{d.field}[{d.index}]"
        lines.append(f"  run {d.run}: {at}: expected {d.expected}, got {d.got} ({d.what}; "
                     f"rule {d.rule})")
    if verdict.count > SHOWN:
        lines.append(f"  ... and {verdict.count - SHOWN} more")
    return "\n".join(lines)
