"""The conformance summary (conformance/plugin/summary.py) stays within 120 columns, wraps a long
planner name inside its column, and reads back to the counts it was given."""

from __future__ import annotations

from conformance.plugin.outcomes import OUTCOMES
from conformance.plugin.summary import HEADERS, LEGEND, WIDTH, legend_lines, parse, render

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
    assert lines[0].split() == list(HEADERS)
    assert len(lines) == 2 + len(BUILT_IN)  # header, rule, one line a planner; no legend
    assert lines[-1].split() == ["load", "-", "0", "3", *["0"] * 8, "0"]
    assert max(map(len, lines)) <= WIDTH
    assert lines[3].split() == ["triton", "interpreter", "180", "3", "1", "0", "2", "0", "4", "1",
                                "0", "0", "16.8"]


def test_the_legend_is_its_own_lines():
    assert legend_lines() == [
        "pass..error: pytest's outcomes; judged: oob, an access outside a tensor seen; differs, a "
        "difference only a project rule",
        "  decides; not-wrapper, one only the wrapper's check decides; declared, a divergence a "
        "manifest declares"]
    assert " ".join(line.strip() for line in legend_lines()) == LEGEND


def test_parse_stops_at_the_next_subject():
    """Tables follow each other with no legend between: the first one's rows end at the next
    subject's line."""
    lines = [*render(BUILT_IN), "subject canary-plan:", *render([BUILT_IN[1]]), *legend_lines()]
    assert list(parse(lines)) == ["numba-cuda-bound", "triton", "load"]
    assert parse(lines)["load"] == ["load", "-", "0", "3", *["0"] * 8, "0"]


def test_a_long_external_planner_wraps_and_reads_back():
    lines = render([*BUILT_IN, LONG])
    assert max(map(len, lines)) <= WIDTH
    assert len(lines) > 2 + 4  # the long name took continuation lines
    rows = parse(lines)
    assert rows[LONG[0]] == [str(c) for c in LONG]
    assert rows["load"] == ["load", "-", "0", "3", *["0"] * 8, "0"]


def test_a_narrower_width_is_kept_too():
    lines = render([LONG], width=110)
    assert max(map(len, lines)) == 110 and parse(lines)[LONG[0]][0] == LONG[0]


def _profile_model(planners: list[str]) -> dict:
    from impls.offsets_planner.harness.section6 import ROWS

    rows = [{"key": r.key, "situation": r.situation, "project": r.project, "upstream": r.upstream,
             "cells": {p: f"{r.project} x{k + 1}, reads out of bounds x1"
                       for k, p in enumerate(planners)},
             "cases": {p: [] for p in planners}} for r in ROWS]
    return {"planners": planners, "rows": rows}


def test_the_divergence_profile_fits_the_terminal_and_keeps_every_word():
    from conformance.reporting.divergence_profile import render as profile_render

    for count in (1, 3, 7):
        planners = [f"tests.planted.some_module:planner_number_{k}" for k in range(count)]
        model = _profile_model(planners)
        text = profile_render(model, width=WIDTH - 2)
        assert max(map(len, text.splitlines())) <= WIDTH - 2, count
        words = text.split()
        for row in model["rows"]:  # every word of every cell is still printed (wrapped)
            for p in planners:
                for word in row["cells"][p].split():
                    assert word in words, (count, word)
        # three planners fit beside each other at 118 columns; more go to further tables
        assert text.count("spec §6 situation") == -(-count // 3), count
    # without a width (Markdown, a report) the table is one line per row, as wide as it takes
    wide = profile_render(_profile_model(["python"]))
    assert len(wide.splitlines()) == 2 + len(_profile_model(["python"])["rows"])


BUILT_IN_PLANNERS = ["numba-cuda", "numba-cuda-bound", "python", "triton", "triton-bound"]


def _counted_model(planners: list[str]) -> dict:
    model = _profile_model(planners)
    for row in model["rows"]:
        row["cells"] = {p: f"{row['project']} x{k + 1}" for k, p in enumerate(planners)}
    return model


def test_a_long_situation_stays_one_row_of_the_profile():
    """In the terminal a situation too long for its column used to go on at the start of the next
    line, where it read as a row of its own; now the situation takes the room the planners leave
    (whole, with up to three planners at 118 columns) and every further line of a wrapped cell is
    indented, its row's first column blank."""
    from conformance.reporting.divergence_profile import render as profile_render
    from impls.offsets_planner.harness.section6 import ROWS

    assert profile_render(_counted_model(["python"]), width=WIDTH - 2).splitlines() == [
        "spec §6 situation                               this project               python",
        "----------------------------------------------  -------------------------  "
        "--------------------------------------",
        "translated slot >= lut_len                      clamps                     clamps x1",
        "prefix_lens[r] - 1 >= max_seq_len               clamps                     clamps x1",
        "req_pool_indices[r] < 0 or >= max_reqs, active  no read, seed -1           "
        "no read, seed -1 x1",
        "write_offsets past bs                           untouched                  untouched x1",
        "negative prefix where W - prefix exceeds int64  exact                      exact x1",
        "a 0-d tensor where a 1-D one is expected        counted as length 1, then  "
        "counted as length 1, then validated x1",
        "                                                  validated",
        "a prefix but extend 0                           skips the read             "
        "skips the read x1",
        "min(total_verify, verify_capacity) >= 2^31      the int32 wrap             "
        "the int32 wrap x1"]
    text = profile_render(_counted_model(BUILT_IN_PLANNERS), width=WIDTH - 2)
    tables = text.split("\n\n")
    assert [t.splitlines()[0].split()[-3:] for t in tables] == [
        ["numba-cuda", "numba-cuda-bound", "python"], ["project", "triton", "triton-bound"]]
    for table in tables:
        lines = table.splitlines()
        rule = [len(dashes) for dashes in lines[1].split()]
        firsts = [ln for ln in lines[2:] if not ln.startswith(" ")]
        assert [ln[:rule[0]].rstrip() for ln in firsts] == [r.situation for r in ROWS]
        for line in lines[2:]:
            if line.startswith(" "):  # a further line of a row: each cell there indented
                cells = [line[a:a + w] for a, w in zip(_starts(rule), rule)]
                assert all(c.strip() == "" or c.startswith("  ") for c in cells), line
        assert max(map(len, lines)) <= WIDTH - 2


def _starts(widths: list[int]) -> list[int]:
    return [sum(widths[:k]) + 2 * k for k in range(len(widths))]


def test_a_note_wraps_at_words_and_never_breaks_a_planner_name():
    from conformance.plugin.summary import note_lines

    name = "tests.planted.divergent_planners:reads_past_row_" + "x" * 90  # longer than a line
    lines = note_lines(f"isolation: {name} ran in a child all the same (--no-isolate applies to "
                       "built-in planners: an external planner's code never runs in this process)")
    assert lines[0] == "isolation:" and lines[1] == f"  {name}"  # alone on its line, whole
    assert all(len(line) <= WIDTH for line in lines[2:])
    assert " ".join(line.strip() for line in lines).endswith("never runs in this process)")
    assert note_lines("short note") == ["short note"]


def test_a_count_stays_on_its_words_line():
    """A cell wrapped in its column keeps ``validated x3`` together: the count alone on a further
    line (``x3`` under ``counted as length 1, then validated``) read as a cell of its own."""
    import re

    from conformance.reporting.divergence_profile import render as profile_render

    for model in (_counted_model(BUILT_IN_PLANNERS), _profile_model(BUILT_IN_PLANNERS)):
        text = profile_render(model, width=WIDTH - 2)
        assert re.search(r"  x\d+", text) is None, text  # a count at a cell line's start
        cells = [cell for row in model["rows"] for cell in row["cells"].values()]
        assert len(re.findall(r"\S x\d+", text)) == sum(len(re.findall(r"x\d+", c)) for c in cells)
        assert "\u00a0" not in text and max(map(len, text.splitlines())) <= WIDTH - 2
