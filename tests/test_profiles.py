"""Pins, profiles and known-divergence manifests, end to end on planted planners that mimic each
documented divergence of upstream's launcher (tests/planted/divergent_planners.py), and the
evidence rules that make a read outside a tensor a contract failure whatever the case pins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.corpus.loader import load_corpus
from conformance.corpus.manifest import find_divergence, load_manifest, load_manifests
from impls.offsets_planner.harness.element_rules import case_rules
from conformance.engine.outside import outside_proof
from conformance.engine.verdict import KEPT, Difference, VerdictData, status_of
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.reporting import divergence_profile
from conformance.reporting.results_format import load_results
from tests.subproc import REPO, run_pytest

PLANTED = "tests.planted.divergent_planners"
MANIFESTS = REPO / "tests" / "data" / "divergences"


def statuses(tmp: Path) -> dict[str, str]:
    doc = json.loads((tmp / "results.json").read_text())
    return {r["case"]: r["status"] for r in doc["results"]}


def cases_args(*ids: str) -> list[str]:
    return [a for i in ids for a in ("--case", i)]


@pytest.mark.slow  # two or three whole runs, about 20 s on 2 cores
def test_a_launcher_without_the_wrapper_check_fails_where_it_returns(tmp_path):
    """Spec section 8: the wrapper decides only *which* error a step raises; a step that must
    raise and returned is the contract's failure, whatever the case pins."""
    args = ["--planner", f"{PLANTED}:no_wrapper_check", "--no-isolate",
            *cases_args("err-swa-lut-required", "err-order-wrapper-before-bs-range",
                        "spec7-decode-seed")]
    proc, _ = run_pytest(tmp_path, *args)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert statuses(tmp_path) == {"err-swa-lut-required": "fail",
                                  "err-order-wrapper-before-bs-range": "not-wrapper",
                                  "spec7-decode-seed": "pass"}
    assert "external planners judged on: contract (--profile contract)" in proc.stdout
    # only what applies to this run: no built-in planner ran, no manifest names this planner
    assert "built-in planners judged on" not in proc.stdout
    assert "manifest sglang-offsets-kernel.json" not in proc.stdout
    assert "divergence profile: no case of this run reached a situation of spec §6" in proc.stdout
    assert "1 failed, 1 passed, 1 not-wrapper" in proc.stdout
    proc, _ = run_pytest(tmp_path, *args, "--profile", "all")
    assert proc.returncode == 1
    assert statuses(tmp_path)["err-order-wrapper-before-bs-range"] == "fail"
    assert "judged on: contract+project+wrapper (--profile all)" in proc.stdout


@pytest.mark.slow  # two or three whole runs, about 20 s on 2 cores
def test_zero_d_is_a_project_rule(tmp_path):
    args = ["--planner", f"{PLANTED}:zero_d_index_error", "--no-isolate",
            *cases_args("err-not-1d-req-pool-indices-0d", "err-not-1d-prefix-lens")]
    proc, _ = run_pytest(tmp_path, *args)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert statuses(tmp_path) == {"err-not-1d-req-pool-indices-0d": "differs",
                                  "err-not-1d-prefix-lens": "pass"}
    doc = json.loads((tmp_path / "results.json").read_text())
    zero_d = next(r for r in doc["results"] if r["case"] == "err-not-1d-req-pool-indices-0d")
    assert zero_d["observed"] == "fail" and zero_d["pins"] == "project"
    assert zero_d["message"].startswith("differs from project rule")
    assert "IndexError" in zero_d["message"]
    judged = proc.stdout.split("judged, not failed (1: ", 1)[1].splitlines()  # named, not counted
    assert judged[1] == f"  differs: err-not-1d-req-pool-indices-0d[{PLANTED}:zero_d_index_error]"
    proc, _ = run_pytest(tmp_path, *args, "--profile", "project")
    assert proc.returncode == 1
    assert statuses(tmp_path)["err-not-1d-req-pool-indices-0d"] == "fail"


@pytest.mark.slow  # two or three whole runs, about 20 s on 2 cores
def test_reading_outside_the_table_is_never_a_project_rule(tmp_path):
    ids = ("hazard-prefix-past-row", "hazard-prefix-past-last-row", "spec7-decode-seed")
    args = ["--planner", f"{PLANTED}:reads_past_row", "--no-isolate", *cases_args(*ids)]
    proc, _ = run_pytest(tmp_path, *args)
    # past-row reads the next row (inside the table): a project-rule difference; past the last
    # row it returns the guard zone's fill: out of bounds, a contract failure though pinned project
    assert statuses(tmp_path) == {"hazard-prefix-past-row": "differs",
                                  "hazard-prefix-past-last-row": "oob",
                                  "spec7-decode-seed": "pass"}
    assert proc.returncode == 1
    assert "read outside a tensor" in proc.stdout
    proc, _ = run_pytest(tmp_path, *args, "--manifest", str(MANIFESTS / "reads-past-row.json"))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert statuses(tmp_path)["hazard-prefix-past-last-row"] == "declared"
    assert "reads-past-row.json: planner" in proc.stdout
    # the divergence profile names what it did in each situation of spec section 6 (from the
    # results; on the terminal the cell wraps within 120 columns: its words are there in order)
    doc = json.loads((tmp_path / "results.json").read_text())
    cell = {r["key"]: r["cells"] for r in divergence_profile.profile(doc["results"])["rows"]}
    said = "reads past the row x1, reads out of bounds x1"
    assert cell["past-row"][f"{PLANTED}:reads_past_row"] == said
    table = proc.stdout.split("divergence profile (", 1)[1].split("\n=")[0]
    assert max(map(len, table.splitlines())) <= 120  # the table wraps; a rerun command never
    printed = iter(table.split())
    assert all(word in printed for word in said.split())  # a subsequence of the printed words


@pytest.mark.slow  # two or three whole runs, about 20 s on 2 cores
def test_declared_upstream_bug_and_strict_unexpected_pass(tmp_path):
    manifest = MANIFESTS / "window-overflow.json"
    ids = ("width-negative-prefix-int64-window", "width-int64-min-prefix-small-window")
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:window_overflow", "--no-isolate",
                         *cases_args(*ids))
    assert proc.returncode == 1
    assert set(statuses(tmp_path).values()) == {"fail"}
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:window_overflow", "--no-isolate",
                         "--manifest", str(manifest), *cases_args(*ids))
    assert proc.returncode == 0, proc.stdout[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert {r["status"] for r in doc["results"]} == {"declared"}
    assert all("spec §5: upstream bug" in r["divergence"] for r in doc["results"])
    # the same manifest on a correct planner: every declared case now passes, which is flagged
    strict = tmp_path / "strict.json"
    strict.write_text(manifest.read_text().replace(f"{PLANTED}:window_*", "python"))
    proc, _ = run_pytest(tmp_path, "--planner", "python", "--manifest", str(strict),
                         *cases_args(*ids))
    assert proc.returncode == 1
    assert set(statuses(tmp_path).values()) == {"xpass"}
    assert "declared divergence (fail) passed" in proc.stdout


def test_a_malformed_manifest_is_a_load_fault_and_the_run_goes_on(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"planner": "python", "description": "x",
                               "divergences": [{"case": "spec7-decode-seed", "section": "6",
                                                "reason": "r", "status": "segfault"}]}))
    typo = tmp_path / "typo.json"
    typo.write_text(json.dumps({"planner": "python", "description": "x", "divergences": [
        {"case": "no-such-case", "section": "6", "reason": "r", "status": "fail"}]}))
    proc, items = run_pytest(tmp_path, "--planner", "python", "--manifest", str(bad),
                             "--manifest", str(typo), "--case", "spec7-decode-seed")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout
    loads = {name: item for name, item in items.items() if name.endswith("[load]")}
    assert len(loads) == 2 and all(i.outcome == "failed" for i in loads.values())
    texts = " ".join(i.text for i in loads.values())
    assert "bad.json: at $.divergences[0].status" in texts
    assert "names case 'no-such-case', which no loaded case has" in texts
    assert statuses(tmp_path)["spec7-decode-seed"] == "pass"


def test_manifest_loading_and_matching(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"planner": "pkg.mod:*", "description": "d", "divergences": [
        {"tag": "hazard", "section": "6", "reason": "by tag", "status": "crash"},
        {"case": "hazard-row-negative", "section": "6", "reason": "by id",
         "status": ["fail", "oob"]}]}))
    manifest, fault = load_manifest(path)
    assert fault is None
    hit = find_divergence([manifest], "pkg.mod:launch", "hazard-row-negative", ("hazard",))
    assert (hit.reason, hit.statuses) == ("by id", ("fail", "oob"))
    assert find_divergence([manifest], "pkg.mod:launch", "other", ("hazard",)).reason == "by tag"
    assert find_divergence([manifest], "python", "other", ("hazard",)) is None
    path.write_text("{")
    assert load_manifest(path)[1].json_path == "line 1 column 2"
    manifests, faults = load_manifests([DEFAULT_CASES_DIR])
    assert not faults
    assert [m.path.name for m in manifests] == ["sglang-offsets-kernel.json"]


def test_outside_proof_is_certain_not_likely():
    seeds = "out_write_seed_slot_indices"
    from conformance.engine.inputs import TABLE_GUARD_GARBAGE

    fill = next(iter(TABLE_GUARD_GARBAGE.values()))  # drawn from this run's poison seed
    assert "guard zone" in outside_proof(seeds, 0, 1, fill)
    # a value in no table or LUT element is no proof: an off-by-one on a seed read inside gives it
    assert outside_proof(seeds, 0, 1, 91488893) is None
    assert outside_proof(seeds, 0, 1, -1) is None
    assert "outside out_write_seed_slot_indices (1 past its end)" in outside_proof(seeds, 1, 1, 7)
    assert "(2 before its start)" in outside_proof(seeds, -2, 1, 7)


def test_every_corpus_case_declares_what_it_pins():
    cases, errors = load_corpus()
    assert not errors
    assert all("pins" in c.raw for c in cases)  # in the case or its group's defaults
    pins = {c.id: c.pins for c in cases}
    wrapper = {i for i, p in pins.items() if p == "wrapper"}
    assert wrapper == {"err-swa-lut-required", "err-swa-lut-required-w1",
                       "err-steps-wrapper-and-capacity-between-valid",
                       "err-order-wrapper-before-contiguous-and-dtype",
                       "err-order-wrapper-before-bs-range", "err-order-wrapper-before-device"}
    assert {pins[i] for i in ("err-not-1d-req-pool-indices-0d", "err-not-2d-req-to-token-0d",
                              "err-not-1d-lut-0d", "hazard-prefix-past-row")} == {"project"}
    # the two upstream bugs break section 5: the contract, not a project rule
    assert pins["width-negative-prefix-int64-window"] == "contract"
    assert pins["width-int64-min-prefix-small-window"] == "contract"
    assert pins["lut-clamp"] == "contract"  # the project clamps as upstream's kernel does


@pytest.mark.parametrize("case_id, rows", [
    ("hazard-prefix-past-row", ("past-row",)),
    ("hazard-row-negative", ("row-out-of-table",)),
    ("lut-clamp", ("lut-clamp",)),
    ("width-int64-min-prefix-small-window", ("window-overflow",)),
    ("err-not-1d-lut-0d", ("zero-d-tensor",)),
    ("random-decode-prefill-bs-33", ("past-row",)),  # found from its values
    ("spec7-decode-seed", ()),
])
def test_section6_rows_come_from_values(case_id, rows):
    from impls.offsets_planner.harness.section6 import out_of_contract

    case = {c.id: c for c in load_corpus()[0]}[case_id]
    assert tuple(r for r in out_of_contract(case) if r != "write-offsets-past-bs") == rows


@pytest.mark.slow  # a run under -n 2: three pytest processes, about 20 s on 2 cores
def test_judged_statuses_travel_through_pytest_xdist(tmp_path):
    ids = ("hazard-prefix-past-row", "hazard-prefix-past-last-row", "spec7-decode-seed")
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:reads_past_row", "-n", "2",
                         "--manifest", str(MANIFESTS / "reads-past-row.json"), *cases_args(*ids))
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert statuses(tmp_path) == {"hazard-prefix-past-row": "differs",
                                  "hazard-prefix-past-last-row": "declared",
                                  "spec7-decode-seed": "pass"}
    last = proc.stdout.strip().splitlines()[-1]  # pytest orders its counts as it met them
    assert all(part in last for part in ("1 passed", "1 differs", "1 declared")), last
    assert f"  differs: hazard-prefix-past-row[{PLANTED}:reads_past_row]\n" in proc.stdout
    assert "declared: hazard" not in proc.stdout  # a declared divergence is not listed there


@pytest.mark.slow  # two whole runs, about 20 s on 2 cores (tests/test_element_verdicts.py keeps the rule in the default run)
def test_a_contract_bug_on_a_project_case_is_a_failure_not_a_difference(tmp_path):
    """A case that pins a project rule excuses only what that rule decides (the seed of a row
    read past its end): an off-by-one write-offsets scan there is the contract's failure."""
    ids = ("hazard-prefix-past-row", "random-decode-prefill-bs-33", "spec7-decode-seed")
    proc, _ = run_pytest(tmp_path, "--planner", "tests.planted.wrong_planners:off_by_one_scan",
                         "--no-isolate", *cases_args(*ids))
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert set(statuses(tmp_path).values()) == {"fail"}
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:reads_past_row", "--no-isolate",
                         *cases_args("hazard-prefix-past-row"))
    assert statuses(tmp_path) == {"hazard-prefix-past-row": "differs"}  # the seed alone differs


def _verdict(*rules: str, outside: str | None = None) -> VerdictData:
    verdict = VerdictData()
    for k, rule in enumerate(rules):
        verdict.add(Difference(0, "a", "value", "out_write_seed_slot_indices", k, 1, 2, rule,
                               outside if k == 0 else None))
    return verdict


def test_status_comes_from_the_rule_of_every_difference():
    contract, project, everything = ("contract",), ("contract", "project"), \
        ("contract", "project", "wrapper")
    assert status_of(None, contract) == ("pass", ())
    assert status_of(_verdict("past-row"), contract) == ("differs", ("past-row",))
    assert status_of(_verdict("past-row"), project) == ("fail", ("past-row",))
    assert status_of(_verdict("past-row", "contract"), contract) == ("fail", ("contract",))
    assert status_of(_verdict("wrapper"), project) == ("not-wrapper", ("wrapper",))
    assert status_of(_verdict("wrapper"), everything) == ("fail", ("wrapper",))
    assert status_of(_verdict("past-row", outside="guard fill"), contract)[0] == "oob"


def test_never_written_and_no_error_are_never_a_rules_to_excuse():
    verdict = VerdictData()
    verdict.add(Difference(0, "a", "never-written", "out_write_seed_slot_indices", 0, 5, 9,
                           "past-row"))
    verdict.add(Difference(1, "a", "no-error", "error", None, "ValueError", None, "wrapper"))
    assert verdict.by_rule == {"contract": 2}
    assert status_of(verdict, ("contract",)) == ("fail", ("contract",))
    assert VerdictData.from_json(json.loads(json.dumps(verdict.to_json()))) == verdict


@pytest.mark.parametrize("case_id, decided", [
    # request 0 has the row -1 (the project decides its seed); request 1 is an ordinary row
    ("hazard-row-negative", {"out_write_seed_slot_indices": {0: "row-out-of-table"}}),
    ("hazard-prefix-past-row", {"out_write_seed_slot_indices": {0: "past-row"}}),
    ("spec7-decode-seed", {}),
])
def test_a_project_rule_decides_only_the_elements_of_its_requests(case_id, decided):
    case = {c.id: c for c in load_corpus()[0]}[case_id]
    rules = case_rules(case)
    got = {name: d for name, d in rules[0].elements.items() if name != "out_write_offsets"}
    assert got == decided
    assert rules[0].rule("out_write_seed_slot_indices", 1) == "contract"
    assert rules[0].rule("out_verify_offsets_scratch", 1) == "contract"


def test_an_out_of_table_seed_that_proves_no_read_is_not_called_one():
    """A planner that gives seed -7 (not -1) for a row outside the table: the verdict says
    "other" (no guard-zone fill, so no read outside is proven: conformance/engine/outside.py),
    and the divergence profile must not claim one; a proven read says so."""
    from conformance.reporting.divergence_profile import behaviour
    from impls.offsets_planner.harness.section6 import BY_KEY

    row = BY_KEY["row-out-of-table"]
    other = {"observed": "differs", "verdict": {"situations": {row.key: "other"}}}
    outside = {"observed": "oob", "verdict": {"situations": {row.key: "outside"}}}
    assert behaviour(other, row) == "gives another seed"
    assert behaviour(outside, row) == "reads out of bounds"


def test_a_seed_past_the_row_is_called_upstreams_read_only_when_it_is_that_value(tmp_path):
    """Spec section 6, past-row: upstream's kernel reads the flat table past the row. A planner
    whose seed there is that element (``reads_past_row``) does as upstream does; one whose seed
    is another element of the same row (``seed_inside_row``) gives another seed, and the profile
    must not say it read past the row (the value does not show that)."""
    planners = [f"{PLANTED}:reads_past_row", f"{PLANTED}:seed_inside_row"]
    proc, _ = run_pytest(tmp_path, *[a for p in planners for a in ("--planner", p)],
                         "--no-isolate", *cases_args("hazard-prefix-past-row"))
    assert proc.returncode == 0, proc.stdout[-3000:]  # differs: a project rule decides the seed
    doc = load_results(tmp_path / "results.json")
    words = {r["planner"]: r["verdict"]["situations"] for r in doc["results"]}
    assert words == {planners[0]: {"past-row": "upstream"}, planners[1]: {"past-row": "other"}}
    row = next(r for r in divergence_profile.profile(doc["results"])["rows"]
               if r["key"] == "past-row")
    assert row["cells"] == {planners[0]: "reads past the row x1",
                            planners[1]: "gives another seed x1"}


def test_upstreams_seed_past_the_row_goes_through_the_lut_with_its_index_clamped():
    """The value the rules expect of upstream where a request is past its row (element_rules'
    ``upstream``): the flat table element, then the LUT at min(slot, lut_len - 1); none where the
    flat read lands past the table."""
    from impls.offsets_planner.harness.element_rules import _upstream_seed
    from impls.offsets_planner.harness.hazards import LutValues, TableValues

    table = TableValues({"generator": "explicit", "values": [[1, 2], [3, 9], [5, -4]]})
    lut = LutValues({"generator": "explicit", "values": [10, 11, 12, 13, 14]})
    assert _upstream_seed(0, 3, table, None) == 3  # row 0, position 2: row 1's first element
    assert _upstream_seed(0, 3, table, lut) == 13
    assert _upstream_seed(1, 3, table, lut) == 14  # slot 9 past the LUT: index clamped to 4
    assert _upstream_seed(1, 4, table, lut) == -4  # a negative slot passes untranslated
    assert _upstream_seed(2, 3, table, lut) is None  # past the table: only the engine can tell


def test_a_seed_other_than_the_clamped_one_is_not_called_a_missing_clamp():
    """A planner that reads the wrong slot (column prefix, not prefix - 1) on a request whose
    slot is past the LUT gives another seed there; whether it clamps is not what the value shows
    (spec section 6's lut-clamp row; conformance/reporting/divergence_profile.py)."""
    result = {"planner": "pkg.mod:launch", "case": "random-swa-lut-clamp-bs-4095",
              "status": "fail", "observed": "fail", "out_of_contract": ["lut-clamp"],
              "verdict": {"situations": {"lut-clamp": "other"}}}
    clean = {**result, "case": "hazard-lut-clamp", "status": "pass", "observed": "pass",
             "verdict": None}
    row = next(r for r in divergence_profile.profile([result, clean])["rows"]
               if r["key"] == "lut-clamp")
    assert row["cells"] == {"pkg.mod:launch": "gives another seed x1, clamps x1"}


def test_a_raise_is_credited_only_to_the_one_row_its_step_shows(tmp_path):
    """A planner that raises on the seed read past a row: on hazard-prefix-past-row (its step
    shows past-row alone) the profile says "raises"; on width-num-valid-wrap (one step shows
    past-row and num-valid-wrap) the raise names neither row alone, so each says it raised on a
    step with other situations (before, neither was credited: num-valid-wrap read "-", as if the
    case never reached it)."""
    proc, _ = run_pytest(tmp_path, "--planner", f"{PLANTED}:raises_past_row",
                         *cases_args("hazard-prefix-past-row", "width-num-valid-wrap"))
    doc = load_results(tmp_path / "results.json")  # the schema knows every word
    by_case = {r["case"]: r for r in doc["results"]}
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert by_case["width-num-valid-wrap"]["out_of_contract"] == ["past-row", "num-valid-wrap"]
    assert by_case["width-num-valid-wrap"]["verdict"]["situations"] == {
        "past-row": "raised-shared", "num-valid-wrap": "raised-shared"}
    assert by_case["hazard-prefix-past-row"]["verdict"]["situations"] == {"past-row": "raised"}
    cells = {row["key"]: row["cells"][f"{PLANTED}:raises_past_row"]
             for row in divergence_profile.profile(doc["results"])["rows"]}
    shared = "raises (on a step with other situations) x1"
    assert sorted(cells["past-row"].split(", ")) == ["raises (on a step with other situations) x1",
                                                     "raises x1"], cells
    assert cells["num-valid-wrap"] == shared, cells


@pytest.mark.slow  # two whole runs of a bs-1025 case, about 30 s on 2 cores
def test_a_situation_is_read_from_every_difference_not_only_the_kept_ones(tmp_path):
    """The divergence profile's word for a section-6 row comes from every difference at its
    elements (conformance/engine/situations.py): a planner with more contract differences before
    them than a verdict keeps whole (conformance/engine/verdict.py ``KEPT``) was credited with
    the project's rule there. The same past-row seeds read the same with and without them."""
    case = "random-decode-prefill-bs-1025"
    words = {}
    for planner in ("no_seed_past_row", "no_seed_past_row_offsets_plus_one"):
        run_dir = tmp_path / planner
        run_dir.mkdir()
        proc, _ = run_pytest(run_dir, "--planner", f"{PLANTED}:{planner}", *cases_args(case))
        [result] = json.loads((run_dir / "results.json").read_text())["results"]
        # a project rule's difference alone: differs (exit 0, --profile contract); with the
        # contract's too: fail
        want = "fail" if planner.endswith("plus_one") else "differs"
        assert (result["status"], proc.returncode) == (want, int(want == "fail")), \
            proc.stdout[-3000:]
        words[planner] = result["verdict"]["situations"]
        if planner.endswith("plus_one"):
            verdict = result["verdict"]
            assert verdict["count"] > len(verdict["differences"]) == KEPT
            assert {d["field"] for d in verdict["differences"]} == {"out_write_offsets"}
    assert words["no_seed_past_row"] == {"past-row": "other"}, words
    assert words["no_seed_past_row_offsets_plus_one"] == {"past-row": "other"}, words

