"""A failure shows a request's inputs where an output element is request r's.

Under the expected / got table of an output indexed by request (the corpus subject's
:meth:`~conformance.corpus.subject.Subject.by_request`, derived from its contract's golden lengths),
the report shows each per-request input (the contract's ``request`` role) at the table's indices,
``-`` where there is no request (in a guard zone, at or past bs); under a scalar output's table,
nothing. Each :class:`~conformance.engine.verdict.Difference` of such an element carries its
request's inputs as data, and the report's summary line (:func:`~conformance.engine.verdict.describe`)
names them. The one-call engine's subjects (the entries planner's outputs are indexed by verify
entry, not by request) get none, and their failures read as before.

Every expected row is computed here from the case file's own data, never copied from an output.
"""

from __future__ import annotations

import copy
import html
import re

import pytest
import torch

from conformance.corpus.arrays import evaluate
from conformance.corpus.corpus_subject import CASES_DIR
from conformance.corpus.loader import load_corpus
from conformance.corpus.subject import CORPUS_SUBJECT
from conformance.corpus.subjects import discover
from conformance.engine.diff import field_diff
from conformance.engine.call_report import failure_text
from conformance.engine.one_call import judge_call
from conformance.engine.runner import ConformanceFailure, Target, run_case
from conformance.engine.verdict import VerdictData, describe
from conformance.paths import CASES_ROOT
from conformance.reporting.markdown import code_span
from conformance.reporting.report import build
from conformance.reporting.report_render import render_html, render_markdown
from conformance.reporting.results_format import load_results
from impls.offsets_planner.contract import (OUTPUT_NAMES, REQUEST_INPUT_NAMES,
                                            SCALAR_OUTPUT_NAMES)
from tests.planted import report_planners, wrong_entries_planners
from tests.planted.mutants import scan
from tests.report_runs import PAST_ROW, run

CPU = torch.device("cpu")
SCRATCH, WRITE_OFFSETS, SEEDS = OUTPUT_NAMES[:3]
NUM_VALID = SCALAR_OUTPUT_NAMES[0]
PREFIX = REQUEST_INPUT_NAMES[1]

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py


@pytest.fixture(scope="module")
def cases() -> dict:
    loaded, errors = load_corpus([CASES_DIR / "boundary", CASES_DIR / "spec"])
    assert errors == []
    return {case.id: case for case in loaded}


def _failure(case, name: str, launch):
    """(text, verdict) of ``case`` on ``launch``, which must fail."""
    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target(name, launch, CPU))
    return str(excinfo.value), excinfo.value.verdict


def _tables(text: str) -> dict[str, dict[str, list[str]]]:
    """{output name: {row label: cells}} of every field diff of the first failing call."""
    out, field, lines = {}, None, text.splitlines()
    for k, line in enumerate(lines):
        match = re.match(r"  (\w+): \d+ element\(s\) differ", line)
        if match:
            field = match.group(1)
            out[field] = {}
        elif field and line.startswith("    ") and not line.strip().startswith(("decided by",
                                                                                  "spec ")):
            label, *cells = line.split()
            out[field][label] = cells
        elif line.strip().startswith("decided by"):
            field = None
    return out


def _row(values: list[int], indices: list[int], bs: int) -> list[str]:
    return [str(values[i]) if 0 <= i < bs else "-" for i in indices]


# --- the rule: which outputs and inputs ------------------------------------------------------

def test_the_contract_says_which_outputs_are_indexed_by_request():
    assert [o for o in CORPUS_SUBJECT.outputs if CORPUS_SUBJECT.by_request(o)] == [
        SCRATCH, WRITE_OFFSETS, SEEDS]
    assert not any(CORPUS_SUBJECT.by_request(o) for o in SCALAR_OUTPUT_NAMES)
    assert CORPUS_SUBJECT.request_inputs == REQUEST_INPUT_NAMES
    rows = CORPUS_SUBJECT.request_rows({PREFIX: {"cycle": [5, 0], "len": 5}}, 3)
    assert rows == {REQUEST_INPUT_NAMES[0]: [], PREFIX: [5, 0, 5], REQUEST_INPUT_NAMES[2]: []}


def test_field_diff_renders_given_rows_at_its_indices():
    guard = 2  # a guard zone of two elements either side of a 4-element tensor
    expected = [90, 91, 0, 1, 2, 3, 92, 93]
    got = [90, 91, 0, 1, 2, 9, 92, 93]
    text = field_diff("f", expected, got, offset=guard, length=4, inputs={"in": [7, 8, 9]})
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines()[1:]}
    assert rows["index"] == ["0", "1", "2", "3", "4", "5"]
    assert rows["in"] == ["7", "8", "9", "-", "-", "-"]  # bs 3: no request at 3 and past
    before = field_diff("f", expected, [0] + got[1:], offset=guard, length=4, inputs={"in": [7]})
    assert before.splitlines()[-1].split() == ["in", "-", "-", "7", "-"]  # indices -2..1
    assert field_diff("f", expected, got, offset=guard, length=4) == field_diff(
        "f", expected, got, offset=guard, length=4, inputs={})


# --- the corpus engine's report --------------------------------------------------------------

def test_a_total_at_bs_shows_the_last_requests_and_dashes_past_bs(cases):
    """bs-1025 on the block-carry mutant: index 1025 (= bs, the total) differs; the table's
    columns 1022..1028 show requests 1022..1024 and ``-`` from bs on; the scalar num_valid's
    table shows no input row."""
    case = cases["bs-1025"]
    text, verdict = _failure(case, "tests.planted.mutants.scan:block_carry_dropped",
                             scan.block_carry_dropped)
    bs = case.steps[0].bs
    assert bs == 1025
    values = {name: evaluate(case.steps[0].inputs[name]) for name in REQUEST_INPUT_NAMES}
    tables = _tables(text)
    for field in (SCRATCH, WRITE_OFFSETS):
        table = tables[field]
        indices = [int(i) for i in table["index"]]
        assert indices == list(range(1022, 1029))
        assert list(table) == ["index", "expected", "got", *REQUEST_INPUT_NAMES]
        for name in REQUEST_INPUT_NAMES:
            assert table[name] == _row(values[name], indices, bs), text
        assert table[PREFIX][3:] == ["-"] * 4
    assert list(tables[NUM_VALID]) == ["index", "expected", "got"]  # a scalar: nothing more
    total = next(d for d in verdict.differences if d.field == WRITE_OFFSETS)
    assert (total.index, total.inputs) == (bs, None)  # the total is no request's
    assert all(d.inputs is None for d in verdict.differences if d.field == NUM_VALID)


def test_a_seed_difference_carries_its_requests_inputs(cases):
    """spec §7's prefill and two decodes with the seed of request 1 one too large: its table
    shows every request's inputs (``-`` in the guard zones), its difference holds request 1's,
    and the summary line names them."""
    case = cases["spec7-prefill-and-decodes"]
    text, verdict = _failure(case, "seed_plus_one", report_planners.seed_plus_one)
    inputs = case.steps[0].inputs
    table = _tables(text)[SEEDS]
    indices = [int(i) for i in table["index"]]
    assert indices == list(range(-2, 5))
    for name in REQUEST_INPUT_NAMES:
        assert table[name] == _row(evaluate(inputs[name]), indices, case.steps[0].bs)
    first = verdict.differences[0]
    assert (first.field, first.index) == (SEEDS, 1)
    assert first.inputs == {name: evaluate(inputs[name])[1] for name in REQUEST_INPUT_NAMES}
    words = ", ".join(f"{n} {evaluate(inputs[n])[1]}" for n in REQUEST_INPUT_NAMES)
    assert describe(VerdictData.from_json(verdict.to_json()).differences[0].__dict__) == (
        f"{SEEDS}[1]: got {first.got}, expected {first.expected} (request 1: {words})")


def test_a_hand_edited_inputs_value_is_ignored_by_the_summary():
    diff = {"what": "value", "field": SEEDS, "index": 0, "expected": 1, "got": 2,
            "inputs": ["not", "a", "dict"]}
    assert describe(diff) == f"{SEEDS}[0]: got 2, expected 1"
    assert describe({**diff, "inputs": None}) == describe({k: v for k, v in diff.items()
                                                           if k != "inputs"})


def test_the_reports_show_the_inputs_and_escape_them():
    """On a real run (``tests/report_runs.py``, run ``d``): the page's and the Markdown's failure
    section of the past-row divergence hold its request's inputs, in its summary (from the
    verdict) and under its table (the report's text); a hand-edited input name is escaped on the
    page and a code span's text in the Markdown."""
    case = next(c for c in load_corpus([CASES_DIR / "semantics"])[0]
                if c.id == "hazard-prefix-past-row")
    values = {n: evaluate(case.steps[0].inputs[n]) for n in REQUEST_INPUT_NAMES}
    words = ", ".join(f"{n} {v[0]}" for n, v in values.items())
    doc = load_results(run("d").results)
    model = build(copy.deepcopy(doc), check_stale=False)
    entry = next(f for f in model["failures"] if f["id"] == f"hazard-prefix-past-row[{PAST_ROW}]")
    assert entry["summary"].endswith(f" (request 0: {words})")
    rows = {line.split()[0]: line.split()[1:] for line in entry["message"].splitlines()
            if line.split()[:1] and line.split()[0] in REQUEST_INPUT_NAMES}
    assert rows == {n: ["-", "-", "-", str(v[0]), "-", "-", "-"] for n, v in values.items()}
    page, md = render_html(model), render_markdown(model)
    assert html.escape(f" (request 0: {words})") in page and f" (request 0: {words})" in md
    hostile = copy.deepcopy(doc)
    result = next(r for r in hostile["results"] if r["id"] == entry["id"])
    result["verdict"]["differences"][0]["inputs"] = {"<b>x</b>": 3}
    model = build(hostile, check_stale=False)
    page, md = render_html(model), render_markdown(model)
    assert "<b>x</b>" not in page and "(request 0: &lt;b&gt;x&lt;/b&gt; 3)" in page
    summary = next(f for f in model["failures"] if f["id"] == entry["id"])["summary"]
    assert summary.endswith("(request 0: <b>x</b> 3)")
    # the Markdown lists a judged result in a table cell, as a code span (text, never markup)
    assert md.count("<b>x</b>") == md.count(code_span(summary)) == 1


# --- the one-call engine (the entries planner) -----------------------------------------------

def test_an_entries_planner_failure_reads_as_before():
    """The entries planner's outputs are indexed by verify entry: its differences carry no
    request inputs, and its failure text lists them as it always did."""
    subject = discover()["entries-planner"]
    case = next(c for c in subject.load_cases(CASES_ROOT / subject.NAME)
                if c["id"] == "entries-padding-row-between-two")
    verdict = judge_call(subject, case, wrong_entries_planners.shifted_position, CPU)
    assert verdict.count and all(d.inputs is None for d in verdict.differences)
    text = failure_text(verdict)
    position = subject.OUTPUTS[2]
    assert f"run a: {position}[0]: expected " in text and "request" not in text
    assert describe(verdict.to_json()["differences"][0]).startswith(f"{position}[0]: got ")
