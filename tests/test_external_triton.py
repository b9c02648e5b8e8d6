"""External Triton planners on a machine without CUDA: the harness sets ``TRITON_INTERPRET=1``
before importing them (when unset), the results fingerprint says the planner ran interpreted, and
where the variable forbids the interpreter the failure says what to do."""

from __future__ import annotations

import json

import pytest
import torch

from conformance.plugin.summary import parse as parse_summary
from tests.subproc import run_pytest

PLANNER = "tests.planted.external_triton:launch"
CASE = ["--case", "spec7-prefill-and-decodes"]
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour")


@NO_CUDA
@pytest.mark.parametrize("isolation", [[], pytest.param(["--no-isolate"], marks=pytest.mark.slow)],
                         ids=["isolated", "in-process"])  # an external planner runs in a child either way
def test_an_external_triton_planner_runs_interpreted_without_the_variable(tmp_path, monkeypatch,
                                                                          isolation):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    proc, items = run_pytest(tmp_path, "--planner", PLANNER, *CASE, *isolation)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [item.outcome for item in items.values()] == ["passed"]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["fingerprint"]["planners"][PLANNER]["mode"] == "external (triton interpreter)"
    summary = proc.stdout.split("conformance summary")[1].splitlines()[1:]  # the mode column
    assert parse_summary(summary)[PLANNER][1] == "external (triton interpreter)"


@NO_CUDA
def test_a_forbidden_interpreter_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    # a loaded machine may take long to fail Triton's driver lookup: room beyond the default 60 s
    proc, items = run_pytest(tmp_path, "--planner", PLANNER, *CASE, "--isolate-timeout", "240")
    assert proc.returncode == 1
    text = next(iter(items.values())).text
    assert "0 active drivers" in text, text
    assert ("hint: Triton found no GPU driver: on a machine without CUDA run Triton kernels under "
            "its interpreter with TRITON_INTERPRET=1 (the harness sets it for external planners "
            "when it is unset; here it is '0')") in text
