"""Failures grouped by their first difference, so that N failures of one bug read as one pattern.

Every not-passing result (:data:`~conformance.reporting.results_format.BAD`) of a planner is keyed
by its verdict's data (:mod:`conformance.engine.verdict`), never by its report's text: the kind
of its first difference that a rule the result was judged on decides (:func:`key_difference`: an
external planner's project-rule difference never fails a case under ``--profile contract``, so a
case that failed on the contract is filed under its first contract difference, not under an
earlier project-rule one), that is what happened (``what``), to which field, under which rule; for
a difference about an error, the documented error id its step expects (``error_steps``) and the
kind of what was raised (``got_kind``); a result with no verdict (a crash, a timeout, a sanitizer
report, a case error, a declared divergence that passed) by its status alone. The element's index
and the values are left out of the key: one bug shows at another index in each case.

:func:`groups` builds them from results as the results file holds them (the terminal summary,
:mod:`conformance.plugin.tally`, from the results writer's records, the same data);
:func:`terminal_lines` and :func:`markdown_lines` print them, and the HTML report's template reads
:func:`groups`' data. Case ids and field names come from files a user wrote: each renderer quotes
them (:func:`~conformance.corpus.case_file.printable`, a code span, Jinja2's autoescape).
"""

from __future__ import annotations

import textwrap

from tabulate import tabulate

from conformance.corpus.text import counted, natural_key
from conformance.corpus.case_file import printable
from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.entries import LOAD
from conformance.corpus.rule_kinds import CONTRACT, WRAPPER, kind_of
from conformance.engine.verdict import DEFAULT_PROFILE, PROFILES
from conformance.reporting.markdown import code_span
from conformance.reporting.results_format import BAD

MAX_PATTERNS = 10
"""Patterns shown per planner; the rest are counted on one line."""
MAX_CASES = 5
"""Case ids shown per pattern; the rest are counted (``and N more``)."""
WIDTH = 120
"""The widest terminal line (the conformance summary's)."""
TITLE = "failures by first difference:"
"""The line that opens the block in the text report."""
SUMMARY_TITLE = ("failures by first difference (when many cases fail, read these lines first; "
                 "-x or --maxfail=N stops a run early):")
"""The line that opens the block at the end of a run's conformance summary: a failing run of the
corpus prints every failure's report above it (one bug's 86 failures: some 1,400 lines), and these
few lines are the ones to read; pytest's ``-x`` / ``--maxfail`` end a run at its first failures."""
MARKDOWN_TITLE = "**By first difference:**"
"""The line that opens the Markdown table (under the report's ``### Not passing``)."""
ERRORS = ("error", "no-error", "raised")
"""Kinds of difference about a step's error (spec section 4) rather than an element."""
_ELEMENT = {
    "value": "{field}: another value",
    "never-written": "{field}: never written",
    "written": "{field}: written where it must keep what it held",
    "outside": "{field}: written outside the tensor",
    "input": "input {field} modified",
    "returned": "returned a value (a launcher returns None)",
}
_NO_VERDICT = {
    "crash": "crashed", "timeout": "timed out",
    "oob": "an access outside an allocation (compute-sanitizer, or a write into a hidden guard "
           "after the case's last call)",
    "error": "an error before a verdict (the case did not run, or the harness failed)",
    "xpass": "a declared divergence that did not show",
}


_AFTER = {
    "death": "the worker died after the case's last call",
    "hang": "the worker hung or was stopped after the case's last call (it did not end when told "
            "to)",
    "write-inside": "wrote into an argument after the case's last call",
    "write-outside": "wrote outside an argument after the case's last call",
    "state": "changed its process state after the case's last call",
}
"""A result failed after its case's last call, by its ``after_last_call``
(:data:`conformance.robustness.after_last_call.CAUSES`)."""
LOAD_FAULT = "load fault"
"""A pattern's ``what`` for a result of the ``load`` pseudo-planner (a case file's fault)."""
AFTER = "after last call: "
"""What a pattern's ``what`` starts with for a result :data:`_AFTER` names."""


def _text(value) -> str | None:
    """A key part as text (a hand-edited results file may hold any JSON there)."""
    return None if value is None else str(value)


def judged_kinds(result: dict, profile: str | None = None) -> tuple[str, ...]:
    """The rule kinds ``result`` was judged on (spec section 8), as
    :meth:`conformance.plugin.profiles.ProfileJudge.judged_pins` chose them: every kind for a
    built-in planner and a one-call subject's (``subject``), and for a result a manifest names
    (``divergence``: a declared divergence that showed another outcome keeps its observed status,
    judged on every rule); else ``profile``'s (:data:`DEFAULT_PROFILE` when None or unknown)."""
    if result.get("subject") or result.get("divergence") \
            or str(result.get("planner")) in _registry.builtin_names():
        return PROFILES["all"]
    return PROFILES.get(profile or DEFAULT_PROFILE, PROFILES[DEFAULT_PROFILE])


def key_difference(result: dict, profile: str | None = None) -> dict | None:
    """The difference that keys a not-passing ``result``: its first one (verdict order) whose rule
    is one the result was judged on (:func:`judged_kinds`; the contract's always are), else its
    first one; None without a verdict or a difference."""
    verdict = result.get("verdict")
    diffs = verdict.get("differences") if isinstance(verdict, dict) else None
    diffs = [d for d in diffs if isinstance(d, dict)] if isinstance(diffs, list) else []
    if not diffs:
        return None
    judged = judged_kinds(result, profile)
    return next((d for d in diffs if isinstance(d.get("rule"), str)
                 and (d["rule"] == CONTRACT or kind_of(d["rule"]) in judged)), diffs[0])


def pattern(result: dict, profile: str | None = None) -> tuple:
    """The key of a not-passing ``result``: (status, what, field, rule, expected error id, got
    kind) of its :func:`key_difference`, the last five None where it has no verdict with a
    difference; (status, :data:`AFTER` + cause, None, ...) where it failed after its case's last
    call (its ``after_last_call``), (status, :data:`LOAD_FAULT`, None, ...) for a case file's
    fault; ``profile``: what an external planner was judged on (:func:`judged_kinds`)."""
    if str(result.get("planner")) == LOAD:  # a case file's fault, not a planner's
        return (_text(result.get("status")), LOAD_FAULT, None, None, None, None)
    after = result.get("after_last_call")
    if after is not None:  # its verdict, if any, is the pass before it
        return (_text(result.get("status")), AFTER + str(after), None, None, None, None)
    first = key_difference(result, profile)
    if first is None:
        return (_text(result.get("status")), None, None, None, None, None)
    verdict = result["verdict"]
    what = _text(first.get("what"))
    expected = got = None
    if what in ERRORS:
        steps = [s for s in verdict.get("error_steps") or () if isinstance(s, dict)]
        expected = next((_text(s.get("id")) for s in steps if s.get("step") == first.get("step")),
                        None)
        got = _text(first.get("got_kind"))
    return (_text(result.get("status")), what, _text(first.get("field")),
            _text(first.get("rule")), expected, got)


def _rule_words(rule: str | None) -> str:
    return rule if rule in (CONTRACT, WRAPPER, None) else f"project rule {rule}"


def words(key: tuple) -> str:
    """A pattern's key in words: ``out_write_offsets: another value (contract)``, ``wrong error:
    expected [dtype], got TypeError [dtype] (contract)``."""
    status, what, field, rule, expected, got = key
    if what == LOAD_FAULT:
        return ("a case file that does not load, or a --case id that names no case (the case "
                "file's fault, not the planner's)")
    if what is not None and what.startswith(AFTER):
        cause = what[len(AFTER):]
        return f"{status}: " + _AFTER.get(cause, f"{cause} after the case's last call")
    if what is None:
        return _NO_VERDICT.get(status, f"{status}, with no verdict (its report says why)")
    want = f"[{expected}]" if expected else "the documented error"
    if what == "error":
        text = f"wrong error: expected {want}, got {got or 'another error'}"
    elif what == "no-error":
        text = f"no error raised: expected {want}"
    elif what == "raised":
        text = f"raised {got or 'an exception'} on a valid step"
    else:
        text = _ELEMENT.get(what, "{field}: " + what).format(field=field)
    text += f" ({_rule_words(rule)})"
    return text if status == "fail" else f"{status}: {text}"



def differing(result: dict, profile: str | None = None) -> int:
    """How many output elements of ``result`` differ under a rule it was judged on
    (:func:`judged_kinds`; its verdict's ``by_rule``, over every run and step): 0 for a result
    without such a verdict (an error, a crash: one thing went wrong) and for one failed after its
    case's last call (its verdict is the pass before)."""
    verdict = result.get("verdict")
    by_rule = verdict.get("by_rule") if isinstance(verdict, dict) else None
    if result.get("after_last_call") is not None or not isinstance(by_rule, dict):
        return 0
    judged = judged_kinds(result, profile)
    return sum(n for rule, n in by_rule.items()
               if isinstance(rule, str) and isinstance(n, int) and not isinstance(n, bool)
               and n > 0 and (rule == CONTRACT or kind_of(rule) in judged))


SAID_CHARS = 100
"""The most characters of a raised exception's message a pattern's words repeat."""


def _said(result: dict, profile: str | None) -> str | None:
    """The message of the exception ``result`` raised on a valid step, when that is its key
    difference (``TypeError: launch() got an unexpected keyword argument 'prefix_len'``, its
    first line, at most :data:`SAID_CHARS` characters); None otherwise."""
    first = key_difference(result, profile) if result.get("after_last_call") is None else None
    got = first.get("got") if first is not None and first.get("what") == "raised" else None
    if not isinstance(got, str) or not got.strip():
        return None
    line = got.strip().splitlines()[0]
    kind = first.get("got_kind")
    if isinstance(kind, str) and line.startswith(f"{kind}: "):  # the words name the class already
        line = line[len(kind) + 2:]
    return line if len(line) <= SAID_CHARS else line[:SAID_CHARS - 3] + "..."


def groups(results: list[dict], order=None, link=None,
           profile: str | None = None) -> list[dict]:
    """One entry per planner with not-passing results, in ``order`` (a sort key of the planner's
    name; by name without one): ``{"planner", "failed", "patterns", "listed", "more_patterns",
    "more_cases"}``: every pattern, largest first, and what a report lists of them: the first
    :data:`MAX_PATTERNS`, then how many patterns and failures it leaves out. Each pattern is
    ``{"key", "words", "count", "cases", "listed", "more"}``: ``words`` the key in words
    (:func:`words`; a pattern of exceptions raised on valid steps adds their message when every
    result of it raised the same one: a misspelt keyword named once), ``count`` its failed results,
    ``cases`` its distinct cases as ``{"case", "anchor", "size"}``, fewest differing elements
    first (``size``, :func:`differing`; then in natural order of their ids: the smallest repro
    leads), ``anchor`` from ``link(result)`` or None, the first :data:`MAX_CASES` of them
    listed, ``more`` left out. A result's ``planner`` is taken as given (the report's label); its
    case is its ``case`` or, lacking one, its ``id``; ``profile``: the run's ``--profile``, what
    an external planner's results were judged on (:func:`pattern`; default
    :data:`DEFAULT_PROFILE`)."""
    by_planner: dict[str, dict[tuple, list[dict]]] = {}
    for r in results:
        if r.get("status") not in BAD:
            continue
        case = str(r.get("case") or r.get("id") or "?")
        entry = {"case": case, "anchor": link(r) if link else None, "size": differing(r, profile),
                 "said": _said(r, profile)}
        by_planner.setdefault(str(r["planner"]), {}).setdefault(pattern(r, profile),
                                                                []).append(entry)
    out = []
    for planner in sorted(by_planner, key=order or (lambda p: p)):
        found = []
        for key, entries in by_planner[planner].items():
            unique: dict[str, dict] = {}  # a case failed twice (two load faults) is listed once
            for entry in entries:
                unique.setdefault(entry["case"], entry)
            cases = sorted(unique.values(), key=lambda c: (c["size"], natural_key(c["case"])))
            said = {e["said"] for e in entries}
            text = words(key) + (f": {said.pop()}" if len(said) == 1 and None not in said else "")
            found.append({"key": key, "words": text, "count": len(entries), "cases": cases,
                          "listed": cases[:MAX_CASES], "more": max(len(cases) - MAX_CASES, 0)})
        found.sort(key=lambda p: (-p["count"], p["words"]))
        rest = found[MAX_PATTERNS:]
        out.append({"planner": planner, "failed": sum(p["count"] for p in found),
                    "patterns": found, "listed": found[:MAX_PATTERNS], "more_patterns": len(rest),
                    "more_cases": sum(p["count"] for p in rest)})
    return out


def _count_line(group: dict) -> str:
    return (f"{counted(group['failed'], 'failed case')}, "
            f"{counted(len(group['patterns']), 'pattern')}")


def _cases_text(pattern_: dict, quote=str) -> str:
    more = f" and {pattern_['more']} more" if pattern_["more"] else ""
    return ", ".join(quote(c["case"]) for c in pattern_["listed"]) + more


def terminal_lines(found: list[dict], width: int = WIDTH, title: str = TITLE) -> list[str]:
    """The terminal block (none without failures): ``title`` (:data:`TITLE`, or the summary's
    :data:`SUMMARY_TITLE`), a line per planner, then a line per pattern (count, words, case ids),
    wrapped at ``width``; every non-printable character escaped."""
    if not found:
        return []
    out = [title]
    for group in found:
        out.append(f"  {printable(group['planner'])}  {_count_line(group)}")
        digits = len(str(group["listed"][0]["count"]))  # the largest
        for p in group["listed"]:
            line = f"    {p['count']:>{digits}}  {printable(p['words'])}   " \
                   f"{printable(_cases_text(p))}"
            out += textwrap.wrap(line, width, subsequent_indent=" " * (6 + digits),
                                 break_long_words=False, break_on_hyphens=False)
        if group["more_patterns"]:
            out.append(f"    and {counted(group['more_patterns'], 'more pattern')} "
                       f"({counted(group['more_cases'], 'failed case')})")
    return out


def markdown_lines(found: list[dict]) -> list[str]:
    """The Markdown lines (none without failures): a title line, then a table with a row per
    pattern; the planner, the words and each case id a code span (a results file is untrusted
    text)."""
    if not found:
        return []
    rows = []
    for group in found:
        for p in group["listed"]:
            rows.append([code_span(group["planner"]), p["count"], code_span(p["words"]),
                         _cases_text(p, code_span)])
        if group["more_patterns"]:
            rows.append([code_span(group["planner"]), group["more_cases"],
                         f"and {counted(group['more_patterns'], 'more pattern')}", ""])
    heads = "; ".join(f"{code_span(g['planner'])}, {_count_line(g)}" for g in found)
    return [f"{MARKDOWN_TITLE} {heads}", "",
            tabulate(rows, headers=["planner", "failed", "first difference", "cases"],
                     tablefmt="github")]
