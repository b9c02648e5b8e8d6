"""``python -m conformance upstream-launchers``: a release's own whole-plan launchers, laid out from
its wheel, judged on the canary-plan subject's cases in a child process; the adapter that puts
upstream's plan records behind this project's flat launcher; the report and its declarations."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass

import pytest
import torch

from conformance.engine.call_runs import RUNS
from conformance.paths import CASES_ROOT
from conformance.upstream import entries_declared
from conformance.upstream.command import default_cache
from conformance.upstream.entries_judge import judge_case
from conformance.upstream.launchers_command import add_arguments, file_names, run
from conformance.upstream.wheel import FetchError, fetch_wheel
from impls.canary_plan import subject as canary
from impls.canary_plan.contract import VERIFY_FIELDS, WRITE_FIELDS
from impls.canary_plan.upstream import LAUNCHERS, RECORDS, flat_launcher, upstream_launchers
from tests.planted import fake_wheels

REPORTS = CASES_ROOT.parent / "reports" / "upstream" / "0.5.23"


def _args(*argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


@dataclass(frozen=True, kw_only=True)
class _Verify:
    verify_slot_indices: object
    verify_expected_tokens: object
    verify_expected_positions: object
    verify_prev_slot_indices: object
    verify_num_valid: object
    enable: object


@dataclass(frozen=True, kw_only=True)
class _Write:
    write_offsets: object
    write_seed_slot_indices: object
    write_num_valid_reqs: object


def test_the_adapter_hands_upstream_the_very_tensors_in_its_records():
    seen = {}

    def launch(**kwargs):
        seen.update(kwargs)
        return "returned"

    flat = flat_launcher(launch, {"verify_plan_out": _Verify, "write_plan_out": _Write})
    tensors = {name: torch.zeros(2, dtype=torch.int64) for name in VERIFY_FIELDS + WRITE_FIELDS}
    assert flat(**tensors, swa_window_size=3, req_to_token=None) == "returned"
    assert sorted(seen) == ["req_to_token", "swa_window_size", "verify_plan_out", "write_plan_out"]
    assert seen["swa_window_size"] == 3
    for name in VERIFY_FIELDS:
        assert getattr(seen["verify_plan_out"], name) is tensors[name]
    for name in WRITE_FIELDS:
        assert getattr(seen["write_plan_out"], name) is tensors[name]


def test_the_launchers_are_imported_by_the_names_upstream_gives_them():
    imported = []
    modules = {
        "sglang.kernels.ops.kv_canary.verify": argparse.Namespace(VerifyPlan=_Verify),
        "sglang.kernels.ops.kv_canary.write": argparse.Namespace(WritePlan=_Write),
        "sglang.kernels.ops.kv_canary.plan_ref": argparse.Namespace(
            launch_canary_plan_kernels_torch_reference=lambda **kw: ("reference", sorted(kw))),
    }

    def import_module(name):
        imported.append(name)
        return modules[name]

    got = upstream_launchers(import_module, ("reference",))
    assert list(got) == ["reference"]
    tensors = {name: torch.zeros(1) for name in VERIFY_FIELDS + WRITE_FIELDS}
    assert got["reference"](**tensors) == ("reference", ["verify_plan_out", "write_plan_out"])
    assert set(imported) == set(modules)
    assert RECORDS["verify_plan_out"][2] == VERIFY_FIELDS and RECORDS["write_plan_out"][2] == WRITE_FIELDS
    assert canary.UPSTREAM_LAUNCHERS == ("reference", "wrapper") == tuple(LAUNCHERS)
    with pytest.raises(KeyError):
        upstream_launchers(import_module, ("wrapper",))  # its module is not there


def test_a_faithful_reference_passes_every_case_through_both_launchers(tmp_path, capsys):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files())
    out = tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--wheel", wheel, "--tree",
                     tmp_path / "tree", "--out", out)) == 0
    n = len(canary.load_cases(CASES_ROOT / canary.NAME))
    assert n >= 19
    for launcher in ("reference", "wrapper"):
        json_name, md_name = file_names(launcher)
        doc = json.loads((out / json_name).read_text())
        assert doc["good"] is True and len(doc["cases"]) == n
        assert {r["status"] for r in doc["cases"]} == {"pass"}
        assert doc["loaded"]["sglang.kernels.ops.kv_canary.plan_ref"] == "wheel bytes"
        page = (out / md_name).read_text()
        assert f"**`GOOD: JUDGED on cpu: {n} cases, {n} pass (0 declared, 0 undeclared or stale)`**" in page
    printed = capsys.readouterr().out
    assert f"reference: GOOD: JUDGED on cpu: {n} cases, {n} pass" in printed and "**" not in printed


def test_a_reference_that_raises_is_undeclared_and_its_text_stays_text(tmp_path):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(fake_wheels.RAISING_REFERENCE))
    out = tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tmp_path / "tree", "--out", out)) == 1
    assert not (out / file_names("wrapper")[0]).exists()
    doc = json.loads((out / file_names("reference")[0]).read_text())
    statuses = {r["id"]: r["status"] for r in doc["cases"]}
    assert statuses["canary-error-capacity-mismatch"] == "error-divergence"
    assert statuses["canary-prefill-and-two-decodes"] == "fail"  # a raise on a valid case: the contract's
    assert all(r.get("undeclared") for r in doc["cases"]) and doc["good"] is False
    page = (out / file_names("reference")[1]).read_text()
    assert "<b>bold</b>" in page and "\n# heading" not in page
    row = next(line for line in page.splitlines() if line.startswith("| `canary-prefill-and-two-decodes` |"))
    assert row.endswith("| ``error: expected no error, got ValueError: kv-canary: `x` "
                        f"\\| <b>bold</b> (raised; rule contract); {len(RUNS)} difference(s) in "
                        "all`` |")  # a raise in every run
    assert row.count("|") - row.count("\\|") == 5  # the text's own | cannot open a column


def test_a_child_that_cannot_import_is_not_judged(tmp_path):
    files = fake_wheels.plan_files()
    files.pop(fake_wheels.PLAN_REFERENCE)
    wheel = fake_wheels.make_wheel(tmp_path, files)
    out = tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tmp_path / "tree", "--out", out)) == 1
    doc = json.loads((out / file_names("reference")[0]).read_text())
    assert doc["steps"][0]["step"] == "import" and doc["steps"][0]["status"] == "failed"
    assert "No module named" in doc["steps"][0]["error"] and "cases" not in doc
    assert (out / file_names("reference")[1]).read_text().splitlines()[2].startswith(
        "**`NOT JUDGED: step import failed: ModuleNotFoundError")


def test_usage_errors_name_what_is_wrong(tmp_path, capsys):
    assert run(_args("9.9.9", "--subject", "nope", "--out", tmp_path)) == 2
    assert run(_args("9.9.9", "--subject", "entries-planner", "--out", tmp_path)) == 2
    assert "names no upstream launcher" in capsys.readouterr().err
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "kernel", "--out",
                     tmp_path)) == 2
    assert "--launcher kernel: not one of reference, wrapper" in capsys.readouterr().err


def test_an_error_case_that_raises_nothing_is_unchecked_declarable_and_pinned_by_what():
    case = next(c for c in canary.load_cases(CASES_ROOT / canary.NAME)
                if c["id"] == "canary-error-lut-required")
    row = judge_case(lambda **kwargs: None, case, "cpu", subject=canary)  # no check, no write
    assert row["status"] == "unchecked"
    doc = {"cases": [row]}
    entries_declared.apply(doc, {case["id"]: {"status": "unchecked", "why": "no check",
                                              "what": ["no-error", "written"]}})
    assert row["undeclared"] == "declared what ['no-error', 'written'], got ['no-error']"
    entries_declared.apply(doc, {case["id"]: {"status": "unchecked", "why": "no check",
                                              "what": ["no-error"]}})
    assert row["declared"] == "no check" and "undeclared" not in row


@pytest.mark.slow
def test_the_published_release_s_launchers_are_judged_with_every_divergence_declared(tmp_path):
    """sglang 0.5.23's own wrapper and torch reference, from its wheel (fetched once into the
    user's cache), on every canary-plan case: each case passes or is declared in
    ``cases/canary-plan/divergences/``, and no declaration is stale."""
    try:
        wheel = fetch_wheel("0.5.23", default_cache() / "wheels", timeout=300)
    except FetchError as exc:
        pytest.skip(f"sglang 0.5.23's wheel is not cached and the index cannot be reached: {exc}")
    out = tmp_path / "out"
    code = run(_args("0.5.23", "--subject", "canary-plan", "--wheel", wheel, "--tree",
                     tmp_path / "tree", "--out", out))
    docs = {n: json.loads((out / file_names(n)[0]).read_text()) for n in ("reference", "wrapper")}
    open_rows = {n: [r["id"] for r in d.get("cases", []) if not r.get("declared")
                     and r["status"] != "pass"] for n, d in docs.items()}
    assert code == 0, (open_rows, [d["steps"] for d in docs.values()])
    assert sum(r["status"] == "pass" for r in docs["reference"]["cases"]) == 7
    assert sum(r["status"] == "pass" for r in docs["wrapper"]["cases"]) == 9


def test_reapply_writes_the_report_elsewhere_and_never_over_its_input(tmp_path, capsys):
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files())
    first = tmp_path / "first"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tmp_path / "tree", "--out", first)) == 0
    src = first / file_names("reference")[0]
    before = src.read_text()
    assert run(_args("9.9.9", "--subject", "canary-plan", "--reapply", src, "--out", first)) == 2
    assert "--out would overwrite it" in capsys.readouterr().err and src.read_text() == before
    assert run(_args("9.9.10", "--subject", "canary-plan", "--reapply", src, "--out",
                     tmp_path / "x")) == 2
    assert "a document of release '9.9.9'" in capsys.readouterr().err
    again = tmp_path / "again"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--reapply", src, "--out", again)) == 0
    assert json.loads((again / file_names("reference")[0]).read_text())["cases"] == \
        json.loads(before)["cases"]
    assert file_names("wrapper", "cuda:0") == ("launchers-wrapper-cuda.json", "launchers-wrapper-cuda.md")


@pytest.mark.slow
def test_each_case_in_its_own_child_a_crash_costs_that_case_only(tmp_path):
    crashing = fake_wheels.FAITHFUL_REFERENCE.replace(
        "    from impls.canary_plan import get_planner\n",
        "    from impls.canary_plan import get_planner\n"
        "    if kwargs['req_pool_indices'].numel() == 4097:\n"
        "        import os\n        os._exit(3)\n")
    wheel = fake_wheels.make_wheel(tmp_path, fake_wheels.plan_files(crashing))
    out = tmp_path / "out"
    assert run(_args("9.9.9", "--subject", "canary-plan", "--launcher", "reference", "--wheel",
                     wheel, "--tree", tmp_path / "tree", "--out", out, "--each-case")) == 1
    doc = json.loads((out / file_names("reference")[0]).read_text())
    rows = {r["id"]: r for r in doc["cases"]}
    assert len(rows) == len(canary.load_cases(CASES_ROOT / canary.NAME)) and doc["child_exit"] == 3
    big = {"canary-error-bs-over-block", "canary-error-order-lut-before-bs"}  # bs 4097
    assert {i for i, r in rows.items() if r["status"] == "crashed"} == big
    assert {rows[i]["child_exit"] for i in big} == {3}
    assert {r["status"] for i, r in rows.items() if i not in big} == {"pass"}
    assert doc["good"] is False
    assert [r["id"] for r in doc["cases"]] == [c["id"] for c in canary.load_cases(CASES_ROOT / canary.NAME)]


@pytest.mark.parametrize("status", ["unchecked", "error-divergence", "error-divergence (validate-first)"])
def test_a_declaration_that_excuses_a_contract_difference_must_pin_what(tmp_path, status):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"release": "9.9.9", "divergences": [
        {"case": "a", "status": status, "why": "upstream's"}]}))
    with pytest.raises(entries_declared.DeclarationError, match=f"{re.escape(status)} needs what"):
        entries_declared.load("9.9.9", path)
    path.write_text(json.dumps({"release": "9.9.9", "divergences": [
        {"case": "a", "status": status, "why": "upstream's", "what": ["error"]}]}))
    assert entries_declared.load("9.9.9", path)["a"]["what"] == ["error"]


def test_every_write_the_h200_run_recorded_under_validate_first_is_upstreams_own_value():
    """The committed H200 run of the wrapper's CUDA path (judged before ``error_written_values``
    existed): each element it wrote under ``validate-first`` holds the one value that rule allows
    (zeros, or the offsets stage's results), so the current engine judges it the same."""
    from conformance.engine.call_runs import output_fill
    from conformance.engine.one_call import _readable

    doc = json.loads((REPORTS / "canary-plan-h200" / "launchers-wrapper-cuda.json").read_text())
    cases = {c["id"]: c for c in canary.load_cases(CASES_ROOT / canary.NAME)}
    checked = 0
    for row in doc["cases"]:
        diffs = [d for d in (row.get("verdict") or {}).get("differences", [])
                 if d["rule"] == "validate-first"]
        if not diffs:
            continue
        assert row["verdict"]["count"] == len(row["verdict"]["differences"])  # all of them kept
        for run in ("a", "b"):
            kwargs = canary.build(cases[row["id"]], torch.device("cpu"))
            outputs = [n for n in canary.OUTPUTS if _readable(kwargs[n])]
            for i, name in enumerate(outputs):
                kwargs[name].copy_(output_fill(run, i, kwargs[name]))
            allowed = canary.error_written_values(cases[row["id"]], kwargs)
            for d in diffs:
                if d["run"] == run:
                    assert d["got"] == allowed[d["field"]][d["index"]], (row["id"], d)
                    checked += 1
    assert checked == 44  # 4 + 4 + 12 + 12 + 12 over both runs
