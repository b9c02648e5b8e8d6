"""Crash isolation: a planner that segfaults on one case and hangs on another fails exactly those
two as ``crash`` / ``timeout`` while the others pass and the run completes with its summary. An
external planner's cases and cases tagged ``hazard`` are isolated by default; ``--isolate`` /
``--no-isolate`` choose."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from impls.offsets_planner.harness.hazards import HazardTagWarning
from conformance.corpus.loader import load_corpus
from conformance.robustness.isolation import should_isolate
from tests.subproc import run_pytest

CRASHY = "tests.planted.crash_planners:crashy"
GOLDEN = {"out_write_offsets": [0, 1], "out_verify_enable": 1, "out_write_num_valid_reqs": 1}


def _case(case_id: str, tags: list[str], row: int, prefix: int, seed: int) -> dict:
    """A one-request case on the linear 4 x 16 table (table[row, pos] = row * 16 + pos)."""
    return {"id": case_id, "description": f"row {row}, prefix {prefix}", "tags": tags,
            "inputs": {"req_pool_indices": [row], "prefix_lens": [prefix], "extend_seq_lens": [1]},
            "expect": {"out_verify_offsets_scratch": [0, prefix], "out_verify_num_valid": prefix,
                       "out_write_seed_slot_indices": [seed], **GOLDEN}}


def isolation_corpus(directory: Path) -> Path:
    """Five one-request cases in ``directory/iso.json`` (tests/test_isolation_guarantees.py and
    tests/test_sanitizer.py use them too)."""
    directory.mkdir()
    doc = {"group": "isolation", "defaults": {
        "source": {"kind": "project", "ref": "tests/test_isolate.py"},
        "golden_check": "hand: table[row, pos] = row*16 + pos; position clamps to 15 (spec §6)",
        "inputs": {"req_to_token": {"generator": "linear", "max_reqs": 4, "max_seq_len": 16}}},
        "cases": [
            # isolated: every case of an external planner, a built-in's hazard cases
            _case("iso-a-plain", [], 2, 7, 38),                # passes
            _case("iso-b-past-row", ["hazard"], 1, 20, 31),    # segfaults (crash_planners)
            _case("iso-c-hang", ["hazard"], 1, 13, 28),        # hangs
            _case("iso-d-hazard-ok", ["hazard"], 3, 2, 49),    # passes in a fresh worker
            _case("iso-e-plain", [], 1, 3, 18),                # passes
        ]}
    (directory / "iso.json").write_text(json.dumps(doc))
    return directory


def load_isolation_corpus(directory: Path):
    """:func:`isolation_corpus` loaded in this process: (cases, faults).

    iso-c-hang and iso-d-hazard-ok carry ``hazard`` only to run isolated (their values reach no row
    of spec section 6), which the loader says with one HazardTagWarning each: asserted here, so the
    tests that load this corpus print no warning."""
    with pytest.warns(HazardTagWarning) as caught:
        loaded = load_corpus([isolation_corpus(directory)])
    assert sorted((w.filename, str(w.message).split(":")[0]) for w in caught) == [
        (str(directory / "iso.json"), "$.cases[2]"), (str(directory / "iso.json"), "$.cases[3]")]
    return loaded


@pytest.mark.slow  # a crash and a hang that waits out its timeout: about 16 s on 2 cores (tests/test_isolation_guarantees.py keeps a dying worker in the default run)
def test_segfault_and_hang_fail_one_case_each_and_the_run_completes(tmp_path: Path):
    cases = isolation_corpus(tmp_path / "cases")
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner", CRASHY,
                             "--isolate-timeout", "3")
    assert proc.returncode == 1
    outcome = {name.split("[")[0]: item for name, item in items.items()}
    assert {k: v.outcome for k, v in outcome.items()} == {
        "iso-a-plain": "passed", "iso-b-past-row": "failed", "iso-c-hang": "failed",
        "iso-d-hazard-ok": "passed", "iso-e-plain": "passed"}
    crash, hang = outcome["iso-b-past-row"], outcome["iso-c-hang"]
    assert "crash (isolated): killed by signal 11 (SIGSEGV)" in crash.text
    assert "crash_planners.py" in crash.text  # faulthandler's stack, from the child's last lines
    assert "Extension modules: (" in crash.text  # faulthandler's long list, cut to its count
    assert "torch._C" not in crash.text
    assert crash.properties["status"] == "crash"
    assert "timeout (isolated): no result after 3 s; killed" in hang.text
    assert hang.properties["status"] == "timeout"
    assert "\n  row 1, prefix 13\n  timeout (isolated)" in hang.text  # the case's description
    # the rerun waits as long as the run did, not the default 60 s
    assert (f"--isolate-timeout 3 --planner {CRASHY} --cases {cases} --case iso-c-hang "
            ) in hang.text
    assert f"pytest conformance/ --isolate-timeout 3 --planner {CRASHY} --cases " in crash.text
    assert "conformance summary" in proc.stdout and "3 passed" in proc.stdout
    assert "Traceback" not in proc.stdout
    results = json.loads((tmp_path / "results.json").read_text())  # plugin/results_writer.py's
    status = {r["case"]: r["status"] for r in results["results"]}
    assert status == {"iso-a-plain": "pass", "iso-b-past-row": "crash", "iso-c-hang": "timeout",
                      "iso-d-hazard-ok": "pass", "iso-e-plain": "pass"}


def test_should_isolate_hazards_and_external_planners_by_default_and_obeys_the_flags():
    assert should_isolate(("hazard", "int64"), "python", isolate=False, no_isolate=False)
    assert not should_isolate(("padding",), "python", isolate=False, no_isolate=False)
    assert should_isolate(("padding",), "tests.x:planner", isolate=False, no_isolate=False)
    assert should_isolate(("padding",), "python", isolate=True, no_isolate=False)
    assert not should_isolate(("hazard",), "python", isolate=False, no_isolate=True)
    # an external planner never runs in pytest's process, --no-isolate or not
    assert should_isolate(("padding",), "tests.x:planner", isolate=False, no_isolate=True)
    assert not should_isolate(("hazard",), "python", isolate=True, no_isolate=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="an illegal address needs a CUDA device")
def test_illegal_address_is_a_crash_and_the_next_case_runs(tmp_path: Path):
    cases = isolation_corpus(tmp_path / "cases")
    proc, items = run_pytest(tmp_path, "--cases", str(cases), "--planner",
                             "tests.planted.crash_planners:illegal_address", "--isolate",
                             "-k", "iso-b-past-row or iso-d-hazard-ok")
    outcome = {name.split("[")[0]: item for name, item in items.items()}
    assert outcome["iso-b-past-row"].outcome == "failed"
    assert outcome["iso-b-past-row"].properties["status"] == "crash"
    assert "crash (isolated)" in outcome["iso-b-past-row"].text
    assert outcome["iso-d-hazard-ok"].outcome == "passed"  # a fresh worker, a fresh context


def test_a_crash_tail_cuts_faulthandlers_extension_list_and_keeps_the_stack():
    """worker_process.crash_tail: the protocol markers left out, faulthandler's one-line list of
    extension modules (CPython 3.10+, often 2,000 characters) cut to its count, a short line that
    merely starts the same way kept, the last TAIL_LINES lines only."""
    from conformance.robustness.worker_process import MARK, TAIL_LINES, crash_tail

    modules = ", ".join(f"ext{i}._core" for i in range(120))
    log = "\n".join([f"{MARK} ready", "Fatal Python error: Segmentation fault", "",
                     'File "/x/crash_planners.py", line 9 in crashy',
                     f"Extension modules: {modules} (total: 120)", "Extension modules: mine"])
    assert crash_tail(log).splitlines() == [
        "Fatal Python error: Segmentation fault", "",
        'File "/x/crash_planners.py", line 9 in crashy',
        "Extension modules: (120 listed by faulthandler, left out here)",
        "Extension modules: mine"]
    many = "\n".join(f"line {i}" for i in range(40))
    assert crash_tail(many).splitlines() == [f"line {i}" for i in range(40 - TAIL_LINES, 40)]
