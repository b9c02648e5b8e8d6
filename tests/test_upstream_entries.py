"""The entries launcher of a release built by sglang's own JIT (conformance/upstream/entries_*.py):
the layout (wheel bytes, one named stand-in, empty parents of ours), the judge on the pure-Python
planner and on planted wrong ones, and the command on a machine without a GPU, where it must record
the failing step and never claim a build. The hand-made wheel is tests/planted/fake_wheels.py."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from conformance.engine.call_runs import RUNS
from conformance.upstream import entries_declared
from conformance.upstream import entries_judge as judge
from conformance.upstream.command import default_cache
from conformance.upstream.entries_command import (JSON_NAME, LOG_NAME, MD_NAME, add_arguments,
                                                  run)
from conformance.upstream.entries_report import render
from conformance.upstream.entries_tree import (TREE_JSON, EntriesLayoutError, build_entries_tree,
                                               check_tree, load_tree)
from conformance.upstream.wheel import FetchError, fetch_wheel, open_wheel
from impls.entries_planner import subject as entries_subject
from impls.entries_planner.python_planner import launch as python_launch
from impls.entries_planner.upstream import HAZARD_PINS, STAND_IN_MODULE
from tests.planted import fake_wheels

pytestmark = pytest.mark.usefixtures("fixed_poison_seed")  # exact counts: tests/conftest.py

JIT = "sglang/kernels/jit"


def _args(*argv) -> argparse.Namespace:
    """The command's arguments as its own parser reads them (a test never builds them by hand)."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


def fake_tree(tmp_path, **overrides):
    wheel = open_wheel(fake_wheels.make_wheel(tmp_path, fake_wheels.entries_files(**overrides)))
    return wheel, build_entries_tree(wheel, tmp_path / "tree")


def test_layout_copies_the_wheels_bytes_and_names_its_one_stand_in(tmp_path):
    wheel, tree = fake_tree(tmp_path)
    members = fake_wheels.entries_files()
    python = sorted(p for p in tree.files if p.endswith(".py"))
    assert python == [f"{JIT}/__init__.py", f"{JIT}/utils/__init__.py", f"{JIT}/utils/arch.py",
                      f"{JIT}/utils/compile/__init__.py", fake_wheels.ENTRIES_KERNEL,
                      "sglang/srt/environ.py"]
    assert f"{JIT}/include/sgl_kernel/utils.h" in tree.files
    assert f"{JIT}/csrc/kv_canary/canary_plan_entries.cuh" in tree.files
    assert f"{JIT}/csrc/other/not_needed.cuh" not in tree.files
    site = tmp_path / "tree" / "site"
    for path in tree.files:
        assert (site / path).read_text() == members[path], path
    stand_in = (site / "sglang/srt/utils/common.py").read_text()
    assert "NOT sglang's code" in stand_in and stand_in != members["sglang/srt/utils/common.py"]
    assert list(tree.stand_ins) == [STAND_IN_MODULE]
    for package in ("sglang", "sglang/kernels", "sglang/kernels/ops/kv_canary/plan", "sglang/srt/utils"):
        assert "planner-conformance" in (site / package / "__init__.py").read_text(), package
    assert any("flashinfer" in x for x in tree.environment)
    assert any("sglang.srt.debug" in x and "conditional" in x for x in tree.not_laid_out)
    assert json.loads((tmp_path / "tree" / TREE_JSON).read_text())["wheel_sha256"] == wheel.sha256


def test_an_edit_after_layout_is_caught(tmp_path):
    _, tree = fake_tree(tmp_path)
    assert check_tree(load_tree(tmp_path / "tree")) == []
    (tmp_path / "tree" / "site" / f"{JIT}/utils/arch.py").write_text("is_cuda = None\n")
    assert check_tree(load_tree(tmp_path / "tree")) == [f"{JIT}/utils/arch.py (differs from RECORD)"]


def test_an_unconditional_import_of_the_server_is_refused(tmp_path):
    with pytest.raises(EntriesLayoutError, match="sglang.srt.server_args.*not loaded, not stubbed"):
        fake_tree(tmp_path, **{f"{JIT}/utils/arch.py": "from sglang.srt.server_args import X\n"})
    with pytest.raises(EntriesLayoutError, match="stand-in does not give"):
        fake_tree(tmp_path, **{f"{JIT}/utils/arch.py": "from sglang.srt.utils.common import get_ip\n"})


def test_every_case_and_random_batch_passes_on_the_reference_planner():
    rows = [judge.judge_case(python_launch, case, "cpu") for case in judge.load_cases()]
    assert {r["status"] for r in rows} == {"pass"} and len(rows) >= 20
    assert judge.hazard_pins() == HAZARD_PINS == judge.hazard_pins(entries_subject)
    assert {c["pins"] for c in judge.hazard_cases()} == set(HAZARD_PINS)
    assert len(judge.safe_cases()) + len(judge.hazard_cases()) == len(rows)
    done = judge.judge_random(python_launch, "cpu", 12)
    assert (done["passed"], done["failed"]) == (12, 0)


def _writes_the_tail(**kwargs):
    python_launch(**kwargs)
    kwargs["out_verify_prev_slot_indices"][-1] = 5


def _other_text(**kwargs):
    try:
        python_launch(**kwargs)
    except ValueError as exc:
        raise RuntimeError("Runtime check failed: " + str(exc)) from None


def test_the_judge_catches_a_tail_write_and_records_another_error_text():
    case = next(c for c in judge.load_cases() if c["id"] == "entries-padding-row-between-two")
    row = judge.judge_case(_writes_the_tail, case, "cpu")
    assert row["status"] == "fail" and row["rules"] == ["contract"]
    capacity = case["inputs"]["capacity"]
    first = row["verdict"]["differences"][0]
    assert (first["what"], first["field"], first["index"], first["got"]) == (
        "written", "out_verify_prev_slot_indices", capacity - 1, 5)
    assert row["why"].startswith(f"out_verify_prev_slot_indices[{capacity - 1}]: ")
    assert row["why"].endswith(f"(written; rule contract); {len(RUNS)} difference(s) in all")  # every run
    error_case = next(c for c in judge.load_cases() if c["id"] == "entries-error-dtype")
    row = judge.judge_case(_other_text, error_case, "cpu")
    assert row["status"] == "error-divergence"
    message = error_case["expect"]["message"]
    assert row["why"] == (f"error: expected PlanError dtype: {message}, got RuntimeError None: "
                          f"Runtime check failed: {message} (error; rule contract); {len(RUNS)} "
                          "difference(s) in all")  # the wrong error in every run


def test_a_hazard_case_that_raises_differs_from_its_rule_and_writing_as_well_fails():
    case = next(c for c in judge.load_cases() if c["id"] == "entries-empty-lut")

    def traps(**kwargs):
        raise RuntimeError("CUDA error: device-side assert triggered")
    assert judge.judge_case(traps, case, "cpu")["status"] == "differs (lut-empty)"

    def traps_after_writing(**kwargs):
        kwargs["out_verify_expected_positions"].fill_(0)
        traps()
    assert judge.judge_case(traps_after_writing, case, "cpu")["status"] == "fail"


def _verdict(*rules):
    """A verdict with one raised difference per rule (plain data, as a row carries it)."""
    diffs = [{"step": 0, "run": "a", "what": "raised", "field": "error", "index": None,
              "expected": "no error", "got": "CUDA error: an illegal memory access", "rule": r}
             for r in rules]
    return {"differences": diffs, "by_rule": {r: rules.count(r) for r in rules},
            "count": len(rules), "error_steps": [], "situations": {}, "outside": None}


def _doc(*rows, random_failed=0):
    """A judged document: every case of cases/entries-planner passed, but ``rows`` (by id)."""
    steps = [{"step": f"build lut={a} pool={b}", "status": "ok", "seconds": 1}
             for a in (False, True) for b in (False, True)] + [
        {"step": "judge", "status": "ok", "seconds": 1}]
    given = {r["id"]: dict(r) for r in rows}
    cases = [given.pop(c["id"], {"id": c["id"], "status": "pass", "verdict": _verdict()})
             for c in judge.load_cases()]
    return {"release": "9.9.9", "steps": steps, "cases": cases + list(given.values()),
            "random": {"batches": 3, "passed": 3 - random_failed, "failed": random_failed}}


def _marks(doc, ids):
    by_id = {r["id"]: r for r in doc["cases"]}
    return {i: (by_id[i].get("declared"), by_id[i].get("undeclared"), by_id[i].get("stale"))
            for i in ids}


def test_declarations_mark_rows_and_decide_the_verdict(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"release": "9.9.9", "divergences": [
        {"case": "a", "status": "differs (lut-empty)", "what": ["raised"],
         "got": "illegal memory access", "why": "spec §6: reads the LUT out of bounds"},
        {"case": "b", "status": "error-divergence", "why": "C++ RuntimeCheck text", "what": ["error"]},
        {"case": "c", "status": "error-divergence", "why": "stale one", "what": ["error"]},
        {"case": "e", "status": "differs (lut-empty)", "what": ["value"], "why": "pinned"}]}))
    declared = entries_declared.load("9.9.9", manifest)
    doc = _doc({"id": "a", "status": "pass", "verdict": _verdict("lut-empty")},
               {"id": "b", "status": "error-divergence", "verdict": _verdict("contract")},
               {"id": "c", "status": "pass", "verdict": _verdict()},
               {"id": "d", "status": "pass", "verdict": _verdict("pool-outside")},
               {"id": "e", "verdict": _verdict("lut-empty")}, {"id": "f", "status": "pass"})
    entries_declared.apply(doc, declared)
    assert _marks(doc, "abcdef") == {  # each status recomputed from the row's verdict
        "a": ("spec §6: reads the LUT out of bounds", None, None),
        "b": (None, "declared error-divergence, got fail", None),
        "c": (None, None, "declared error-divergence, but it passed: remove the declaration"),
        "d": (None, "differs (pool-outside), not declared", None),
        "e": (None, "declared what ['value'], got ['raised']", None),
        "f": (None, "fail, not declared", None)}
    assert not entries_declared.good(doc)
    doc = _doc({"id": "a", "verdict": _verdict("lut-empty")})
    entries_declared.apply(doc, declared)
    assert entries_declared.good(doc)
    assert "(1 declared, 0 undeclared or stale)" in render(doc)
    doc = _doc({"id": "a", "verdict": _verdict("lut-empty")}, random_failed=1)
    entries_declared.apply(doc, declared)
    assert not entries_declared.good(doc)
    doc = _doc({"id": "a", "verdict": _verdict("lut-empty")})
    doc["cases"] = doc["cases"][1:]  # a case of the folder without a row
    entries_declared.apply(doc, declared)
    assert not entries_declared.good(doc)


def test_a_manifest_of_another_release_or_without_reasons_is_refused(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"release": "0.1", "divergences": []}))
    with pytest.raises(entries_declared.DeclarationError, match="declares release '0.1'"):
        entries_declared.load("9.9.9", manifest)
    manifest.write_text(json.dumps({"release": "9.9.9", "divergences": [{"case": "a", "status": "x"}]}))
    with pytest.raises(entries_declared.DeclarationError, match="needs case, status and why"):
        entries_declared.load("9.9.9", manifest)
    assert entries_declared.load("9.9.9", tmp_path / "none.json") == {}


def test_reapply_rewrites_the_report_elsewhere_and_never_over_its_input(tmp_path):
    src = tmp_path / "in" / JSON_NAME
    src.parent.mkdir()
    doc = _doc()
    src.write_text(json.dumps(doc))
    args = _args("9.9.9", "--reapply", src, "--out", tmp_path / "in")
    assert run(args) == 2 and json.loads(src.read_text()) == doc
    args.out = tmp_path / "out"
    assert run(args) == 0
    n = len(doc["cases"])
    assert f"{n} pass (0 declared, 0 undeclared or stale)" in (tmp_path / "out" / MD_NAME).read_text()


def test_a_built_and_judged_run_reads_so_and_a_failed_build_names_its_line():
    steps = [{"step": f"build lut={a} pool={b}", "status": "ok", "seconds": 1}
             for a in (False, True) for b in (False, True)] + [
        {"step": "judge", "status": "ok", "seconds": 1}]
    doc = {"release": "9.9.9", "steps": steps, "cases": [{"id": "a", "status": "pass"}],
           "random": {"batches": 3, "passed": 3, "failed": 0}}
    assert ("**BUILT AND JUDGED on this GPU: 1 pass (0 declared, 0 undeclared or stale); random "
            "batches: 3 of 3 equal**") in render(doc)
    steps[1] = {"step": "build lut=False pool=True", "status": "failed", "seconds": 1,
                "error": "RuntimeError: Failed to build\nstdout:\n/usr/bin/ld: cannot find -lcudart"}
    assert "**NOT BUILT: step `build lut=False pool=True` failed: RuntimeError: Failed to build ... " \
           "/usr/bin/ld: cannot find -lcudart" in render(doc)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path")
def test_without_a_gpu_the_command_records_the_failing_step_and_claims_no_build(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.entries_files())
    args = _args("9.9.9", "--wheel", wheel, "--cache", tmp_path / "cache", "--tree",
                 tmp_path / "tree", "--out", tmp_path / "out", "--random", 5, "--timeout", 120)
    assert run(args) == 1
    doc = json.loads((tmp_path / "out" / JSON_NAME).read_text())
    status = {s["step"]: s["status"] for s in doc["steps"]}
    assert status["import"] == "ok" and status["judge"] == "skipped"
    assert [status[f"build lut={a} pool={b}"] for a in (False, True) for b in (False, True)] == ["failed"] * 4
    assert doc["toolchain"]["gpu"].startswith("none")
    page = (tmp_path / "out" / MD_NAME).read_text()
    assert page.splitlines()[2] == ("**NOT BUILT: step `build lut=False pool=False` failed: "
                                    f"RuntimeError: {fake_wheels.JIT_FAILURE} (no GPU here: "
                                    "none (torch.cuda.is_available() is False))**")
    assert "BUILT AND" not in page and "## Cases" not in page
    assert "[exit 1]" in (tmp_path / "out" / LOG_NAME).read_text()
    assert "hazards" not in doc


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="the no-GPU path")
def test_the_published_release_is_laid_out_and_not_built_without_a_gpu(tmp_path):
    """sglang 0.5.23's own wheel (fetched once into the user's cache): the 27 Python files of the
    layout (the entries launcher's 17 and the whole-plan wrapper's and torch reference's 10 more),
    and a run here that names the step it could not pass (no GPU, msgspec missing for the import,
    or tvm-ffi missing for the build: the dev extra installs msgspec only) and claims no build."""
    try:
        wheel = fetch_wheel("0.5.23", default_cache() / "wheels", timeout=300)
    except FetchError as exc:
        pytest.skip(f"sglang 0.5.23's wheel is not cached and the index cannot be reached: {exc}")
    tree = build_entries_tree(open_wheel(wheel), tmp_path / "tree")
    python = sorted(p for p in tree.files if p.endswith(".py"))
    assert len(python) == 27 and "sglang/srt/environ.py" in python
    assert {"sglang/kernels/ops/kv_canary/plan/api.py", "sglang/kernels/ops/kv_canary/plan_ref.py",
            "sglang/kernels/ops/kv_canary/verify.py", "sglang/kernels/ops/kv_canary/write.py"} <= set(python)
    assert "sglang/kernels/jit/csrc/kv_canary/canary_plan_entries.cuh" in tree.files
    assert not any(p.startswith(("sglang/srt/utils/", "sglang/kernels/ops/kv_canary/__init__"))
                   for p in tree.files)
    args = _args("0.5.23", "--tree", tmp_path / "tree", "--no-layout", "--out", tmp_path / "out",
                 "--random", 0, "--timeout", 300)
    assert run(args) == 1
    verdict = (tmp_path / "out" / MD_NAME).read_text().splitlines()[2]
    assert verdict.startswith("**NOT BUILT: step `") and "BUILT AND" not in verdict
    doc = json.loads((tmp_path / "out" / JSON_NAME).read_text())
    failed = next(s for s in doc["steps"] if s["status"] == "failed")
    assert failed["step"] == "import" and "No module named" in failed["error"] or \
        failed["step"].startswith("build ") and ("compute_00" in failed["error"]
                                                 or "No module named 'tvm_ffi'" in failed["error"])


def test_the_subject_is_the_one_with_upstream_entry_and_every_fact_is_read_from_it(tmp_path, capsys):
    from conformance.corpus.subjects import SubjectError
    from conformance.upstream.entry_subject import entry_subject, tree_facts
    from impls.canary_plan import subject as canary
    from impls.entries_planner import upstream

    assert entry_subject() is entries_subject and entry_subject("entries-planner") is entries_subject
    assert tree_facts() is upstream and tree_facts("canary-plan") is upstream
    assert canary.UPSTREAM_TREE is upstream and not hasattr(canary, "UPSTREAM_ENTRY")
    with pytest.raises(SubjectError, match="canary-plan: not a subject that defines UPSTREAM_ENTRY"):
        entry_subject("canary-plan")
    src = tmp_path / JSON_NAME
    src.write_text(json.dumps(_doc()))
    assert run(_args("9.9.9", "--subject", "canary-plan", "--reapply", src, "--out", tmp_path / "o")) == 2
    assert "not a subject that defines UPSTREAM_ENTRY; known: entries-planner" in capsys.readouterr().err
    assert run(_args("9.9.9", "--subject", "entries-planner", "--reapply", src,
                     "--out", tmp_path / "o")) == 0
    page = (tmp_path / "o" / MD_NAME).read_text()
    assert "## Cases (`cases/entries-planner/*.jsonl`)" in page
    assert "Declarations: `cases/entries-planner/divergences/sglang-RELEASE.json`" in page
    assert entries_declared.manifest_path("0.5.23").relative_to(entries_declared.folder_of().parents[2]) \
        .as_posix() == "cases/entries-planner/divergences/sglang-0.5.23.json"

