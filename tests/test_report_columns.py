"""The documented-errors and hazards tables of the report have a column for a planner only when it
has a cell there: a case file that did not load (``load``) or a one-call subject's planner would
add a column of dashes to the corpus subject's tables, which a reviewer reads as "not judged".

The run is ``a`` of tests/report_runs.py (``python``, the planted planner and the ``validator``
row); a case file that did not load is added to its results as the plugin records one."""

from __future__ import annotations

import copy
import re

from conformance.reporting.report import build
from conformance.reporting.report_render import render_html, render_markdown
from conformance.reporting.results_format import load_results
from tests.report_runs import PLANNER, run

LOAD_FAILURE = {
    "id": "cases/x.json@$[load]", "case": "my-bad-1", "planner": "load", "status": "fail",
    "duration": 0.0, "message": "bad case file: cases/x.json: at $: 'id' is a required property",
    "rerun": "python -m conformance --cases cases cases",
    "description": "bad case file: cases/x.json: at $: 'id' is a required property",
    "file": "cases/x.json", "json_path": "$", "entry": None, "source": None, "tags": [],
    "error_ids": [], "pins": None, "out_of_contract": [], "observed": "fail", "divergence": None,
    "worker": None, "verdict": None, "subject": None, "after_last_call": None}


def _model() -> dict:
    doc = copy.deepcopy(load_results(run("a").results))
    doc["results"].append(LOAD_FAILURE)
    return build(doc, check_stale=False)


def _header(html: str, section: str) -> list[str]:
    start = html.index(f'<h2 id="{section}">')
    row = html[html.index("<tr>", start):html.index("</tr>", start)]
    return re.findall(r"<code>([^<]*)</code>", row)


def test_only_planners_with_a_cell_get_a_column():
    model = _model()
    assert model["planners"] == ["python", PLANNER, "validator", "load"]  # the summary's rows
    html = render_html(model)
    assert _header(html, "catalog") == ["python", PLANNER, "validator"]
    assert _header(html, "hazards") == ["python", PLANNER]
    md = render_markdown(model)
    catalog = md.split("### Documented errors x planners", 1)[1]
    header = next(line for line in catalog.splitlines() if line.startswith("| error"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "error", "cases", "`python`", f"`{PLANNER}`", "`validator`"]
    assert (model["catalog_planners"], model["hazard_planners"]) == (
        ["python", PLANNER, "validator"], ["python", PLANNER])


def test_one_more_pattern_reads_in_the_singular_on_the_page():
    """Past the patterns a report lists, one more pattern (of one failed case) is said as one."""
    from conformance.reporting import failure_groups

    fields = [f"out_{k}" for k in range(failure_groups.MAX_PATTERNS + 1)]
    results = [{"planner": "p", "case": f"c-{f}-{i}", "status": "fail", "verdict": {
        "differences": [{"step": 0, "what": "value", "field": f, "rule": "contract"}],
        "error_steps": []}} for n, f in enumerate(fields) for i in range(1 if n == 0 else 2)]
    model = {**_model(), "failure_groups": failure_groups.groups(results)}
    html = render_html(model)
    table = html.split('id="failure-groups-table"', 1)[1].split("</table>", 1)[0]
    assert ('<td class="num bad">1</td><td class="muted" colspan="2">and 1 more pattern</td>'
            in table)
    assert "more patterns" not in table
