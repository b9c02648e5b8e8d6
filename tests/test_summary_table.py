"""The conformance summary (conformance/plugin/summary.py) stays within 120 columns, wraps a long
planner name inside its column, and reads back to the counts it was given."""

from __future__ import annotations

from conformance.plugin.outcomes import OUTCOMES
from conformance.plugin.summary import HEADERS, LEGEND, WIDTH, parse, render

BUILT_IN = [["numba-cuda-bound", "simulator", 191, 0, 0, 0, 0, 0, 0, 0, 0, 0, "48.5"],
            ["triton", "interpreter", 180, 3, 1, 0, 2, 0, 4, 1, 0, 0, "16.8"],
            ["load", "-", 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, "0"]]
LONG = ["tests.planted.wrong_planners:off_by_one_scan", "external (triton interpreter)",
        0, 1, 0, 0, 0, 0, 0, 0, 0, 0, "1234.5"]


def test_headers_are_the_results_file_statuses():
    assert HEADERS == ("planner", "mode", "pass", "fail", "xfail", "xpass", "skip", "error",
                       "oob", "differs", "not-wrapper", "declared", "seconds")
    assert len(HEADERS) == len(OUTCOMES) + 3


def test_built_in_planners_fit_without_wrapping():
    lines = render(BUILT_IN)
    assert lines[0].split() == list(HEADERS) and lines[-1] == LEGEND
    assert len(lines) == 2 + len(BUILT_IN) + 1  # header, rule, one line a planner, legend
    assert max(map(len, lines)) <= WIDTH
    assert lines[3].split() == ["triton", "interpreter", "180", "3", "1", "0", "2", "0", "4", "1",
                                "0", "0", "16.8"]


def test_a_long_external_planner_wraps_and_reads_back():
    lines = render([*BUILT_IN, LONG])
    assert max(map(len, lines)) <= WIDTH
    assert len(lines) > 2 + 4 + 1  # the long name took continuation lines
    rows = parse(lines)
    assert rows[LONG[0]] == [str(c) for c in LONG]
    assert rows["load"] == ["load", "-", "0", "3", *["0"] * 8, "0"]


def test_a_narrower_width_is_kept_too():
    lines = render([LONG], width=110)
    assert max(map(len, lines[:-1])) == 110 and parse(lines)[LONG[0]][0] == LONG[0]
