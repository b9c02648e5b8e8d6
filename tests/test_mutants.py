"""The planted mutant family (tests/planted/mutants/) and ``python -m conformance mutants``
(conformance/robustness/mutants.py): the family is well formed and its control plans as the
pure-Python planner does; the kill / survivor bookkeeping on small results documents; and (slow) the command
end to end on three mutants and the whole family: every non-equivalent mutant is killed
under the contract profile.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections import Counter
from pathlib import Path

import pytest
import torch

from conformance.robustness.mutants import (
    MutantsError,
    Score,
    Verdict,
    check_control,
    check_loaded,
    check_run,
    judge_results,
    list_family,
    load_family,
    render,
)
from impls.offsets_planner.python_planner import launch as python_launch
from tests.planted import mutants as family
from tests.subproc import run_cli

ALL = [family.CONTROL, *family.MUTANTS]


def _launcher(key: str):
    module, _, attr = family.planner_name(key).partition(":")
    return getattr(importlib.import_module(module), attr)


# --- the family -------------------------------------------------------------------------------

def test_family_has_at_least_32_mutants_and_some_equivalent_ones():
    assert len(family.MUTANTS) >= 32
    equivalent = {k: r for k, r in family.MUTANTS.items() if r}
    assert equivalent and all(r.startswith("equivalent under contract: ") and
                              r.endswith("killed under --profile project")
                              for r in equivalent.values())


@pytest.mark.parametrize("key", ALL)
def test_every_mutant_is_a_launcher_with_the_planners_signature_and_a_one_line_bug(key):
    launch = _launcher(key)
    assert inspect.signature(launch) == inspect.signature(python_launch)
    doc = launch.__doc__.strip()
    assert "\n" not in doc
    assert doc.startswith("Bug: ") or key == family.CONTROL


def test_list_names_every_mutant_with_its_bug_and_runs_nothing():
    lines = list_family(family.__name__).splitlines()
    assert [line.split()[0] for line in lines] == [*family.MUTANTS, family.CONTROL]
    for line, key in zip(lines, family.MUTANTS):
        assert _launcher(key).__doc__.strip() in line
        assert (family.MUTANTS[key] or "") in line
    assert lines[-1].endswith("(the control)")


def test_every_launcher_in_the_family_modules_is_registered():
    found = set()
    for path in Path(family.__file__).parent.glob("*.py"):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"{family.__name__}.{path.stem}")
        found |= {f"{path.stem}:{name}" for name, value in vars(module).items()
                  if hasattr(value, "planner_class")}  # made by base.launcher
    assert found == set(ALL)


def _kwargs(rpi, prefix, extend, *, rows=4, cols=16, lut=None, window=0, capacity=1 << 20,
            seeds_len=None) -> dict:
    n = len(rpi)
    seeds_len = n if seeds_len is None else seeds_len
    i64 = torch.int64
    return dict(
        req_pool_indices=torch.tensor(rpi, dtype=i64), prefix_lens=torch.tensor(prefix, dtype=i64),
        extend_seq_lens=torch.tensor(extend, dtype=i64),
        req_to_token=torch.arange(rows * cols, dtype=torch.int32).reshape(rows, cols),
        full_to_swa_index_mapping=None if lut is None else torch.tensor(lut, dtype=i64),
        out_verify_offsets_scratch=torch.full((4097,), 7, dtype=i64),
        out_write_offsets=torch.full((seeds_len + 1,), 7, dtype=i64),
        out_write_seed_slot_indices=torch.full((seeds_len,), 7, dtype=i64),
        out_verify_num_valid=torch.full((1,), 7, dtype=torch.int32),
        out_verify_enable=torch.full((1,), 7, dtype=torch.int32),
        out_write_num_valid_reqs=torch.full((1,), 7, dtype=torch.int32),
        swa_window_size=window, verify_capacity=capacity)


CONTROL_INPUTS = [
    ([1, 0, 2], [5, 99, 3], [1, 99, 1], {}),  # spec section 7, padding row in the middle
    ([1, 2, 3, 1], [0, 4, 10, 40], [8, 1, -3, 2], {"seeds_len": 6}),  # past the row, negative
    ([3, -1, 9, 2], [2, 5, 5, 0], [1, 1, 1, 4], {}),  # rows outside the table
    ([1, 2], [3, 20], [1, 1], {"lut": [100 + i for i in range(9)], "window": 4, "capacity": 5}),
    ([], [], [], {"seeds_len": 2}),
]


@pytest.mark.parametrize("rpi, prefix, extend, extra", CONTROL_INPUTS)
def test_the_control_writes_what_the_pure_python_planner_writes(rpi, prefix, extend, extra):
    want, got = _kwargs(rpi, prefix, extend, **extra), _kwargs(rpi, prefix, extend, **extra)
    python_launch(**want)
    _launcher(family.CONTROL)(**got)
    for name, value in want.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(got[name], value), name


def test_a_mutant_plants_its_bug():
    """The seed-column mutant of the brief: spec section 7's rpi [2], prefix [7] reads column 7."""
    kwargs = _kwargs([2], [7], [1])
    _launcher("seeds:seed_column_prefix")(**kwargs)
    assert kwargs["out_write_seed_slot_indices"].tolist() == [2 * 16 + 7]  # 38 is due


def test_the_cached_plan_mutant_is_wrong_only_on_a_second_call():
    launch = _launcher("stores:cached_plan")
    kwargs = _kwargs([1], [3], [1])
    launch(**kwargs)
    assert kwargs["out_write_seed_slot_indices"].tolist() == [18]
    kwargs["prefix_lens"] = torch.tensor([5])
    launch(**kwargs)
    assert kwargs["out_write_seed_slot_indices"].tolist() == [18]  # 20 is due: replayed


# --- the bookkeeping --------------------------------------------------------------------------

def _doc(*results: tuple[str, str, str], verdict: dict | None = None) -> dict:
    return {"complete": True, "results": [
        {"planner": planner, "case": case, "status": status,
         "message": "any text: never read", "verdict": verdict}
        for planner, case, status in results]}


ROW_NEGATIVE = {"count": 2, "by_rule": {"row-out-of-table": 2}, "differences": [
    {"step": 0, "run": "a", "what": "value", "field": "out_write_seed_slot_indices", "index": 1,
     "expected": -1, "got": 47, "rule": "row-out-of-table", "evidence": None}]}
"""A verdict as the results file holds it: a row outside the table read from the table's end."""


@pytest.mark.parametrize("status", ["fail", "oob", "crash", "timeout", "xpass"])
def test_a_failing_status_kills(status):
    verdict = judge_results(_doc(("m", "a", "pass"), ("m", "b", status)), ["m"])["m"]
    assert verdict.killed is True
    assert verdict.statuses == Counter({"pass": 1, status: 1})


@pytest.mark.parametrize("status", ["differs", "not-wrapper", "declared", "pass", "skip", "error"])
def test_other_statuses_never_kill(status):
    verdict = judge_results(_doc(("m", "a", status)), ["m"])["m"]
    assert verdict.killed is False


def test_differs_results_are_kept_with_their_rules_and_first_difference_from_the_verdict():
    doc = _doc(("m", "hazard-row-negative", "differs"), ("other", "x", "fail"),
               verdict=ROW_NEGATIVE)
    verdicts = judge_results(doc, ["m", "unseen"])
    assert verdicts["m"].differs == [(
        "hazard-row-negative", "decided by: project rule row-out-of-table (2)",
        "out_write_seed_slot_indices[1]: got 47, expected -1")]
    assert verdicts["unseen"].killed is False and not verdicts["unseen"].statuses
    assert "other" not in verdicts


def _score(contract: dict[str, Verdict], project: dict[str, Verdict], reasons) -> Score:
    return Score(reasons, {"contract": contract, "project": project})


def test_kill_rate_survivors_and_wrong_declarations():
    reasons = {"a": None, "b": None, "eq": "equivalent under contract: x", "bad": "equivalent "
               "under contract: y"}
    contract = {"a": Verdict(True, Counter(fail=2)), "b": Verdict(False, Counter(differs=1), [
        ("c1", "decided by: project rule past-row", "out_write_seed_slot_indices[0]: got 9, "
         "expected 8")]),
                "eq": Verdict(False, Counter(differs=3)), "bad": Verdict(True, Counter(fail=1))}
    project = {"a": Verdict(True, inferred=True), "b": Verdict(True, Counter(fail=1)),
               "eq": Verdict(True, Counter(fail=3)), "bad": Verdict(True, Counter(fail=1))}
    score = _score(contract, project, reasons)
    assert score.kill_rate("contract") == (1, 2)
    assert score.kill_rate("project") == (2, 2)
    assert score.survivors("contract") == ["b"] and score.survivors("project") == []
    assert score.wrong_declarations() == ["bad"]
    assert score.equivalent_survivors() == []
    assert score.failed()
    text = render(score)
    assert text.splitlines()[0].split() == ["mutant", "contract", "project", "declared"]
    assert text.splitlines()[4].split() == ["eq", "SURVIVED", "killed", "equivalent"]
    assert "kill rate --profile contract: 1/2 non-equivalent (50%)" in text
    assert ("kill rate --profile project: 2/2 non-equivalent (100%); 2/2 equivalent under "
            "contract killed") in text
    assert "survivor: b (survives --profile contract)" in text
    assert ("    c1: out_write_seed_slot_indices[0]: got 9, expected 8 (decided by: project rule "
            "past-row)") in text.splitlines()
    assert "WRONG DECLARATION: bad is declared equivalent" in text
    assert "  eq: equivalent under contract: x" in text
    assert score.to_json()["mutants"][1]["contract"]["differs"] == [
        {"case": "c1", "rules": "decided by: project rule past-row",
         "first": "out_write_seed_slot_indices[0]: got 9, expected 8"}]


def test_all_killed_and_equivalents_killed_under_project_is_a_pass():
    reasons = {"a": None, "eq": "equivalent under contract: x"}
    score = _score({"a": Verdict(True, Counter(fail=1)), "eq": Verdict(False, Counter({"pass": 1}))},
                   {"a": Verdict(True, inferred=True), "eq": Verdict(True, Counter(fail=1))},
                   reasons)
    assert not score.failed()
    assert "killed (contract)" in render(score)


def test_an_equivalent_mutant_that_survives_project_fails_the_score():
    reasons = {"eq": "equivalent under contract: x"}
    score = _score({"eq": Verdict(False)}, {"eq": Verdict(False, Counter(differs=1))}, reasons)
    assert score.equivalent_survivors() == ["eq"] and score.failed()
    assert "no case reached its bug" not in render(score)
    assert "equivalent mutant not killed under project: eq" in render(score)


def test_a_survivor_no_case_reaches_says_so():
    score = _score({"a": Verdict(False, Counter({"pass": 3}))},
                   {"a": Verdict(False, Counter({"pass": 3}))}, {"a": None})
    assert "no case reached its bug (every case passed)" in render(score)


@pytest.mark.parametrize("doc, code", [(None, 1), ({"complete": False}, 1),
                                       ({"complete": True}, 2), ({"complete": True}, 4)])
def test_an_unfinished_run_is_never_scored(doc, code):
    with pytest.raises(MutantsError):
        check_run(doc, code, "contract")


def test_a_finished_run_is_scored():
    check_run({"complete": True}, 1, "contract")
    check_run({"complete": True}, 0, "project")


def test_the_control_must_pass_every_case():
    check_control(Verdict(False, Counter({"pass": 3, "skip": 1})), "contract")
    for statuses in (Counter({"pass": 3, "fail": 1}), Counter({"differs": 1}), Counter()):
        with pytest.raises(MutantsError, match="control"):
            check_control(Verdict(False, statuses), "contract")


def test_a_family_that_cannot_be_loaded_is_an_error():
    with pytest.raises(MutantsError, match="no.such.family"):
        load_family("no.such.family")
    assert load_family("tests.planted.mutants")[0] == family.MUTANTS


# --- the command ------------------------------------------------------------------------------

@pytest.mark.slow  # two corpus runs with a worker per mutant: about 45 s on 2 cores
def test_the_command_end_to_end_on_three_mutants(tmp_path):
    """enable_ge dies on capacity-exact (total 3 == capacity 3); position_clamped_to_table only
    differs on the past-row seed of hazard-prefix-past-row (a project rule: killed under project
    only); num_valid_saturates survives: neither case reaches total >= 2^31."""
    out = tmp_path / "score.json"
    proc = run_cli("mutants", "--mutant", "scalars:enable_ge", "--mutant",
                   "seeds:position_clamped_to_table", "--mutant", "scalars:num_valid_saturates",
                   "--case", "capacity-exact", "--case", "hazard-prefix-past-row",
                   "--json", str(out), timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert "kill rate --profile contract: 1/2 non-equivalent (50%)" in proc.stdout
    assert "survivor: scalars:num_valid_saturates (survives --profile contract and project)" \
        in proc.stdout
    assert "no case reached its bug" in proc.stdout
    assert "mutants --profile contract" in proc.stderr  # progress
    rows = {m["mutant"]: m for m in json.loads(out.read_text())["mutants"]}
    assert rows["scalars:enable_ge"]["contract"]["killed"] is True
    # --planner-maxfail 1: capacity-exact comes first and kills it; the other case is skipped
    assert rows["scalars:enable_ge"]["contract"]["statuses"] == {"fail": 1, "skip": 1}
    assert rows["scalars:enable_ge"]["project"] == {"killed": True, "inferred": True,
                                                    "statuses": {}, "differs": []}
    clamped = rows["seeds:position_clamped_to_table"]
    assert clamped["equivalent"].startswith("equivalent under contract")
    assert clamped["contract"]["killed"] is False
    assert [d["case"] for d in clamped["contract"]["differs"]] == ["hazard-prefix-past-row"]
    assert clamped["project"]["killed"] is True
    assert rows["scalars:num_valid_saturates"]["contract"]["statuses"] == {"pass": 2}


def _batched_run(monkeypatch, batch: int, failing_control_session: int | None = None):
    """score_family on the family's first five non-equivalent mutants, ``--batch batch``, with
    run_profile replaced by one that records each session's planners and answers every mutant
    ``fail`` and the control ``pass`` (``fail`` in session ``failing_control_session``)."""
    import argparse

    from conformance.robustness import mutants as command

    keys = [k for k, r in family.MUTANTS.items() if r is None][:5]
    sessions = []

    def fake_run(profile, planners, args, out_dir, progress, part=""):
        sessions.append((profile, part, list(planners)))
        control_status = "fail" if len(sessions) == failing_control_session else "pass"
        return {"complete": True, "results": [
            {"planner": name, "status": control_status if i == 0 else "fail"}
            for i, name in enumerate(planners)]}

    monkeypatch.setattr(command, "run_profile", fake_run)
    args = argparse.Namespace(family=family.__name__, mutant=keys, case=[], cases=[], keep=None,
                              full=False, batch=batch, no_progress=True)
    return keys, sessions, lambda: command.score_family(args)


def test_mutants_run_in_sessions_of_at_most_batch_each_with_the_control(monkeypatch):
    keys, sessions, score = _batched_run(monkeypatch, 2)
    result = score()
    control = family.planner_name(family.CONTROL)
    assert sessions == [
        ("contract", "1-of-3", [control, *map(family.planner_name, keys[0:2])]),
        ("contract", "2-of-3", [control, *map(family.planner_name, keys[2:4])]),
        ("contract", "3-of-3", [control, family.planner_name(keys[4])])]
    assert result.kill_rate("contract") == (5, 5)  # every mutant killed: no project session


def test_a_session_whose_control_fails_stops_the_score(monkeypatch):
    _, sessions, score = _batched_run(monkeypatch, 2, failing_control_session=2)
    with pytest.raises(MutantsError, match="control planner did not pass every case under contract"):
        score()
    assert len(sessions) == 2


def test_batch_takes_a_count_of_at_least_one():
    proc = run_cli("mutants", "--batch", "0")
    assert proc.returncode == 2
    assert "--batch: must be at least 1, got 0" in proc.stderr


def test_a_run_with_a_load_fault_is_not_scored():
    """A ``--case`` id that names no case is a result in the ``load`` column: the run is refused
    (exit 2 names it), never scored over fewer cases than asked."""
    doc = {"complete": True, "results": [
        {"id": "spec7-no-prefix[python]", "planner": "python", "status": "pass", "message": ""},
        {"id": "hazard-past-row[missing]", "planner": "load", "status": "fail",
         "message": "--case hazard-past-row: no case has this id\n"}]}
    with pytest.raises(MutantsError) as excinfo:
        check_loaded(doc, "contract")
    assert str(excinfo.value) == (
        "the contract run did not load the cases as asked (`python -m conformance cases` lists "
        "them):\n  hazard-past-row[missing]: --case hazard-past-row: no case has this id")
    check_loaded({"results": doc["results"][:1]}, "contract")  # no fault: nothing raised


def test_the_command_refuses_an_unknown_mutant():
    proc = run_cli("mutants", "--mutant", "seeds:no_such_bug")
    assert proc.returncode == 2
    assert "unknown mutant(s): seeds:no_such_bug" in proc.stderr


@pytest.mark.long  # 13 minutes alone on 2 cores, 17 in CI's slow set: `pytest -m long`
def test_every_non_equivalent_mutant_is_killed_under_contract(tmp_path):
    """The corpus's mutation score: 100% of the non-equivalent mutants killed under the default
    contract profile, every equivalent one killed under project and none under contract."""
    out = tmp_path / "score.json"
    proc = run_cli("mutants", "--json", str(out), "--no-progress", timeout=1800)
    assert out.exists(), proc.stderr
    score = json.loads(out.read_text())
    survivors = [m["mutant"] for m in score["mutants"]
                 if m["equivalent"] is None and not m["contract"]["killed"]]
    assert survivors == [], proc.stdout
    rate = score["kill_rate"]["contract"]
    assert rate["killed"] == rate["non_equivalent"] == sum(
        1 for r in family.MUTANTS.values() if r is None)
    assert proc.returncode == 0, proc.stdout
