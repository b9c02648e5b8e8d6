"""The runner's reports (conformance/engine/runner.py, judge.py, rerun.py): what a failure says
and the command that reruns it."""

from __future__ import annotations

import pytest
import torch

from conformance.engine.runner import ConformanceFailure, Target, rerun_command, run_case
from impls.offsets_planner.python_planner import launch as python_launch
from tests.case_docs import case_doc, load_files

CPU = torch.device("cpu")


# ---------------------------------------------------------------------------------------------
# The runner's reports


def test_rerun_command_quotes():
    assert rerun_command("spec7-no-prefix", "python", environment={}) == (
        "pytest conformance/ --planner python --case spec7-no-prefix "
        "--results reports/out/rerun-spec7-no-prefix.json")
    assert rerun_command("a b", "my mod:f", environment={}) == (
        "pytest conformance/ --planner 'my mod:f' --case 'a b' --results 'reports/out/rerun-a b.json'")
    assert rerun_command("err-x", "validator", environment={}) == (
        "pytest conformance/ --case err-x --results reports/out/rerun-err-x.json")


def test_runner_reports_a_raise_on_valid_input(tmp_path):
    (case,), _ = load_files(tmp_path, {"c.json": case_doc("c")})

    def crashes(**kwargs):
        raise RuntimeError("boom in the kernel")

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("crashes", crashes, CPU))
    text = str(excinfo.value)
    assert "raised RuntimeError on a valid step:" in text
    assert "RuntimeError: boom in the kernel" in text
    assert ("\n    decided by: contract\n      spec §5: every input that passes validation is "
            "planned (section 6 says what an out-of-contract value gets); no raise after the "
            "checks\n") in text, text
    assert text.splitlines()[-1].startswith("  rerun: ")  # then the environment the run had
    assert text.splitlines()[-1].endswith(f"pytest conformance/ --planner crashes --cases "
                                          f"{tmp_path} --case c --results reports/out/rerun-c.json")


def test_runner_catches_a_write_into_an_input_tail(tmp_path):
    (case,), _ = load_files(tmp_path, {"c.json": case_doc("c")})

    def scribbles(**kwargs):
        python_launch(**kwargs)
        torch.as_strided(kwargs["extend_seq_lens"], (2,), (1,))[1] = 0  # past bs: the tail

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("scribbles", scribbles, CPU))
    text = str(excinfo.value)
    assert "modified its input (inputs are read-only, spec §5)" in text
    assert "extend_seq_lens: 1 element(s) differ, first at index 1" in text


def test_runner_error_case_requires_untouched_outputs(tmp_path):
    doc = case_doc("e", expect={"error": {"type": "ValueError", "id": "verify-capacity-non-negative",
                                           "message": "kv-canary: verify_capacity must be "
                                                      "non-negative, got -1"}})
    doc["inputs"]["verify_capacity"] = -1
    (case,), errors = load_files(tmp_path, {"e.json": doc})
    assert errors == []
    run_case(case, Target("python", python_launch, CPU))

    def writes_then_raises(**kwargs):
        kwargs["out_verify_enable"].fill_(1)
        python_launch(**kwargs)

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("w", writes_then_raises, CPU))
    assert "out_verify_enable: 1 element(s) differ, first at index 0" in str(excinfo.value)
    assert ("    decided by: contract\n      spec §4: the checks run before the launch, so a "
            "step that must raise writes nothing\n") in str(excinfo.value)
    assert "expected is the poison there" in str(excinfo.value)


def test_rerun_command_finds_a_case_outside_the_default_corpus(tmp_path):
    (case,), _ = load_files(tmp_path, {"c.json": case_doc("outside")})

    def crashes(**kwargs):
        raise RuntimeError("boom")

    with pytest.raises(ConformanceFailure) as excinfo:
        run_case(case, Target("crashes", crashes, CPU))
    rerun = str(excinfo.value).splitlines()[-1]
    assert rerun.startswith("  rerun: ") and " pytest conformance/ " in f" {rerun}"
    assert "--cases" in rerun and str(tmp_path) in rerun, rerun
