"""The replay cross-check (conformance/bench/cross_check.py): its table, its agreement rule, the
missing-tool row, and on a GPU both witnesses of a real planner."""

from __future__ import annotations

import pytest
import torch

from conformance.bench import cross_check


def _bench(planner, bs, check):
    return {"params": {"planner": planner, "mode": "replay", "bs": bs},
            "extra_info": {cross_check.CROSS_CHECK_KEY: check}}


def _check(tool_us, ours_us, one_us=3.0):
    ratio = tool_us / ours_us
    return {"tool": "t", "tool_us": tool_us, "ours_us": ours_us, "calls_per_graph": 100,
            "ratio": ratio, "agree": abs(ratio - 1) <= cross_check.AGREE_WITHIN,
            "one_per_graph_us": one_us}


def test_rows_show_both_witnesses_and_the_verdict():
    benches = [_bench("triton", 4096, _check(1.10, 1.00, 6.72)),
               _bench("numba-cuda", 4096, _check(1.50, 1.00)),
               {"params": {"planner": "python", "mode": "eager", "bs": 4096}, "extra_info": {}}]
    got = cross_check.rows(benches)
    assert got == [["triton", 4096, "6.72", "1.00", "1.10", "1.1", "agree"],
                   ["numba-cuda", 4096, "3.00", "1.00", "1.50", "1.5", "DISAGREE (beyond 20%)"]]
    table = cross_check.render(benches)
    assert table.splitlines()[0].startswith("| planner")
    assert "python" not in table


def test_missing_tool_is_a_row_that_says_why():
    def broken(fn, rep, return_mode):
        raise RuntimeError("no CUDA graphs here")

    check = cross_check.measure(lambda: None, 2.0, bench=broken)
    assert check == {"tool": "triton.testing.do_bench_cudagraph",
                     "error": "RuntimeError: no CUDA graphs here"}
    row = cross_check.rows([_bench("triton", 64, check)])[0]
    assert row == ["triton", 64, "-", "-", "-", "-",
                   "not measured: RuntimeError: no CUDA graphs here"]


def test_no_replay_figure_says_so():
    assert cross_check.render([]) == \
        "no cross-check: the run has no replay figure at its largest bs"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="both witnesses time CUDA graphs")
def test_both_witnesses_of_a_real_planner_agree():
    from conformance.bench import workloads
    from impls.offsets_planner import triton_planner

    spec = workloads.spec_for("serving", "cuda", None, seed=7)
    kw = workloads.build(512, spec, torch.device("cuda"))
    check = cross_check.measure(lambda: triton_planner.launch(**kw), one_per_graph_us=5.0)
    assert "error" not in check, check
    assert 0 < check["ours_us"] < 5.0 and 0 < check["tool_us"] < 5.0
    assert check["agree"], check
