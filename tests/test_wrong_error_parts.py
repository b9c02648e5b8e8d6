"""A wrong error says which part of the documented error differed (spec section 4: its built-in
class, its exact message, its catalog id), from the verdict's data (``error_parts``,
conformance/engine/error_parts.py), in every report's line for the failure: a raise of the right
type with another message reads as a wrong message, never as a wrong type.

The real run is ``b`` of tests/report_runs.py: ``tests.planted.wrong_planners:wrong_error_message``
raises the right ``ValueError`` for ``err-dtype-prefix-lens`` with torch's dtype names written
without their ``torch.`` prefix. The expected message is the one spec section 4 documents
(``impls/offsets_planner/errors.py``, ``dtype``) for that case's int32 ``prefix_lens``.
"""

from __future__ import annotations

import copy

import pytest

from conformance.corpus.corpus_subject import element_rules
from conformance.engine.error_parts import conforms, error_parts
from conformance.engine.observe import Raised
from conformance.engine.step_error import error_difference
from conformance.engine.verdict import describe
from conformance.reporting.report import build
from conformance.reporting.report_render import render_html, render_markdown, render_text
from conformance.reporting.results_format import load_results
from tests.report_runs import PLANNER, run
from tests.subproc import run_pytest

DOCUMENTED = "kv-canary: prefix_lens must have dtype torch.int64, got torch.int32"
"""Spec section 4's ``dtype`` message for an int32 ``prefix_lens`` (the case's expected error)."""
RAISED = "kv-canary: prefix_lens must have dtype int64, got int32"
"""What the planted planner raises instead: the same words, torch's prefix dropped."""
FIRST_DIFFERENCE = len("kv-canary: prefix_lens must have dtype ")
"""Where the two messages part: ``torch.int64`` against ``int64``."""
WANT = {"type": "ValueError", "id": "dtype", "message": DOCUMENTED}
LINE = ("wrong error message (the type ValueError and the id [dtype] matched): expected message "
        f"'{DOCUMENTED}', got '{RAISED}' (first difference at character {FIRST_DIFFERENCE})")
"""The line every report gives the failure."""


def _raised(exc: BaseException) -> Raised:
    """``exc`` as the engine records a raise (conformance/engine/observe.py)."""
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001 - the exception under test
        return Raised.of(caught)


def _wrong_message_result(doc: dict) -> dict:
    return next(r for r in doc["results"] if r["id"] == f"err-dtype-prefix-lens[{PLANNER}]")


def test_the_parts_of_a_raise_are_compared_one_by_one():
    right_type = error_parts(WANT, "cpu", _raised(ValueError(RAISED)))
    assert right_type == {
        "type": {"expected": "ValueError", "got": "ValueError", "same": True},
        "message": {"expected": DOCUMENTED, "got": RAISED, "same": False,
                    "first_difference": FIRST_DIFFERENCE},
        "id": {"expected": "dtype", "got": "dtype", "same": True}}  # its words match the template
    wrong_type = error_parts(WANT, "cpu", _raised(TypeError(DOCUMENTED)))
    assert [wrong_type[p]["same"] for p in ("type", "message", "id")] == [False, True, True]
    assert wrong_type["type"]["got"] == "TypeError"
    assert wrong_type["message"]["first_difference"] is None

    class PlanError(ValueError):
        pass

    subclass = error_parts(WANT, "cpu", _raised(PlanError(DOCUMENTED)))
    assert subclass["type"] == {"expected": "ValueError", "got": "PlanError", "same": True}
    named_alike = error_parts(WANT, "cpu", _raised(type("ValueError", (Exception,), {})("x")))
    assert named_alike["type"] == {"expected": "ValueError", "got": "ValueError", "same": False}
    assert named_alike["id"] == {"expected": "dtype", "got": None, "same": False}
    on_device = {"type": "ValueError", "id": "device", "message": "on {device}"}
    assert error_parts(on_device, "cuda:0", _raised(ValueError("on cuda:0")))["message"]["same"]


def test_the_judge_decides_a_raise_from_its_parts_and_keeps_them():
    """The judge's verdict on a raise is the parts' (one rule, written once in error_parts.py):
    no difference exactly when every part is the same, else a wrong error that carries them and
    whose report text names the parts that differed."""
    rules = element_rules.StepRules(error=element_rules.CONTRACT)

    class PlanError(ValueError):
        pass

    raises = {"documented": ValueError(DOCUMENTED), "subclass": PlanError(DOCUMENTED),
              "message": ValueError(RAISED), "type": TypeError(DOCUMENTED),
              "named alike": type("ValueError", (Exception,), {})(DOCUMENTED),
              "all": KeyError("no")}
    seen = {}
    for name, exc in raises.items():
        raised = _raised(exc)
        parts = error_parts(WANT, "cpu", raised)
        got = error_difference(0, "a", WANT, raised, rules, "cpu")
        assert (got is None) == conforms(parts), name
        if got is not None:
            diff, text = got
            assert diff.error_parts == parts and diff.what == "error", name
            seen[name] = text.splitlines()[0]
    assert seen == {"message": "wrong error message (type and id matched)",
                    "type": "wrong error type (message and id matched)",
                    "named alike": "wrong error type (message and id matched)",
                    "all": "wrong error type and message and id"}


def test_each_combination_of_parts_is_said_as_it_is():
    wrong_type = {"what": "error", "field": "error", "index": None, "got": "TypeError [dtype]",
                  "expected": "ValueError [dtype]",
                  "error_parts": error_parts(WANT, "cpu", _raised(TypeError(DOCUMENTED)))}
    assert describe(wrong_type) == ("wrong error type (the message and the id [dtype] matched): "
                                    "expected type ValueError, got TypeError")
    both = {**wrong_type, "error_parts": error_parts(WANT, "cpu", _raised(KeyError("no")))}
    assert describe(both) == (
        "wrong error type and message and id: expected type ValueError, got KeyError; expected "
        f"message '{DOCUMENTED}', got \"'no'\" (first difference at character 0); expected id "
        "[dtype], got [unidentified]")
    fake = {**wrong_type, "error_parts": error_parts(
        WANT, "cpu", _raised(type("ValueError", (Exception,), {})(DOCUMENTED)))}
    assert describe(fake) == (
        "wrong error type (the message and the id [dtype] matched): expected the built-in "
        "ValueError, got a class of that name that is not a subclass of it")


def test_a_wrong_message_of_the_right_type_reads_as_one_in_every_report():
    doc = load_results(run("b").results)
    result = _wrong_message_result(doc)
    first = result["verdict"]["differences"][0]
    parts = first.get("error_parts")
    assert parts, first
    assert (parts["type"]["same"], parts["message"]["same"], parts["id"]["same"]) == (
        True, False, True)
    assert (parts["message"]["expected"], parts["message"]["got"]) == (DOCUMENTED, RAISED)
    model = build(doc, check_stale=False)
    text = render_text(model)
    assert f"  fail    {result['id']}: {LINE} (decided by: contract (3))" in text.splitlines()
    html_line = LINE.replace("'", "&#39;")  # Jinja2's autoescape
    assert f"<code>{result['id']}</code>: {html_line} <span class" in render_html(model)
    md_line = LINE.replace("'", "&#x27;")  # html.escape, inside <summary>
    assert f"<code>{result['id']}</code>: {md_line}</summary>" in render_markdown(model)


def test_a_planners_message_is_escaped_for_each_sink():
    """The raised message is the planner's text, kept in a results file that anyone may edit:
    markup and control characters in it reach no sink as such."""
    doc = copy.deepcopy(load_results(run("b").results))
    nasty = "<img src=x onerror=alert(1)>\x1b[31m `|` & done"
    result = _wrong_message_result(doc)
    result["verdict"]["differences"][0]["error_parts"]["message"]["got"] = nasty
    model = build(doc, check_stale=False)
    html, markdown, text = render_html(model), render_markdown(model), render_text(model)
    assert "<img src=x" not in html and "<img src=x" not in markdown
    said = "got &#39;&lt;img src=x onerror=alert(1)&gt;\\x1b[31m `|` &amp; done&#39;"
    assert said in html
    assert said.replace("&#39;", "&#x27;") in markdown
    assert "\x1b" not in text and "got '<img src=x onerror=alert(1)>\\x1b[31m `|` & done'" in text


def test_a_verdict_without_parts_or_with_a_broken_one_keeps_the_raised_line():
    """A verdict written before ``error_parts`` existed, or a hand-edited one, still reads: the
    raised error as the judge wrote it."""
    doc = copy.deepcopy(load_results(run("b").results))
    result = _wrong_message_result(doc)
    first = result["verdict"]["differences"][0]
    older = f"wrong error: got ValueError [dtype] '{RAISED}'"
    for broken in (None, {"type": "ValueError"}, {"type": {}, "message": {}, "id": {}}):
        first["error_parts"] = broken
        assert describe(first) == older
    del first["error_parts"]
    assert f"{result['id']}: {older}" in render_text(build(doc, check_stale=False))


@pytest.mark.slow  # a corpus run of three external planners in isolation workers: about 10 s
def test_a_wrong_error_judged_in_an_isolation_worker_says_which_part_differed(tmp_path):
    """External planners run in isolation workers by default; their verdicts are judged in the
    harness's process (conformance/robustness/isolated_case.py ``judge_observed``) and carry the
    same parts as a planner run in process."""
    errors = "tests.planted.hostile6_errors"
    planners = {f"{errors}:right_id_wrong_message": (
                    "wrong error message (the type ValueError and the id [dtype] matched): "
                    f"expected message '{DOCUMENTED}', got 'nothing is wrong here' (first "
                    "difference at character 0)"),
                f"{errors}:fake_builtin_class": (
                    "wrong error type (the message and the id [dtype] matched): expected the "
                    "built-in ValueError, got a class of that name that is not a subclass of it"),
                "tests.planted.wrong_planners:wrong_error_type": (
                    "wrong error type (the message and the id [dtype] matched): expected type "
                    "ValueError, got TypeError")}
    args = [a for p in planners for a in ("--planner", p)]
    proc, _ = run_pytest(tmp_path, *args, "--case", "err-dtype-prefix-lens")
    doc = load_results(tmp_path / "results.json")
    assert doc["complete"] and proc.returncode == 1, proc.stdout[-3000:]
    lines = render_text(build(doc, check_stale=False)).splitlines()
    for planner, said in planners.items():
        line = f"  fail    err-dtype-prefix-lens[{planner}]: {said} (decided by: contract (3))"
        assert line in lines, (line, lines)


def test_a_message_no_catalog_entry_has_reads_unidentified_in_the_failure_text():
    """The failure's own text names a raise whose message matches no documented error as
    ``[unidentified]``, as the summary's groups and every report line do, never ``[None]``, and
    says why its id differs."""
    rules = element_rules.StepRules(error=element_rules.CONTRACT)
    renamed = DOCUMENTED.replace("must have dtype", "needs dtype")
    diff, text = error_difference(0, "a", WANT, _raised(ValueError(renamed)), rules, "cpu")
    assert diff.got_kind == "ValueError [unidentified]"
    lines = text.splitlines()
    assert lines[:4] == [
        "wrong error message and id (type matched)",
        f"  expected ValueError [dtype] '{DOCUMENTED}'",
        f"       got ValueError [unidentified] '{renamed}'",
        "  ([unidentified]: its message is no documented error's, so it has no catalog id)"]
    assert "[None]" not in text
    _, documented_id = error_difference(0, "a", WANT, _raised(ValueError(RAISED)), rules, "cpu")
    assert "unidentified" not in documented_id  # RAISED matches the dtype template


def test_a_one_call_wrong_error_keeps_its_parts_and_is_decided_by_them():
    """The one-call engine (conformance/engine/call_error.py) judges a raise part by part in the
    same shape: a ``ValueError`` without an ``error_id`` (optional there) and another message is
    a wrong message, the type and the absent id matching."""
    from conformance.engine.call_error import call_error_parts, read_error_id
    from tests.test_one_call_attacks import CASES, ENTRIES, judge

    message = CASES[ENTRIES.NAME]["entries-error-rank"]["expect"]["message"]
    raised = ValueError(message[:10] + "X" + message[11:])

    def launch(**_kwargs):
        raise raised

    verdict = judge(ENTRIES, "entries-error-rank", launch)
    parts = verdict.differences[0].error_parts
    assert [d.what for d in verdict.differences] == ["error"] * 3
    assert parts == {
        "type": {"expected": "ValueError", "got": "ValueError", "same": True},
        "message": {"expected": message, "got": str(raised), "same": False,
                    "first_difference": 10},
        "id": {"expected": "rank", "got": None, "same": True}}
    assert describe(verdict.differences[0].__dict__).startswith(
        "wrong error message (the type ValueError and the id (none carried) matched): expected "
        f"message {message!r}, got {str(raised)!r} (first difference at character 10)")
    right = ValueError(message)
    assert conforms(call_error_parts(("x", message), ValueError, right, read_error_id(right)))
    right.error_id = "y"
    assert not conforms(call_error_parts(("x", message), ValueError, right, read_error_id(right)))
