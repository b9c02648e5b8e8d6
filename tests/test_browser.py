"""The report page in a real browser: headless Chromium (Debian's ``chromium``, which ``.ci/run``
installs) loads the page, runs its JavaScript, and ``--dump-dom`` gives back the DOM it built.

The page reads its filters (and the failure to open) from the URL hash, as a shared link would:
``#status=bad`` hides every row without a failure; ``#...&open=ID`` opens that failure's details.
Without Chromium these tests skip, saying why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from conformance.reporting.report import anchor, build
from conformance.reporting.report_render import render_html
from conformance.reporting.results_format import load_results
from tests.report_runs import PLANNER, run

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
INSTALL = "apt-get install chromium (Debian's package; .ci/run installs it)"
pytestmark = pytest.mark.slow  # a whole run to report on, then a browser per page: about 30 s


@pytest.fixture(autouse=True)
def _chromium():
    """Skip, naming the install command, without Chromium; fail each test instead under CI=true
    (CI sets it, and .ci/run installs Chromium: a browser test must never skip there)."""
    if BROWSER is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no chromium on PATH: {INSTALL}", pytrace=False)
        pytest.skip(f"Chromium is not installed: {INSTALL}")


FAILING = ["spec7-no-prefix", "spec7-decode-seed", "spec7-prefill-and-decodes",
           "spec7-padding-row-middle", "hazard-prefix-past-row", "spec7-lut-shift"]
PASSING = ["declared-divergence", "err-dtype-prefix-lens", "err-val-stride-zero"]


@cache
def _page(name: str = "a") -> Path:
    page = run(name).results.with_name(f"report-{name}.html")
    page.write_text(render_html(build(load_results(run(name).results))))
    return page


def dom(tmp_path: Path, fragment: str, name: str = "a") -> str:
    """The DOM of the report page of run ``name`` after its scripts ran, loaded with
    ``#fragment``."""
    args = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom", f"{_page(name).as_uri()}#{fragment}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def rows(html: str) -> dict[str, bool]:
    """Matrix rows: case id -> hidden?"""
    found = re.findall(r'<tr id="case--([^"]+)"([^>]*)>', html)
    return {case: " hidden" in attrs for case, attrs in found}


def test_matrix_and_status_filter_hide_passing_rows(tmp_path):
    html = dom(tmp_path, "status=bad")
    assert re.search(r'<table id="matrix">', html)
    assert rows(html) == {**{c: False for c in FAILING}, **{c: True for c in PASSING}}
    assert '<span id="shown">6 of 9 cases shown</span>' in html


def test_tag_and_planner_filters(tmp_path):
    html = dom(tmp_path, "tag=hazard&planner=python&status=pass")
    assert rows(html) == {c: c != "hazard-prefix-past-row" for c in FAILING + PASSING}
    headers = re.findall(r'<th data-planner="([^"]+)"([^>]*)>', html)
    assert {p: " hidden" in a for p, a in headers} == {"python": False, PLANNER: True,
                                                       "validator": True}
    only = dom(tmp_path, "planner=validator")  # rows without a validator result hide too
    assert rows(only) == {c: c != "err-val-stride-zero" for c in FAILING + PASSING}


def test_failure_detail_opens(tmp_path):
    target = anchor("fail", "spec7-prefill-and-decodes", PLANNER)
    closed = dom(tmp_path, "status=fail")
    assert re.search(rf'<details class="failure" id="{re.escape(target)}">', closed)
    html = dom(tmp_path, f"status=fail&open={target}")
    details = re.search(
        rf'<details class="failure" id="{re.escape(target)}"([^>]*)>(.*?)</details>', html, re.S)
    assert details and details.group(1).strip() == 'open=""', details and details.group(1)
    assert "out_write_offsets: 3 element(s) differ, first at index 0" in details.group(2)
    assert len(re.findall(r'<details class="failure" [^>]*open=""', html)) == 1


@pytest.mark.parametrize("fragment, shown", [("%E0%A4%A", 9), ("%", 9),
                                              ("status=bad&open=%E0%A4%A", 6)])
def test_malformed_hash_still_runs_the_script(tmp_path, fragment, shown):
    """``decodeURIComponent`` throws on a malformed escape: the script must still run (the
    filters it can read applied, the counter filled in) rather than stop half way."""
    html = dom(tmp_path, fragment)
    assert f'<span id="shown">{shown} of 9 cases shown</span>' in html, html[-3000:]
    assert sum(not hidden for hidden in rows(html).values()) == shown


def entries(html: str) -> list[tuple[str, bool]]:
    """Failure list entries: (status, hidden?), in page order."""
    found = re.findall(r'<div class="entry[^"]*" data-status="([^"]+)"([^>]*)>', html)
    return [(status, " hidden" in attrs) for status, attrs in found]


@pytest.mark.parametrize("fragment, listed", [
    ("status=judged", ["differs", "declared"]), ("status=bad", ["fail", "fail"]),
    ("status=differs", ["differs"]), ("", ["fail", "fail", "differs", "declared"])])
def test_failure_list_filters_judged_and_bad(tmp_path, fragment, listed):
    """Run ``d``: two failures, a ``differs`` and a ``declared`` result (tests/report_runs.py);
    the status filter picks them out of the failure list and the matrix alike."""
    html = dom(tmp_path, fragment, "d")
    every = entries(html)
    assert [s for s, _ in every] == ["fail", "fail", "differs", "declared"]
    assert [s for s, hidden in every if not hidden] == listed
    assert (f'<span id="shown-failures" class="muted">{len(listed)} of 4 failures and judged '
            f'divergences listed</span>') in html
    if fragment == "status=judged":
        assert {c for c, hidden in rows(html).items() if not hidden} == {
            "hazard-prefix-past-row", "err-steps-bs-exceeds-between-valid"}
