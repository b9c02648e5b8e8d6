"""A planner with one contract bug on ordinary rows fails every case that shows it, whatever the
case pins, and is blamed for nothing else (spec section 8): the seed read from column ``prefix``
instead of ``prefix - 1`` (tests/planted/mutants/seeds.py), run as an external planner on the
whole corpus under the default contract profile."""

from __future__ import annotations

import json

import pytest

from conformance.reporting import divergence_profile
from conformance.reporting.error_table import catalog
from impls.offsets_planner.harness.section6 import ROWS
from tests.subproc import run_pytest

SEED_COLUMN = "tests.planted.mutants.seeds:seed_column_prefix"


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("seed-column")
    proc, _ = run_pytest(tmp, "--planner", SEED_COLUMN, timeout=900)
    return proc, json.loads((tmp / "results.json").read_text())


def test_ordinary_rows_of_project_cases_fail(whole_run):
    proc, doc = whole_run
    assert proc.returncode == 1, proc.stdout[-2000:]
    status = {r["case"]: r for r in doc["results"] if r["planner"] == SEED_COLUMN}
    for case in ("hazard-row-negative", "random-decode-prefill-bs-33"):
        assert status[case]["status"] == "fail", status[case]["message"][:500]
        diffs = status[case]["verdict"]["differences"]
        assert diffs and all(d["rule"] == "contract" for d in diffs)
        assert {d["field"] for d in diffs} == {"out_write_seed_slot_indices"}
    # request 1 of hazard-row-negative is row 2, prefix 3: seed table[2, 2] = 34, not 35
    first = status["hazard-row-negative"]["verdict"]["differences"][0]
    assert (first["index"], first["expected"], first["got"]) == (1, 34, 35)
    # a differs is only ever a difference a project rule decides
    for r in status.values():
        if r["status"] == "differs":
            assert "contract" not in r["verdict"]["by_rule"], r["case"]


def test_its_profile_names_no_behaviour_it_does_not_have(whole_run):
    _, doc = whole_run
    model = divergence_profile.profile(doc["results"])
    words = {row.key: row.project for row in ROWS}
    for row in model["rows"]:
        cell = row["cells"][SEED_COLUMN]
        assert cell == "-" or cell.split(" x")[0] == words[row["key"]], (row["key"], cell)
    assert any(row["cells"][SEED_COLUMN] != "-" for row in model["rows"])


def test_its_error_table_is_all_green(whole_run):
    _, doc = whole_run
    steps = [s for r in doc["results"] if r["planner"] == SEED_COLUMN and r.get("verdict")
             for s in r["verdict"]["error_steps"]]
    assert steps and all(s["ok"] for s in steps)  # err-steps-*-between-valid fail on seeds only
    cells = [row["cells"][SEED_COLUMN] for row in catalog(doc["results"], [SEED_COLUMN])
             if SEED_COLUMN in row["cells"]]
    assert len(cells) >= 14 and all(c["ok"] and c["failed"] == 0 for c in cells)


def test_a_wrong_defined_element_equal_to_what_it_held_is_a_value(tmp_path):
    """A step's defined element whose right value equals what it held from an earlier step, and
    which the planner writes wrong, is ``value`` (another value), never ``written`` (must keep
    what it held), which is for elements the step does not define."""
    import json

    from tests.subproc import run_pytest

    planner = "tests.planted.wrong_planners:single_request_total_plus_one"
    proc, _ = run_pytest(tmp_path, "--planner", planner, "--case", "err-steps-dtype-between-valid")
    assert proc.returncode == 1, proc.stdout[-2000:]
    [result] = json.loads((tmp_path / "results.json").read_text())["results"]
    kinds = {(d["step"], d["field"], d["index"], d["what"], d["expected"], d["got"])
             for d in result["verdict"]["differences"]}
    assert kinds == {(2, "out_write_offsets", 1, "value", 1, 2)}
    assert "written where it must keep" not in proc.stdout
