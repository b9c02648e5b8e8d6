"""What ``python -m conformance fuzz`` writes: never over a file the user may have reviewed, under
an id that stays valid whatever the planner is called, never an unloadable file, with goldens the
planner under test cannot reach; and plans stream (``--n`` of a billion costs no memory up front).
Found cases go to tmp dirs, never cases/."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from conformance.cli import main as cli_main
from conformance.corpus.arrays import evaluate
from conformance.corpus.loader import load_corpus
from conformance.engine.inputs import build_tables
from conformance.robustness.found_cases import FoundCaseError, found_id, place
from conformance.robustness.fuzz import fuzz
from conformance.robustness.fuzz_jobs import checked
from tests.oracle import oracle
from tests.report_runs import ROOT

PLANTED = "tests.planted.fuzz_planners:planted"
LONG = ("tests.planted.fuzz_planners:"
        "a_planted_planner_whose_name_is_long_enough_to_push_an_id_past_its_limit")
POISONER = "tests.planted.fuzz_planners:poisons_the_golden"


def _fuzz(out: Path, planner: str = PLANTED) -> tuple:
    logged: list[str] = []
    result = fuzz([planner], n=5, seed=3, out=out, max_found=1, progress=False,
                  log=logged.append)
    return result, logged


@pytest.mark.slow  # fuzz runs in their own processes, 13-25 s on 2 cores
def test_same_seed_twice_never_overwrites(tmp_path: Path):
    out = tmp_path / "found"
    first, _ = _fuzz(out)
    [path] = first.written
    reviewed = json.loads(path.read_text())
    del reviewed["needs_review"]  # the user reviewed it: their edit must survive
    reviewed["golden_check"] = "checked by hand against spec section 5"
    path.write_text(json.dumps(reviewed, indent=1))
    again, logged = _fuzz(out)
    assert (again.written, again.kept) == ([], [path])
    assert "the same plan is already in" in logged[0] and "not written again" in logged[0]
    assert json.loads(path.read_text()) == reviewed
    # A different plan under the same id (another golden, a hand edit of the inputs): a new name.
    other = {**reviewed, "inputs": {**reviewed["inputs"], "verify_capacity": 12345}}
    path.write_text(json.dumps(other, indent=1))
    third, logged = _fuzz(out)
    [new] = third.written
    assert new == out / f"{path.stem}-2.json" and json.loads(path.read_text()) == other
    assert "written to" in logged[0] and f"--case {path.stem}-2 " in logged[0]
    cases, faults = load_corpus([out])
    assert faults == [] and sorted(c.id for c in cases) == [path.stem, f"{path.stem}-2"]


@pytest.mark.slow  # fuzz runs in their own processes, 13-25 s on 2 cores
def test_long_planner_name_gets_a_short_stable_id(tmp_path: Path):
    assert len(LONG) == 100
    plan = {"inputs": {"req_pool_indices": [1]}, "expect": {"out_verify_num_valid": 0}}
    case_id = found_id(LONG, plan)
    assert len(case_id) <= 70 and case_id.startswith("found-tests-planted-fuzz-planners-a-p-")
    assert found_id(LONG, plan) == case_id != found_id(LONG + "2", plan)
    assert found_id("x", plan) != found_id("x", {**plan, "inputs": {"req_pool_indices": [2]}})
    proc = subprocess.run([sys.executable, "-c", "from conformance.robustness.found_cases import "
                           f"found_id; print(found_id({LONG!r}, {plan!r}))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == case_id  # the same on every run (no salted hash())
    result, _ = _fuzz(tmp_path / "found", LONG)
    [path] = result.written
    cases, faults = load_corpus([tmp_path / "found"])
    written = json.loads(path.read_text())
    assert faults == [] and [c.id for c in cases] == [found_id(LONG, written)] == [path.stem]


def test_the_same_plan_from_two_seeds_is_one_file(tmp_path: Path):
    from conformance.robustness.fuzz import found_case
    from conformance.robustness.random_plans import random_plan

    plan = random_plan(3, 1)
    a = found_case(plan, PLANTED, 0, 1, [], "failure")
    b = found_case(plan, PLANTED, 2 ** 64, 9, [], "failure")  # another seed, the same plan
    assert a["id"] == b["id"] != found_case(random_plan(3, 2), PLANTED, 0, 1, [], "f")["id"]
    first, second = place(a, tmp_path), place(b, tmp_path)
    assert (first.new, second.new, second.path) == (True, False, first.path)
    assert [p.name for p in tmp_path.glob("*.json")] == [first.path.name]


def test_unloadable_case_is_never_left_behind(tmp_path: Path):
    doc = {"id": "found-x-s1-p1", "description": "no expect: the loader refuses it", "tags": [],
           "source": {"kind": "fuzz", "ref": "test"}, "golden_check": "none", "inputs": {}}
    with pytest.raises(FoundCaseError, match=r"does not load, not written to .*found-x-s1-p1"):
        place(doc, tmp_path)
    assert list(tmp_path.iterdir()) == []


def _oracle_expect(case) -> dict:
    step = case.steps[0]
    table, lut = build_tables(case, "cpu")
    return oracle(evaluate(step.inputs["req_pool_indices"]), evaluate(step.inputs["prefix_lens"]),
                  evaluate(step.inputs["extend_seq_lens"]), table.numpy(),
                  None if lut is None else lut.numpy(), step.inputs.get("swa_window_size", 0),
                  step.inputs.get("verify_capacity", 1 << 20))


@pytest.mark.slow  # fuzz runs in their own processes, 13-25 s on 2 cores
def test_planner_that_patches_the_reference_cannot_poison_goldens(tmp_path: Path):
    out = tmp_path / "found"
    proc = subprocess.run([sys.executable, "-m", "conformance", "fuzz", "--planner", POISONER,
                           "--n", "5", "--seed", "3", "--max-found", "1", "--no-progress",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(rf"divergences: {re.escape(POISONER)} \(external\) [1-9]\d*;", proc.stdout)
    [case], faults = load_corpus([out])
    want = {k: v if isinstance(v, int) else evaluate(v) for k, v in case.steps[0].expect.items()}
    assert faults == [] and want == _oracle_expect(case)  # the spec's answer, not the planner's


def test_plans_stream(tmp_path: Path):
    tracemalloc.start()
    try:
        stream = checked(("python",), 10**9, 1, 1, False, 60.0)
        first = next(stream)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    stream.close()
    assert [index for index, _ in first] == list(range(25)) and peak < 20 * 2**20, peak


@pytest.mark.parametrize("n", ["0", "-5"])
def test_cli_refuses_no_plans(capsys, n):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["fuzz", "--planner", "python", "--n", n, "--no-progress"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"argument --n: must be at least 1, got {int(n)}")


@pytest.mark.parametrize("seconds", ["0", "-1", "nan"])
def test_cli_refuses_an_isolate_timeout_that_is_not_positive(capsys, seconds):
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["fuzz", "--planner", "python", "--isolate", "--isolate-timeout", seconds,
                  "--no-progress"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"argument --isolate-timeout: {seconds!r}: must be a number of seconds > 0")
