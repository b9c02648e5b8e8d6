"""A hostile kernel author against the upstream entries command's verdict: the divergence manifest
(conformance/upstream/entries_declared.py, ``cases/entries-planner/divergences/sglang-RELEASE.json``)
and ``python -m conformance upstream-entries RELEASE --reapply DOC`` (entries_command.py), with
rows judged by ``entries_judge.judge_case`` on planted planners on the CPU.

Caught attacks are plain tests with the exact outcome; uncaught ones are ``xfail(strict=True)``
stating the outcome a fix must give (the engine's own attacks: tests/test_one_call_attacks.py).
"""

from __future__ import annotations

import json

import pytest

from conformance.engine.call_runs import RUNS
from conformance.upstream import entries_command, entries_declared
from conformance.upstream.entries_declared import DeclarationError, apply, good
from conformance.upstream.entries_judge import judge_case, load_cases
from tests.planted import wrong_entries_planners as wrong

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py

RELEASE = "0.5.23"
CASES = {c["id"]: c for c in load_cases()}
JUDGED = [{"step": "judge", "status": "ok", "seconds": 0.0}]
BUILT = [{"step": f"build lut={a} pool={b}", "status": "ok", "seconds": 0.0}
         for a in (False, True) for b in (False, True)]
DECLARED = entries_declared.load(RELEASE)


def row(planner, case_id: str) -> dict:
    return judge_case(planner, CASES[case_id], "cpu")


def doc_of(*rows, steps=BUILT + JUDGED) -> dict:
    return {"release": RELEASE, "steps": list(steps), "cases": list(rows),
            "random": {"batches": 1, "passed": 1, "failed": 0, "failures": []}}


def reapply(tmp_path, doc: dict) -> tuple[int, str]:
    (tmp_path / "in.json").write_text(json.dumps(doc))
    code = entries_command.main([RELEASE, "--reapply", str(tmp_path / "in.json"),
                                 "--out", str(tmp_path / "out")])
    return code, (tmp_path / "out" / entries_command.MD_NAME).read_text()


def test_a_contract_failure_is_undeclared_and_not_good():
    r = row(wrong.shifted_position, "entries-padding-row-between-two")
    doc = doc_of(r)
    apply(doc, DECLARED)
    assert r["status"] == "fail" and r["undeclared"] == "fail, not declared" and not good(doc)


def test_a_declared_case_that_passes_is_stale():
    r = row(lambda **kw: None, "entries-error-rank")  # no error: the check is missing
    assert r["status"] == "unchecked"
    doc = doc_of(r)
    apply(doc, DECLARED)
    assert r["undeclared"] == "declared error-divergence, got unchecked" and not good(doc)
    passed = {"id": "entries-error-rank", "pins": None, "status": "pass", "verdict": {}}
    doc = doc_of(passed)
    apply(doc, DECLARED)
    assert passed["stale"].startswith("declared error-divergence, but it passed") and not good(doc)


def test_reapply_refuses_a_document_of_another_release(tmp_path):
    (tmp_path / "in.json").write_text(json.dumps({**doc_of(), "release": "0.5.22"}))
    assert entries_command.main([RELEASE, "--reapply", str(tmp_path / "in.json"),
                                 "--out", str(tmp_path / "out")]) == 2


@pytest.mark.parametrize("status", ["fail", "oob", "crashed"])
def test_a_manifest_cannot_declare_a_failure_away(tmp_path, status):
    r = {"id": "entries-padding-row-between-two", "pins": None, "status": status, "verdict": None}
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"release": RELEASE, "divergences": [
        {"case": r["id"], "status": status, "why": "upstream's documented behaviour"}]}))
    try:
        declared = entries_declared.load(RELEASE, path)
    except DeclarationError:
        return  # refused: what the fix does
    doc = doc_of(r)
    apply(doc, declared)
    assert not good(doc)


def test_reapply_judges_a_row_by_its_verdict_not_its_status(tmp_path):
    r = row(wrong.shifted_position, "entries-padding-row-between-two")
    assert r["verdict"]["count"] == len(RUNS)  # position 0 one too high in every run
    code, _ = reapply(tmp_path, doc_of({**r, "status": "pass", "why": ""}))
    assert code == 1


def test_reapply_of_an_unjudged_document_is_not_good(tmp_path):
    code, md = reapply(tmp_path, {"release": RELEASE, "steps": JUDGED})
    assert "**NOT BUILT: the child stopped before building" in md
    assert code == 1


def test_an_unrelated_raise_is_not_the_declared_error_divergence():
    def oom(**kw):
        raise RuntimeError("CUDA error: out of memory")
    r = row(oom, "entries-error-rank")
    assert r["status"] == "error-divergence"
    doc = doc_of(r)
    apply(doc, DECLARED)
    assert "declared" not in r and not good(doc)


def test_garbage_written_on_overflow_is_not_the_declared_trap():
    def zeroes_slots(**kw):
        kw["out_verify_slot_indices"].zero_()
    r = row(zeroes_slots, "entries-overflow-enable-1")
    assert r["status"] == "differs (overflow-writes-nothing)"
    doc = doc_of(r)
    apply(doc, DECLARED)
    assert "declared" not in r and not good(doc)
