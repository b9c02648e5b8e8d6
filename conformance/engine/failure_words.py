"""The words of a failure report (:mod:`conformance.engine.judge`): which call of a case it is, the
rule that decides a difference, and the spec's clause for it (the section-5 clause of a contract
element, the section-6 situation of a project rule's, the spec item of a documented error), all
read from the corpus subject's ``element_rules``, ``section6`` and ``errors``; and how a
planner's own text is quoted in it (:func:`quoted`, :func:`one_line`).
"""

from __future__ import annotations

from conformance.corpus.case_file import printable
from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.corpus.corpus_subject import errors as _errors
from conformance.corpus.corpus_subject import section6 as _section6
from conformance.engine.plain import PLAIN
from conformance.engine.verdict import Difference

CONTRACT = _element_rules.CONTRACT
contract_clause = _element_rules.contract_clause
BY_KEY = _section6.BY_KEY
RAISES_WRITE_NOTHING = ("spec §4: the checks run before the launch, so a step that must raise "
                        "writes nothing")
"""The clause of every output element a step that must raise wrote."""


QUOTE = "    | "
"""What starts every line of a planner's own text (its traceback, its message) in a failure: no
line it writes can read as one of the harness's (a ``rerun:`` line, a ``decided by:`` line)."""


def quoted(text: str) -> str:
    """A planner's multi-line text for a failure: each line after :data:`QUOTE`, its control and
    format characters escaped (:func:`~conformance.corpus.case_file.printable`)."""
    return "\n".join(QUOTE + printable(line) for line in (text.splitlines() or [""]))


def one_line(text: str) -> str:
    """A planner's text (a class name, a repr) as one line, control characters escaped."""
    return printable(str(text))


def rule_name(rule: str) -> str:
    """``rule``, with its section-6 situation after it when it is a row of spec section 6."""
    if rule in BY_KEY:
        return f"{rule} (spec §6: {BY_KEY[rule].situation})"
    return rule


def error_clause(error_id: str) -> str:
    """The line that quotes where the expected documented error ``error_id`` comes from (its
    catalog entry's spec item), or nothing for an id the catalog lacks."""
    entry = _errors.CATALOG.get(error_id)
    if entry is None:
        return ""
    return (f"\n    spec {entry.spec}: the documented error {error_id!r}, raised as its exact "
            f"message by the first check that fails, in spec §4's order")


def clause(diff: Difference, bs: int, raises: bool = False) -> str:
    """The spec's words for the rule that decides ``diff``, an output element of a step of ``bs``
    requests (``raises``: a step that must raise): the section-5 clause where the contract decides
    it, the section-6 situation where a project rule does."""
    if diff.what == "outside":
        return "spec §6: no implementation may ever read or write outside a tensor"
    if raises:
        return RAISES_WRITE_NOTHING
    if diff.rule == CONTRACT:
        return contract_clause(diff.field, diff.index, bs)
    row = BY_KEY.get(diff.rule)
    return f"spec §6: {row.situation} (this project's column)" if row else f"rule {diff.rule}"


def where(k: int, n: int, r: int, run: str) -> str:
    """Which call of a case of ``n`` steps a report is about: step ``k`` (0-based) in run number
    ``r`` (0-based) named ``run`` (a poison run, or the plain run), and what that tells."""
    text = f"step {k + 1} of {n}, " if n > 1 else ""
    if run == PLAIN:
        return text + ("the plain run (outputs zero-filled, every tensor in an allocation of its "
                       "own, no poison, no guard zone it can see, as a server hands them over): "
                       "both poisoned runs matched, so this appeared only on plain buffers")
    text += f"run {r + 1} of 2 (fresh poison {run!r})"
    if r:
        text += (": the first run matched, so the output depends on what the buffers held "
                 "before, or is nondeterministic")
    return text
