"""A report of one bug that fails dozens of cases stays readable and fits a GitHub comment
(``conformance/reporting/failure_details.py``): every failure group with its exact count, the full
report of at most ``--max-failures-per-group`` failures of each (default 3), how many were left out
and how to see them; ``0`` shows every one. On a real run of the corpus on
``tests.planted.wrong_planners:off_by_one_scan`` (an inclusive write-offsets scan: about 80 cases
fail alike); every expectation is counted here from the results file."""

from __future__ import annotations

import json
import re

import pytest

from conformance.corpus.text import natural_key
from conformance.reporting.failure_details import DEFAULT_LIMIT, OPTION, limit_details, with_limit
from conformance.reporting.report import build
from conformance.reporting.results_format import BAD
from tests.subproc import cli, run_pytest

WRONG = "tests.planted.wrong_planners:off_by_one_scan"
GITHUB_COMMENT = 65_536
"""The most characters a GitHub issue or pull-request comment holds."""


@pytest.fixture(scope="module")
def one_bug(tmp_path_factory):
    """The corpus on the off-by-one planner: (results path, results document, failed case ids
    with the fewest differing elements first, then in natural order: the order a group lists
    them)."""
    tmp = tmp_path_factory.mktemp("one-bug")
    proc, _ = run_pytest(tmp, "-q", "-n", "0", "--planner", WRONG)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads((tmp / "results.json").read_text())
    failed = [r["case"] for r in sorted(
        (r for r in doc["results"] if r["status"] in BAD),
        key=lambda r: (r["verdict"]["by_rule"].get("contract", 0), natural_key(r["case"])))]
    assert len(failed) > 60  # one bug, dozens of failures: what the limit is for
    return tmp / "results.json", doc, failed


def _by_id(cases: list[str]) -> list[str]:
    return sorted(cases, key=natural_key)


def _details(markdown: str) -> list[str]:
    """The case ids of the Markdown's ``<details>`` blocks, in order."""
    return re.findall(r"<details><summary><b>\w+</b> <code>([^\[<]+)\[", markdown)


def test_markdown_of_one_bug_fits_a_comment_and_counts_what_it_left_out(one_bug):
    path, doc, failed = one_bug
    proc = cli("report", str(path), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    md = proc.stdout
    assert len(md) < GITHUB_COMMENT
    n, left = len(failed), len(failed) - DEFAULT_LIMIT
    # the headline and the group keep the exact counts
    assert f"{len(doc['results'])} results, {n} not passing;" in md
    assert f"`{WRONG}`, {n} failed cases, 1 pattern" in md
    [row] = [line for line in md.split("**By first difference:**")[1].splitlines()
             if line.startswith(f"| `{WRONG}`")]
    assert [c.strip() for c in row.strip("|").split("|")][1] == str(n)
    # the full reports of the group's first cases, as its row lists them
    assert _by_id(_details(md)) == _by_id(failed[:DEFAULT_LIMIT])
    assert (f"Below, the report of at most {DEFAULT_LIMIT} failures per pattern; {left} more "
            f"left out (`{WRONG}`, `out_write_offsets: another value (contract)`: {left} of {n}). "
            f"`{OPTION} 0` shows every one; the results file holds them all.") in md


def test_zero_shows_every_failure_and_one_shows_one(one_bug):
    path, _, failed = one_bug
    md = cli("report", str(path), "--format", "markdown", OPTION, "0").stdout
    assert _by_id(_details(md)) == _by_id(failed)
    assert "left out" not in md
    md = cli("report", str(path), "--format", "markdown", OPTION, "1").stdout
    assert _details(md) == failed[:1]
    assert f"{len(failed) - 1} more left out" in md


def test_text_and_page_and_publish_leave_out_alike(one_bug, tmp_path):
    path, _, failed = one_bug
    text = cli("report", str(path), "--format", "text").stdout
    listed = re.findall(r"^  fail +([^\[\s]+)\[", text, re.M)
    assert _by_id(listed) == _by_id(failed[:DEFAULT_LIMIT])
    assert f"{len(failed) - DEFAULT_LIMIT} more left out" in text
    # the page shows every report unless told (the matrix links each cell to its report);
    # a limit given applies to it as to Markdown and text
    for args, full in (((), len(failed)), ((OPTION, "0"), len(failed)),
                       ((OPTION, str(DEFAULT_LIMIT)), DEFAULT_LIMIT),
                       (("--format", "markdown"), len(failed)),
                       (("--format", "text", OPTION, "1"), 1)):
        site = tmp_path / f"site{len(args)}{args[-1] if args else ''}"
        proc = cli("report", str(path), "--publish", str(site), *args)
        assert proc.returncode == 0, proc.stderr
        page = (site / "index.html").read_text()
        # every failure keeps its entry (the matrix links to it), its report only up to the limit
        assert page.count('<details class="failure"') == len(failed)
        assert page.count("<pre>") == full
        assert page.count('class="muted left-out"') == len(failed) - full
        assert ('id="left-out"' in page) == (full < len(failed))
        if "markdown" in args:  # the Markdown beside it keeps its own default
            assert _by_id(_details(proc.stdout)) == _by_id(failed[:DEFAULT_LIMIT])
    page = tmp_path / "page.html"
    assert cli("report", str(path), "--out", str(page)).returncode == 0
    assert page.read_text().count("<pre>") == len(failed)


def test_a_negative_limit_is_refused(one_bug):
    path, doc, _ = one_bug
    proc = cli("report", str(path), "--format", "markdown", OPTION, "-1")
    assert proc.returncode == 2
    assert f"argument {OPTION}: '-1': a whole number, 0 (every failure) or more" in proc.stderr
    with pytest.raises(ValueError, match=f"{OPTION} -2: must be 0"):
        build(doc, check_stale=False, max_per_group=-2)


def test_each_group_keeps_its_own_first_failures(one_bug):
    """Two groups (the run's failures split by hand into two planners): the limit is per group,
    and each group's count and left-out count are its own."""
    _, doc, failed = one_bug
    half = set(failed[::2])
    results = [{**r, "planner": "other"} if r["status"] in BAD and r["case"] in half else r
               for r in doc["results"]]
    model = build({**doc, "results": results}, check_stale=False, max_per_group=2)
    by_planner = {g["planner"]: g["patterns"][0] for g in model["failure_groups"]}
    mine = {WRONG: [c for c in failed if c not in half], "other": failed[::2]}
    for planner, cases in mine.items():
        assert (by_planner[planner]["count"], by_planner[planner]["detailed"],
                by_planner[planner]["left_out"]) == (len(cases), 2, len(cases) - 2)
        shown = [f["case"] for f in model["failures"] if f["planner"] == planner and f["detailed"]]
        assert _by_id(shown) == _by_id(cases[:2])
    assert model["left_out"] == len(failed) - 4
    assert limit_details([], [], None, 0) == 0


def test_the_smallest_repro_leads_its_group(one_bug):
    """A group lists its cases with the fewest differing elements first (then by id), and those
    are the reports shown: the off-by-one's smallest failing case (one element wrong a run) is
    shown, not the first ids in natural order (``bs-31``, ``bs-32``, ...)."""
    path, doc, failed = one_bug
    counts = {r["case"]: r["verdict"]["by_rule"].get("contract", 0) for r in doc["results"]
              if r["status"] in BAD}
    fewest = min(counts.values())
    assert counts[failed[0]] == fewest < max(counts.values())
    md = cli("report", str(path), "--format", "markdown").stdout
    [row] = [line for line in md.split("**By first difference:**")[1].splitlines()
             if line.startswith(f"| `{WRONG}`")]
    assert re.findall(r"`([^`]+)`", row.split("|")[-2])[:5] == failed[:5]
    by_name = sorted(counts, key=natural_key)[:DEFAULT_LIMIT]
    assert _by_id(_details(md)) != _by_id(by_name)  # not the first ids by name
    assert all(counts[c] <= counts[o] for c in _details(md) for o in failed[DEFAULT_LIMIT:])


def test_one_model_gives_each_limit_what_a_build_with_it_gives(one_bug):
    """``with_limit`` (the page ``--publish`` writes beside a Markdown or text report) marks the
    same failures and counts as a model built with that limit, and leaves its model as it was."""
    _, doc, failed = one_bug
    model = build(doc, max_per_group=DEFAULT_LIMIT)
    marks = [f["detailed"] for f in model["failures"]]
    for limit in (0, 1, DEFAULT_LIMIT):
        copy, built = with_limit(model, limit), build(doc, max_per_group=limit)
        assert [f["detailed"] for f in copy["failures"]] == [f["detailed"] for f in built["failures"]]
        assert (copy["left_out"], copy["max_per_group"]) == (built["left_out"], limit)
        assert copy["left_out"] == (0 if limit == 0 else len(failed) - limit)
        for mine, theirs in zip(copy["failure_groups"], built["failure_groups"]):
            assert [(p["detailed"], p["left_out"]) for p in mine["listed"]] == \
                   [(p["detailed"], p["left_out"]) for p in theirs["listed"]]
    assert [f["detailed"] for f in model["failures"]] == marks
    assert model["left_out"] == len(failed) - DEFAULT_LIMIT
