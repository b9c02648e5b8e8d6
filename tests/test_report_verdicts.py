"""The report reads the judge's verdicts (the results file's ``verdict``), on real runs of planted
planners whose single bug is known (run ``d`` of ``tests/report_runs.py``):

* the documented errors x planners table counts an error against a planner only when a step
  expecting it failed: the seed bug of :func:`tests.planted.report_planners.seed_plus_one` fails
  the valid steps of ``err-steps-*-between-valid`` cases and leaves every error row green, while
  a wrong message (run ``b``) paints its row red; a result without a verdict is not judged;
* the failure list holds every non-pass (``differs`` and ``declared`` included), each with the
  rules that decide its differences and what differed, from the verdict's data;
* a run with no case that expects a documented error shows one line in that section of the
  Markdown and of the page instead of an empty table; a run with one keeps the table;
* so does the divergence profile of a run none of whose results says what a planner does in a
  situation of spec section 6 (no case reached one, or those that did say nothing there).
"""

from __future__ import annotations

import copy
import re

from conformance.reporting import error_table
from conformance.reporting.report import anchor, build
from conformance.reporting.report_render import render_html, render_markdown, render_text
from conformance.reporting.results_format import load_results
from tests.report_runs import PAST_ROW, PLANNER, SEED, run

BETWEEN_VALID = ("err-steps-dtype-between-valid", "err-steps-wrapper-and-capacity-between-valid")


def _model(name: str = "d", doc: dict | None = None) -> dict:
    return build(doc or load_results(run(name).results), check_stale=False)


def _cells(model: dict, planner: str) -> dict[str, dict]:
    return {row["id"]: row["cells"][planner] for row in model["catalog"] if planner in row["cells"]}


def test_seed_bug_fails_cases_but_no_error_step():
    model = _model()
    by_id = {r["id"]: r for r in model["doc"]["results"]}
    for case in BETWEEN_VALID:  # the cases fail (their valid steps), their error steps pass
        result = by_id[f"{case}[{SEED}]"]
        assert result["status"] == "fail"
        assert result["verdict"]["error_steps"] and all(
            s["ok"] for s in result["verdict"]["error_steps"])
    assert by_id[f"err-steps-bs-exceeds-between-valid[{SEED}]"]["status"] == "declared"
    cells = _cells(model, SEED)
    assert set(cells) == {"dtype", "swa-lut-required", "verify-capacity-non-negative",
                          "bs-exceeds-capacity"}
    assert {k: (c["passed"], c["judged"], c["failed"], c["not_judged"]) for k, c in
            cells.items()} == {"dtype": (2, 2, 0, 0), "swa-lut-required": (1, 1, 0, 0),
                               "verify-capacity-non-negative": (1, 1, 0, 0),
                               "bs-exceeds-capacity": (1, 1, 0, 0)}
    assert error_table.failing_lines(model["catalog"]) == []
    html = render_html(model)
    table = html[html.index('id="catalog"'):html.index('id="hazards"')]
    assert not re.search(r'<span class="bad"[^>]*>\d+/\d+</span>', table)
    assert len(re.findall(r'<span class="ok">2/2</span>', table)) == 2  # dtype, both planners
    assert "documented error steps: none failed" in render_text(model)
    md = render_markdown(model)
    row = next(ln for ln in md.splitlines() if ln.startswith("| `dtype`"))
    assert [c.strip() for c in row.strip("|").split("|")] == ["`dtype`", "2", "2/2", "2/2"]


def test_wrong_message_fails_its_error_row():
    model = _model("b")  # the wrong error message on err-dtype-prefix-lens
    assert _cells(model, PLANNER)["dtype"] == {
        "passed": 0, "failed": 1, "judged": 1, "declared": 0, "not_judged": 0, "total": 1,
        "ok": False}
    assert error_table.failing_lines(model["catalog"]) == [f"dtype: {PLANNER} 0/1"]
    html = render_html(model)
    table = html[html.index('id="catalog"'):html.index('id="hazards"')]
    assert '<span class="bad">0/1</span>' in table
    text = render_text(model)
    assert f"  dtype: {PLANNER} 0/1" in text.splitlines()


def test_result_without_verdict_is_not_judged():
    doc = copy.deepcopy(load_results(run("d").results))
    crashed = next(r for r in doc["results"] if r["id"] == f"err-dtype-prefix-lens[{SEED}]")
    crashed.update(status="crash", observed="crash", verdict=None,
                   message="worker 'gw0' crashed while running it")
    model = _model(doc=doc)
    assert _cells(model, SEED)["dtype"] == {
        "passed": 1, "failed": 0, "judged": 1, "declared": 0, "not_judged": 1, "total": 2,
        "ok": True}
    html = render_html(model)
    table = html[html.index('id="catalog"'):html.index('id="hazards"')]
    assert re.search(r'<span class="ok">1/1</span> <span class="muted">\+1 not judged</span>',
                     table)
    entry = next(f for f in model["failures"] if f["id"] == crashed["id"])
    assert (entry["summary"], entry["rules"]) == ("worker 'gw0' crashed while running it", "")


def test_differs_and_declared_are_listed_with_their_rules():
    model = _model()
    listed = {f["id"]: f for f in model["failures"]}
    assert {i: f["status"] for i, f in listed.items()} == {
        f"err-steps-dtype-between-valid[{SEED}]": "fail",
        f"err-steps-wrapper-and-capacity-between-valid[{SEED}]": "fail",
        f"hazard-prefix-past-row[{PAST_ROW}]": "differs",
        f"err-steps-bs-exceeds-between-valid[{SEED}]": "declared"}
    assert [f["judged"] for f in model["failures"]] == [False, False, True, True]  # bad first
    differs = listed[f"hazard-prefix-past-row[{PAST_ROW}]"]
    # the case clamps the seed to table[1, 15] = 31; reading past the row gives another value;
    # the summary names request 0's inputs (rpi 1, prefix 20, extend 1), from the verdict's data
    assert re.fullmatch(r"out_write_seed_slot_indices\[0\]: got (\d+), expected 31 \(request 0: "
                        r"req_pool_indices 1, prefix_lens 20, extend_seq_lens 1\)",
                        differs["summary"])
    assert differs["summary"] != "out_write_seed_slot_indices[0]: got 31, expected 31"
    assert differs["rules"] == "decided by: project rule past-row (3)"  # runs a, b and plain
    declared = listed[f"err-steps-bs-exceeds-between-valid[{SEED}]"]
    assert declared["rules"] == "decided by: contract (3)"  # runs a, b and plain (error steps too)
    assert declared["message"].startswith("declared divergence (fail), ")
    html = render_html(model)
    failures = html[html.index('<h2 id="failures">'):html.index('<h2 id="matrix-title">')]
    assert failures.startswith('<h2 id="failures">Failures (2) and judged divergences (2, not failed)'
                               "</h2>")
    assert ('<option value="judged">judged, not failed (differs, not-wrapper, '
            'declared)</option>') in html
    for f, status in ((differs, "differs"), (declared, "declared")):
        target = re.escape(anchor("fail", f["case"], f["planner"]))
        block = re.search(rf'<div class="entry judged" data-status="{status}" data-planner='
                          rf'"{re.escape(f["planner"])}"[^>]*>\s*<details class="failure" id='
                          rf'"{target}">(.*?)</details>', failures, re.S)
        assert block, status
        assert f'<span class="rules">{f["rules"]}</span>' in block.group(1)
        assert "decided by:" in block.group(1).split("<pre>")[1]  # the diff, as the judge wrote it
    assert "max-height" not in html[:html.index("</style>")]  # the list is no scroll box
    matrix = html[html.index('<table id="matrix">'):]
    assert f'href="#{anchor("fail", "hazard-prefix-past-row", PAST_ROW)}"' in matrix
    text = render_text(model)
    assert (f"  differs hazard-prefix-past-row[{PAST_ROW}]: {differs['summary']} (decided by: "
            "project rule past-row (3))") in text.splitlines()


def test_summary_comes_from_the_verdict_not_the_text():
    doc = copy.deepcopy(load_results(run("d").results))
    result = next(r for r in doc["results"] if r["id"] == f"hazard-prefix-past-row[{PAST_ROW}]")
    result["message"] = "differs\n  header\n  text that says nothing of the difference"
    entry = next(f for f in _model(doc=doc)["failures"] if f["id"] == result["id"])
    assert entry["summary"].startswith("out_write_seed_slot_indices[0]: got ")
    result["verdict"] = None  # without a verdict: the text's first detail line
    entry = next(f for f in _model(doc=doc)["failures"] if f["id"] == result["id"])
    assert entry["summary"] == "text that says nothing of the difference"


NO_ERROR_CASE = ("No case of this run expected a documented error of {}, so none of its 22 ids "
                 "was judged.")


def _sections(model: dict, heading: str, anchor: str, next_anchor: str) -> tuple[str, str]:
    """One section of the Markdown (below its ``### heading``, up to the next heading) and of the
    page (from ``<h2 id="anchor">`` to ``<h2 id="next_anchor">``)."""
    md = render_markdown(model)
    markdown = md.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    html = render_html(model)
    return markdown, html[html.index(f'<h2 id="{anchor}">'):html.index(f'<h2 id="{next_anchor}">')]


def _catalog_sections(model: dict) -> tuple[str, str]:
    """The documented errors section (:func:`_sections`), up to the hazards heading."""
    return _sections(model, "Documented errors x planners", "catalog", "hazards")


def test_a_run_without_an_error_case_says_so_in_one_line_instead_of_an_empty_table():
    doc = copy.deepcopy(load_results(run("d").results))
    doc["results"] = [r for r in doc["results"] if not r["error_ids"]]  # as with --case of it
    model = _model(doc=doc)
    assert sorted({r["case"] for r in model["doc"]["results"]}) == ["hazard-prefix-past-row"]
    assert len(model["catalog"]) == 22 and not any(row["cases"] for row in model["catalog"])
    markdown, html = _catalog_sections(model)
    assert markdown == "\n" + NO_ERROR_CASE.format("`impls/offsets_planner/errors.py`") + "\n"
    assert html == ('<h2 id="catalog">Documented errors &times; planners</h2>\n'
                    '<p class="muted" id="no-error-cases">'
                    + NO_ERROR_CASE.format("impls/offsets_planner/errors.py") + '</p>\n\n')
    assert '<a href="#catalog">Documented errors</a>' in render_html(model)  # the nav's target
    text = render_text(model).splitlines()
    assert NO_ERROR_CASE.format("impls/offsets_planner/errors.py") in text
    assert not [line for line in text if line.startswith("error catalog:")]


def test_a_one_call_subjects_error_ids_are_not_counted_in_the_corpus_catalog():
    """A one-call subject's case that expects its own ``dtype`` error (the entries planner's
    catalog) is no case of the corpus subject's ``dtype`` row."""
    doc = copy.deepcopy(load_results(run("d").results))
    mine = next(r for r in doc["results"] if r["case"] == "err-dtype-prefix-lens")
    other = {**copy.deepcopy(mine), "subject": "entries-planner", "case": "entries-err-dtype",
             "id": f"entries-err-dtype[{mine['planner']}]"}
    doc["results"] = [mine, other]
    row = next(row for row in _model(doc=doc)["catalog"] if row["id"] == "dtype")
    assert row["cases"] == ["err-dtype-prefix-lens"]
    assert {p: c["total"] for p, c in row["cells"].items()} == {mine["planner"]: 1}


def test_a_run_with_an_error_case_keeps_the_table():
    doc = copy.deepcopy(load_results(run("d").results))
    doc["results"] = [r for r in doc["results"] if r["case"] == "err-dtype-prefix-lens"]
    model = _model(doc=doc)
    markdown, html = _catalog_sections(model)
    assert "No case of this run" not in markdown and 'id="no-error-cases"' not in html
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("|")]
    assert len(rows) == 3 and all(set(cell) == {"-"} for cell in rows[1])  # header, rule, row
    assert rows[0] == ["error", "cases", f"`{PAST_ROW}`", f"`{SEED}`"]  # planners by name
    assert rows[2] == ["`dtype`", "1", "1/1", "1/1"]
    assert html.count("<tr>") == 23  # the header and every id of the catalog
    assert len(re.findall(r'<span class="ok">1/1</span>', html)) == 2
    # a run of three cases: the ids its cases do not expect are not in this run (not a gap of
    # the corpus, whose coverage tests/test_corpus_coverage.py checks)
    assert html.count(">not in this run</span>") == 21
    assert "error catalog: 1 of 22 ids covered by this run's cases; not in this run: " \
           "swa-lut-required, contiguous, " in render_text(model)


def test_a_case_that_is_its_whole_file_is_named_by_the_file_alone():
    """The JSON path ``$`` (the file is the case) is left out after the file's name, as the
    failure text's location does (conformance/corpus/case_model.py ``Case.location``)."""
    doc = copy.deepcopy(load_results(run("d").results))
    result = next(r for r in doc["results"] if r["id"] == f"hazard-prefix-past-row[{SEED}]")
    grouped = f"{result['file']} {result['json_path']}"
    assert result["json_path"].startswith("$.cases[")
    html = render_html(_model(doc=doc))
    assert grouped in html
    for other in doc["results"]:
        if other["case"] == result["case"]:
            other["json_path"] = "$"
    html = render_html(_model(doc=doc))
    assert not re.search(re.escape(f"{result['file']} $") + r"(?!\.)", html)
    assert f"<code>{result['file']}</code></p>" in html  # a failure's line
    assert f"&middot; {result['file']} &middot; spec:" in html  # the case's row


def test_a_write_where_nothing_may_be_written_is_described_as_such():
    """A ``written`` difference's expected value is what the element held (a poison fill's raw
    integer, or an earlier step's value): the one-line summary says so (engine/verdict.py)."""
    from conformance.engine.verdict import describe

    diff = {"what": "written", "field": "out_write_offsets", "index": 3,
            "expected": 3447279313735446665, "got": 0}
    assert describe(diff) == ("out_write_offsets[3]: written 0, must keep what it held before "
                              "the call (3447279313735446665: the poison, or an earlier step's "
                              "value)")


def _divergence_sections(model: dict) -> tuple[str, str]:
    """The divergence profile section (:func:`_sections`), up to the benchmarks heading."""
    return _sections(model, "Divergence profile (spec §6)", "divergence", "bench")


def test_a_run_that_reaches_no_section_6_situation_says_so_instead_of_a_table_of_dashes():
    doc = copy.deepcopy(load_results(run("d").results))
    doc["results"] = [r for r in doc["results"] if r["case"] == "err-dtype-prefix-lens"]
    assert all(not r["out_of_contract"] for r in doc["results"])  # reaches no row of spec §6
    markdown, html = _divergence_sections(_model(doc=doc))
    line = "No case of this run reached a situation of spec §6."
    assert markdown == f"\n{line}\n"
    assert html == ('<h2 id="divergence">Divergence profile (spec &sect;6)</h2>\n'
                    f'<p class="muted" id="no-divergence">{line}</p>\n\n')


def test_a_run_whose_section_6_cases_say_nothing_there_says_that_instead():
    """A case that reaches a situation but was skipped says nothing of the planner there
    (conformance/reporting/divergence_profile.py ``behaviour``): the line says so, not that no
    case reached one."""
    doc = copy.deepcopy(load_results(run("d").results))
    doc["results"] = [r for r in doc["results"] if r["case"] == "hazard-prefix-past-row"]
    for r in doc["results"]:
        r.update(status="skip", observed="skip", verdict=None, message="skipped")
    markdown, html = _divergence_sections(_model(doc=doc))
    assert "<table>" not in html and "|" not in markdown
    assert markdown.strip() == (
        "No result of this run says what a planner does in a situation of spec §6: the 2 results "
        "of cases that reach one say nothing of it (skipped, an expected failure, the case's own "
        "error, or a crash in a case that reaches several).")


def test_a_run_that_reaches_a_situation_keeps_the_divergence_table():
    doc = copy.deepcopy(load_results(run("d").results))
    doc["results"] = [r for r in doc["results"] if r["case"] == "hazard-prefix-past-row"]
    markdown, html = _divergence_sections(_model(doc=doc))
    assert 'id="no-divergence"' not in html and "No case of this run" not in markdown
    past_row = next(line for line in markdown.splitlines() if "prefix_lens[r] - 1" in line)
    cells = [c.strip() for c in past_row.strip("|").split("|")]
    assert cells[2:] == ["reads past the row x1", "clamps x1"]  # PAST_ROW, SEED: by name
    assert html.count("<tr>") == 1 + 8  # the header and every situation of spec section 6
