"""Twenty-sixth hostile review, kept as tests: ``report --bench``'s rule that a planner's figures
stand only beside a run that judged it on the whole corpus (conformance/reporting/
corpus_coverage.py), and the rule that a case-file override sits only on a step that expects an
error (conformance/corpus/override_checks.py). Each test asserts the verdict the harness must
give; the wrong planner is ``tests.planted.wrong_planners:off_by_one_scan`` (81 corpus cases
fail): no new planted planner was needed. A whole-corpus run is a few minutes on 2 cores, so each
attack runs its case(s) for real and the rest of the corpus is the records a whole run keeps
(tests/corpus_results.py), as tests/test_hostile24.py does.

Fooled before this review, fixed here:

* ``pytest conformance/ --planner WRONG --manifest MINE.json``: a manifest of the runner's own
  declared every corpus failure of the wrong planner (``"status": "fail"``, by case id or by
  tag): each read ``declared``, the run exited 0, and ``report --bench`` published the figures
  (``declared`` was a judged, passing status). A ``declared`` or ``xfail`` verdict now stands only
  where the corpus itself declares it (its own ``divergences/`` manifest, naming the planner, the
  code the run recorded and the outcome it observed; or the case's own ``xfail``):
  ``corpus_coverage.undeclared`` / ``excused``, withheld as failures are.
* A run started in a copy of the checkout whose corpus case files were edited (the wrong
  planner's failing case given trivial content under its id): its records spell the case file as
  the corpus's and its rerun lines name no ``--cases``, so they counted for the corpus case, and
  the fingerprint of a copy without ``.git`` (commit and dirty null) did not even read stale.
  Each record now keeps the case's SHA-256 (``case_digest``: its case dict as loaded,
  conformance/corpus/case_model.py), and a record counts only where it is the corpus case's; the
  reason names the cases judged on other content. A results file of an older corpus (or one
  written before records kept the digest) counts for nothing that changed.

Tried, and the harness held (kept as passing tests):

* A runner's ``--manifest`` whose divergence names the case a corpus manifest also declares, for
  another outcome than the corpus declares: not the corpus's declaration, withheld. The corpus's
  own declarations (upstream's launcher, gated on its ``sources``) still vouch.
* ``--deselect`` of the corpus cases a planner fails: the run exits 0, the figures are withheld
  (judged on fewer than every case).
* Override-like effects on a step that expects outputs (cases/offsets-planner): overrides in a
  group's ``defaults`` (the schema refuses them), beside ``steps`` (refused at ``$.overrides``),
  ``derived`` on a launcher case (refused); an error step's overrides and table changes before a
  valid step: the valid step's launch is built from the inputs as written (no override leaks
  past its step), and the table the judge's element rules read is the table the planner gets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.corpus.case_model import case_digest
from conformance.corpus.loader import load_file
from conformance.corpus.corpus_subject import element_rules
from conformance.engine.reference import record_expectations
from conformance.engine.steps import CaseInputs
from conformance.reporting import bench_section, corpus_coverage
from conformance.reporting.corpus_coverage import corpus_cases
from tests.corpus_results import corpus_results

ROOT = Path(__file__).resolve().parent.parent
WRONG = "tests.planted.wrong_planners:off_by_one_scan"
SOURCE = {"module": "tests.planted.wrong_planners", "sha256": "b" * 64, "imports": []}
BATCH_SIZES = "cases/offsets-planner/boundary/batch-sizes.json"


def _pytest(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
             "PYTHONPATH": str(cwd)})


def _judged(results: list[dict], planner: str = WRONG, source: dict = SOURCE) -> dict:
    return {"fingerprint": {"planners": {planner: {"source": source}}}, "results": results}


def _with_rest_of_corpus(own: list[dict], planner: str = WRONG) -> list[dict]:
    """``own`` records, and a passing record of every other corpus case (what a whole-corpus run
    of the planner records there)."""
    ids = {r["case"] for r in own}
    return [*own, *(r for r in corpus_results(planner) if r["case"] not in ids)]


# -- a manifest of the runner's own -----------------------------------------------------------

def test_a_runners_manifest_never_makes_a_wrong_planners_figures_stand(tmp_path):
    """Fixed (bs-1 read ``declared``, exit 0; with every failure so declared the figures were
    published)."""
    manifest = tmp_path / "mine.json"
    manifest.write_text(json.dumps({
        "planner": WRONG, "description": "every failure of mine, declared by me",
        "divergences": [{"case": "bs-1", "section": "5", "reason": "mine", "status": "fail"}]}))
    results = tmp_path / "results.json"
    proc = _pytest("--planner", WRONG, "--case", "bs-1", "--manifest", str(manifest),
                   "--results", str(results))
    assert proc.returncode == 0, proc.stdout[-3000:]  # the run itself: the runner's choice
    (record,) = json.loads(results.read_text())["results"]
    assert (record["status"], record["observed"]) == ("declared", "fail")
    assert record["case_digest"] == case_digest(_case("bs-1"))
    held = bench_section.withheld({WRONG: SOURCE}, {WRONG}, _judged(_with_rest_of_corpus([record])))
    assert held == {WRONG: (
        "1 corpus case(s) not passing that the corpus declares for no such planner (a --manifest "
        "of the runner's, say: bs-1): a wrong planner's figures are not published")}
    # an xfail the corpus case does not declare counts for nothing either
    xfail = {**record, "status": "xfail"}
    assert corpus_coverage.undeclared([xfail], WRONG, SOURCE) == ("bs-1",)


UPSTREAM = "sglang.srt.mem_cache.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"


def test_the_corpus_own_manifest_still_vouches_and_only_for_what_it_declares():
    """Held: upstream's launcher, whose code the corpus's manifest lists, keeps its figures beside
    the divergences that manifest declares; not beside another outcome, nor for other code."""
    corpus_manifest = json.loads((ROOT / "cases/offsets-planner/divergences/"
                                  "sglang-offsets-kernel.json").read_text())
    source = {"module": UPSTREAM.partition(":")[0], "sha256": corpus_manifest["sources"][0],
              "imports": []}
    whole = corpus_results(UPSTREAM)
    declared = [{**r, "status": "declared", "observed": "crash"}
                if r["case"] == "hazard-row-negative" else r for r in whole]
    judged = _judged(declared, UPSTREAM, source)
    assert bench_section.withheld({UPSTREAM: source}, {UPSTREAM}, judged) == {}
    other_code = {**source, "sha256": "c" * 64}
    held = bench_section.withheld({UPSTREAM: other_code}, {UPSTREAM},
                                  _judged(declared, UPSTREAM, other_code))
    assert "hazard-row-negative" in held[UPSTREAM] and "declares for no such" in held[UPSTREAM]
    undeclared_case = [{**r, "status": "declared", "observed": "fail"}
                       if r["case"] == "bs-1" else r for r in whole]
    held = bench_section.withheld({UPSTREAM: source}, {UPSTREAM},
                                  _judged(undeclared_case, UPSTREAM, source))
    assert "bs-1" in held[UPSTREAM]


# -- a copy of the checkout, edited ------------------------------------------------------------

def _case(case_id: str):
    return next(c for c in corpus_cases() if c.id == case_id)


def _edited_copy(tmp_path: Path) -> Path:
    """The checkout's working tree copied (no history, no evidence folders), with the corpus's
    bs-1 given bs-0's content (the empty batch, which the wrong planner passes) under its id."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", ".pytest_cache", ".benchmarks", "out", "gpu", "upstream"))
    path = copy / BATCH_SIZES
    doc = json.loads(path.read_text())
    assert [c["id"] for c in doc["cases"][:2]] == ["bs-0", "bs-1"]
    doc["cases"][1] = {**doc["cases"][0], "id": "bs-1"}
    path.write_text(json.dumps(doc, indent=1))
    return copy


def test_a_run_of_an_edited_copy_of_the_checkout_never_counts_for_the_corpus(tmp_path):
    """Fixed (the edited bs-1 passed and counted for the corpus's bs-1: same id, file spelling,
    JSON path, and a rerun line without --cases)."""
    copy = _edited_copy(tmp_path)
    results = tmp_path / "results.json"
    proc = _pytest("--planner", WRONG, "--case", "bs-1", "--results", str(results), cwd=copy)
    assert proc.returncode == 0, proc.stdout[-3000:]
    doc = json.loads(results.read_text())
    (record,) = doc["results"]
    assert (record["status"], record["file"], record["json_path"]) == ("pass", BATCH_SIZES,
                                                                        "$.cases[1]")
    assert "--cases" not in record["rerun"]
    assert (doc["fingerprint"]["commit"], doc["fingerprint"]["dirty"]) == (None, None)
    case = _case("bs-1")
    assert record["case_digest"] != case_digest(case)
    assert not corpus_coverage.is_corpus_result(record, case, WRONG)
    total = len(corpus_cases())
    held = bench_section.withheld({WRONG: SOURCE}, {WRONG}, _judged(_with_rest_of_corpus([record])))
    assert held == {WRONG: (
        f"judged on {total - 1} of {total} corpus cases (cases/offsets-planner/; not judged: "
        "bs-1; 1 of them judged on other content under the case's id and file (an edited copy of "
        "the corpus, or another commit's): bs-1): figures stand only beside a run of the whole "
        "corpus")}


def test_records_of_an_older_corpus_or_without_a_digest_count_for_nothing():
    """Fixed with the above: an id, file, JSON path and rerun line are not the content."""
    whole = corpus_results(WRONG)
    assert bench_section.withheld({WRONG: SOURCE}, {WRONG}, _judged(whole)) == {}
    for change in ({"case_digest": None}, {"case_digest": "0" * 64}):
        records = [{**whole[0], **change}, *whole[1:]]
        assert corpus_coverage.coverage(records, WRONG).missing == ("bs-0",), change
    gone = [{k: v for k, v in r.items() if k != "case_digest"} for r in whole]
    assert corpus_coverage.coverage(gone, WRONG).judged == 0


def test_the_digest_is_the_case_dict_as_loaded(tmp_path):
    """A group's defaults are part of the case: an edit there changes each case's digest; the
    spelling of the file (indentation, key order) and where it lies do not."""
    doc = json.loads((ROOT / BATCH_SIZES).read_text())
    same = tmp_path / "same.json"
    same.write_text(json.dumps(doc, indent=4, sort_keys=True))
    changed = tmp_path / "changed.json"
    doc["defaults"]["inputs"]["verify_capacity"] = 999_999
    changed.write_text(json.dumps(doc))
    (a, b, c) = (load_file(p)[0][1] for p in (ROOT / BATCH_SIZES, same, changed))
    assert case_digest(a) == case_digest(b) != case_digest(c)


# -- narrowed runs -----------------------------------------------------------------------------

def test_a_deselected_failure_leaves_the_figures_withheld(tmp_path):
    """Held: ``--deselect`` of the failing case: exit 0, one case fewer judged."""
    results = tmp_path / "results.json"
    node = f"conformance/test_corpus.py::bs-1[{WRONG}]"
    proc = _pytest("--planner", WRONG, "--case", "bs-0", "--case", "bs-1", "--deselect", node,
                   "--results", str(results))
    assert proc.returncode == 0, proc.stdout[-3000:]
    records = json.loads(results.read_text())["results"]
    assert [(r["case"], r["status"]) for r in records] == [("bs-0", "pass")]
    rest = [r for r in corpus_results(WRONG) if r["case"] not in ("bs-0", "bs-1")]
    held = bench_section.withheld({WRONG: SOURCE}, {WRONG}, _judged([*records, *rest]))
    assert held[WRONG].startswith(f"judged on {len(corpus_cases()) - 1} of ")
    assert "not judged: bs-1)" in held[WRONG]


# -- overrides: no override-like effect on a step that expects outputs --------------------------

def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(doc))
    return path


def _base_case() -> dict:
    return {"id": "h26", "description": "d", "tags": [], "golden_check": "hand",
            "source": {"kind": "spec", "ref": "docs/spec/offsets-planner.md §5"}}


def test_overrides_in_a_groups_defaults_are_refused(tmp_path):
    raw = {k: v for k, v in _case("bs-1").raw.items() if k != "pins"}
    doc = {"group": "g", "defaults": {"overrides": [{"swap": ["prefix_lens", "extend_seq_lens"]}]},
           "cases": [{**raw, "id": "h26"}]}
    cases, faults = load_file(_write(tmp_path, doc))
    assert not cases and len(faults) == 1 and "overrides" in faults[0].message


def test_derived_on_a_launcher_case_is_refused(tmp_path):
    raw = _case("bs-1").raw
    cases, faults = load_file(_write(tmp_path, {**raw, "id": "h26", "derived": {"bs": 0}}))
    assert not cases and faults[0].json_path == "$.derived"


def test_an_error_steps_override_and_table_change_reach_the_next_step_as_the_judge_reads_them(
        tmp_path):
    """Held: a case of two steps, the first expecting an error (the corpus's strided
    ``prefix_lens`` override) after a table change, the second valid (bs-1's requests): the
    second launch holds its inputs as written (the override stayed on its step), its table
    carries the first step's change, and the reference planner on those very tensors gives the
    golden the case states for them (the seed read through the changed entry)."""
    bs1, err = _case("bs-1"), _case("err-contiguous-prefix-lens")
    requests = {k: bs1.raw["inputs"][k] for k in ("req_pool_indices", "prefix_lens",
                                                  "extend_seq_lens")}
    shared = {k: v for k, v in bs1.raw["inputs"].items() if k not in requests}
    golden = {**bs1.raw["expect"], "out_write_seed_slot_indices": [99]}
    doc = {**_base_case(), "inputs": shared, "steps": [
        {"inputs": {**requests, "req_to_token_set": [[1, 4, 99]]},
         "overrides": list(err.steps[0].overrides), "expect": {"error": err.steps[0].error}},
        {"inputs": requests, "expect": golden}]}
    cases, faults = load_file(_write(tmp_path, doc))
    assert not faults, [str(f) for f in faults]
    (case,) = cases
    assert err.steps[0].overrides == [{"tensor": "prefix_lens", "layout": "strided"}]
    (valid,) = [b for b in CaseInputs(case, "cpu").steps(runs=("a",)) if b.index == 1]
    assert valid.kwargs["prefix_lens"].is_contiguous()
    assert valid.kwargs["prefix_lens"].tolist() == [5]
    assert int(valid.kwargs["req_to_token"][1, 4]) == 99
    assert record_expectations(case)[1]["out_write_seed_slot_indices"] == [99]
    rules = element_rules.case_rules(case)
    assert [r.error for r in rules] == ["contract", "contract"] and not rules[1].elements
