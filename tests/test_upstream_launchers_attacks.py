"""Hostile review of the canary-plan error-case rules (validate-first), the upstream-launchers
command and its declarations, each attack kept as a test that the harness withstands."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from conformance.engine.verdict import Difference, VerdictData
from conformance.paths import CASES_ROOT
from conformance.reporting.markdown import code_span
from conformance.upstream import entries_declared
from conformance.upstream.entries_judge import case_status, judge_case
from conformance.upstream.launchers_command import add_arguments, file_names, run
from impls.canary_plan import get_planner
from impls.canary_plan import subject as canary
from tests.planted import fake_wheels, wrong_pipelines

CASES = {c["id"]: c for c in canary.load_cases(CASES_ROOT / canary.NAME)}
OFFSETS_ERR = "canary-error-offsets-dtype"          # failing stage: offsets
ENTRIES_ERR = "canary-error-pool-without-valid-lens"  # failing stage: entries
GARBAGE = 0x5EED


def _python(**kwargs):
    get_planner("python")(**kwargs)


def _scribbling(fields, value, then=_python):
    """A launcher that writes ``value`` into ``fields`` and then behaves as ``then``."""
    def launch(**kwargs):
        for name in fields:
            kwargs[name].fill_(value)
        then(**kwargs)
    return launch


def _wrong_error(**kwargs):
    raise ValueError("kv-canary: something else entirely")


def _row(case_id, launch):
    return judge_case(launch, CASES[case_id], "cpu", subject=canary)


# --- 1. validate-first on error cases -------------------------------------------------------

def test_rules_are_as_the_spec_says():
    assert canary.failing_stage(canary.build(CASES[OFFSETS_ERR], torch.device("cpu"))) == "offsets"
    assert canary.failing_stage(canary.build(CASES[ENTRIES_ERR], torch.device("cpu"))) == "entries"


def test_upstream_like_writes_under_validate_first_differ_by_design():
    """Upstream's order: write_offsets zeroed before an offsets-stage error; the offsets stage's
    results written before an entries-stage error (a pipeline validating at each stage)."""
    assert _row(OFFSETS_ERR, _scribbling(["write_offsets"], 0))["status"] == "differs (validate-first)"
    assert _row(ENTRIES_ERR, wrong_pipelines.validates_at_each_stage)["status"] == \
        "differs (validate-first)"
    # write_offsets zeroed but no offsets results before an entries-stage error: not upstream's
    assert _row(ENTRIES_ERR, _scribbling(["write_offsets"], 0))["status"] == "fail"


@pytest.mark.parametrize("case_id", [OFFSETS_ERR, ENTRIES_ERR])
def test_garbage_in_validate_first_fields_is_a_contract_failure(case_id):
    fields = canary.WRITTEN_BEFORE[canary.failing_stage(
        canary.build(CASES[case_id], torch.device("cpu")))]
    row = _row(case_id, _scribbling(fields, GARBAGE))
    assert row["status"] == "fail"


def test_wrong_error_with_garbage_is_distinguishable_from_wrong_error_with_zeros():
    zeros = _row(OFFSETS_ERR, _scribbling(["write_offsets"], 0, _wrong_error))
    garbage = _row(OFFSETS_ERR, _scribbling(["write_offsets"], GARBAGE, _wrong_error))
    assert zeros["status"] == "error-divergence (validate-first)"
    declared = {OFFSETS_ERR: {"status": zeros["status"], "why": "upstream zeroes first",
                              "what": ["error", "written"]}}
    doc = {"cases": [garbage]}
    entries_declared.apply(doc, declared)
    assert not garbage.get("declared")


@pytest.mark.parametrize("case_id, status", [(OFFSETS_ERR, "error-divergence (validate-first)"),
                                             (ENTRIES_ERR, "fail")])  # zeros: not upstream's there
def test_a_wrong_error_text_is_never_hidden_by_validate_first(case_id, status):
    row = _row(case_id, _scribbling(["write_offsets"], 0, _wrong_error))
    assert row["status"] == status
    assert any(d["what"] == "error" and d["rule"] == "contract" for d in row["verdict"]["differences"])
    assert _row(case_id, _python)["status"] == "pass"  # sanity: the python pipeline passes


@pytest.mark.parametrize("case_id,field", [(OFFSETS_ERR, "write_seed_slot_indices"),
                                           (OFFSETS_ERR, "verify_slot_indices"),
                                           (ENTRIES_ERR, "verify_slot_indices"),
                                           ("canary-error-capacity-mismatch", "write_offsets")])
def test_writes_outside_the_written_before_fields_stay_contract_failures(case_id, field):
    row = _row(case_id, _scribbling([field], 0))
    assert row["status"] == "fail"


def test_returning_on_a_contract_error_case_is_never_a_differs():
    row = _row(OFFSETS_ERR, _scribbling(["write_offsets"], 0, lambda **kw: None))
    assert row["status"] == "unchecked"  # not differs (validate-first)


def test_rules_are_fixed_before_the_call():
    """A launcher that rewrites its inputs so that failing_stage would now say 'entries' cannot
    move the seeds under validate-first: the rules are read before the call, and the input
    change is a contract difference of its own."""
    def launch(**kwargs):
        kwargs["write_seed_slot_indices"].fill_(GARBAGE)
        _python(**kwargs)
    assert _row(OFFSETS_ERR, launch)["status"] == "fail"


# --- 3. unchecked is declarable; what does it swallow? -------------------------------------

def _no_check_touches_input(**kwargs):
    kwargs["req_to_token"].add_(1)  # an input modified: a contract failure of its own


def _no_check_rebinds_judge(**kwargs):
    from conformance.engine import call_report
    call_report.SHOWN = 0  # a watched module rebound: recorded as a contract "input" difference


@pytest.mark.parametrize("launch", [_no_check_touches_input, _no_check_rebinds_judge])
def test_unchecked_does_not_swallow_other_contract_failures(launch):
    row = _row("canary-error-lut-required", launch)
    doc = {"cases": [row]}
    entries_declared.apply(doc, {row["id"]: {"status": "unchecked", "why": "lacks the check"}})
    assert row["status"] == "fail" and not row.get("declared")


def test_unchecked_for_everything_declares_only_the_unchecked_cases():
    rows = [_row(i, lambda **kw: None) for i in CASES]
    doc = {"cases": rows}
    entries_declared.apply(doc, {i: {"status": "unchecked", "why": "x"} for i in CASES})
    for row in rows:
        if "error" not in CASES[row["id"]]["expect"]:
            assert not row.get("declared")  # a valid case that wrote nothing stays undeclared


def test_case_status_sees_contract_differences_past_the_kept_ones():
    v = VerdictData()
    v.add(Difference(0, "a", "error", "error", None, "x", "y", "contract"))
    for i in range(70):
        v.add(Difference(0, "a", "written", "write_offsets", i, 1, 2, "validate-first"))
    v.add(Difference(0, "b", "input", "req_to_token", 0, 1, 2, "contract"))
    v.error_steps.append({"step": 0, "id": "dtype", "ok": False})
    assert case_status({"expect": {"error": {}}}, v)[0] == "fail"


# --- 2. the upstream-launchers command on hostile releases ---------------------------------

def _args(*argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


EVIL_NAME = "sglang.x` **ALL GOOD** <img src=x onerror=alert(1)> `"
INJECTING_REFERENCE = fake_wheels.FAITHFUL_REFERENCE + (
    "\n\nimport sys as _sys, types as _types\n"
    f"_m = _types.ModuleType({EVIL_NAME!r})\n"
    "_m.__file__ = __file__\n"
    "_sys.modules[_m.__name__] = _m\n")


def test_module_names_on_the_page_are_code_spans(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(INJECTING_REFERENCE))
    out = tmp_path / "out"
    run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel", wheel,
              "--tree", tmp_path / "tree", "--out", out))
    doc = json.loads((out / file_names("reference")[0]).read_text())
    assert EVIL_NAME in doc["loaded"]  # the release did register it
    page = (out / file_names("reference")[1]).read_text()
    assert code_span(EVIL_NAME) in page


PLANTED = "sglang/kernels/ops/kv_canary/plan_extra.py"
LAZY_REFERENCE = (
    "from sglang.kernels.ops.kv_canary.verify import VerifyPlan  # noqa: F401\n"
    "from sglang.kernels.ops.kv_canary.write import WritePlan  # noqa: F401\n\n\n"
    "def launch_canary_plan_kernels_torch_reference(**kwargs):\n"
    "    try:\n"
    "        import importlib\n"
    "        plan_extra = importlib.import_module('sglang.kernels.ops.kv_canary.plan_extra')\n"
    "    except ImportError:\n"
    "        raise ValueError('kv-canary: the wheel itself plans nothing')\n"
    "    plan_extra.launch_canary_plan_kernels_torch_reference(**kwargs)\n")


def test_a_planted_module_outside_record_is_not_ours(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(LAZY_REFERENCE))
    tree, out = tmp_path / "tree", tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tree, "--out", out)) == 1  # the wheel's own code fails
    first = json.loads((out / file_names("reference")[0]).read_text())
    assert [s["status"] for s in first["steps"]] == ["ok", "ok"]  # judged: it raised on every case
    (tree / "site" / PLANTED).write_text(fake_wheels.FAITHFUL_REFERENCE)
    code = run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--tree",
                     tree, "--no-layout", "--out", out / "again"))  # reports are never replaced
    doc = json.loads((out / "again" / file_names("reference")[0]).read_text())
    assert [s["status"] for s in doc["steps"]] == ["ok", "ok"] or code == 1
    assert code == 1 and doc["good"] is False, doc.get("loaded")
    assert "not the wheel's bytes" in json.dumps(doc["steps"])


NON_SGLANG_REFERENCE = LAZY_REFERENCE.replace(
    "'sglang.kernels.ops.kv_canary.plan_extra'", "'plan_extra'")


def test_a_planted_non_sglang_module_under_site_is_checked(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(NON_SGLANG_REFERENCE))
    tree, out = tmp_path / "tree", tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tree, "--out", out)) == 1
    first = json.loads((out / file_names("reference")[0]).read_text())
    assert [s["status"] for s in first["steps"]] == ["ok", "ok"]  # judged: it raised on every case
    (tree / "site" / "plan_extra.py").write_text(fake_wheels.FAITHFUL_REFERENCE)
    code = run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--tree",
                     tree, "--no-layout", "--out", out / "again"))  # reports are never replaced
    doc = json.loads((out / "again" / file_names("reference")[0]).read_text())
    assert [s["status"] for s in doc["steps"]] == ["ok", "ok"] or code == 1
    assert code == 1 and doc["good"] is False, doc.get("loaded")
    assert "not the wheel's bytes" in json.dumps(doc["steps"])


def test_a_tampered_record_file_is_refused_with_no_layout(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(fake_wheels.RAISING_REFERENCE))
    tree, out = tmp_path / "tree", tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tree, "--out", out)) == 1
    (tree / "site" / fake_wheels.PLAN_REFERENCE).write_text(fake_wheels.FAITHFUL_REFERENCE)
    again = out / "again"  # a second run into the same folder is refused (exit 2), not judged
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--tree",
                     tree, "--no-layout", "--out", again)) == 1
    assert not json.loads((again / file_names("reference")[0]).read_text())["good"]


def test_every_failing_status_needs_a_declaration_to_be_good():
    from conformance.upstream.launchers_command import good
    doc = {"steps": [{"step": "import", "status": "ok"}, {"step": "judge", "status": "ok"}],
           "child_exit": 0, "cases": [{"id": "a", "status": "fail"}]}
    assert not good(doc, {"a"})
    doc["cases"] = [{"id": "a", "status": "pass", "stale": "x"}]
    assert not good(doc, {"a"})
    doc["cases"] = [{"id": "b", "status": "pass"}]
    assert not good(doc, {"a"})
