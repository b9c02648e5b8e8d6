"""The chain floor's launch shape (conformance/bench/chain_floors.py): tried on the GPU, the fastest
kept and named; the default, untried, without one."""

from __future__ import annotations

import pytest
import torch

from conformance.bench import chain_floors, floors, workloads


def test_labels_name_the_framework_shape():
    assert chain_floors.shape_label("chain-triton", (128, 4)) == "BLOCK 128, 4 warps"
    assert chain_floors.shape_label("chain-numba", (256, None)) == "256 threads"


def test_without_a_gpu_the_default_shape_is_used_untried():
    kw = workloads.build(8, workloads.spec_for("serving", "cpu", seed=8), "cpu")
    assert chain_floors.best_chain_shape("chain-triton", kw) == (
        (chain_floors.CHAIN_BLOCK, 4), {})
    assert chain_floors.best_chain_shape("chain-numba", kw) == (
        (chain_floors.CHAIN_BLOCK, None), {})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="shapes are tried by CUDA-graph replay")
@pytest.mark.parametrize("chain", floors.CHAIN_FLOORS)
def test_on_a_gpu_the_fastest_tried_shape_is_kept(chain):
    kw = workloads.build(4096, workloads.spec_for("serving", "cuda", seed=3), "cuda")
    shape, trials = chain_floors.best_chain_shape(chain, kw)
    assert shape in chain_floors.CHAIN_SHAPES[chain]
    assert set(trials) == {chain_floors.shape_label(chain, s)
                           for s in chain_floors.CHAIN_SHAPES[chain]}
    assert trials[chain_floors.shape_label(chain, shape)] == min(trials.values()) > 0


def test_a_numba_shape_names_its_parameter_style():
    assert chain_floors.shape_label("chain-numba", (64, chain_floors.POINTERS)) == \
        "64 threads, pointers"
    assert {s for _, s in chain_floors.CHAIN_SHAPES["chain-numba"]} == {None, chain_floors.POINTERS}


def _loads_before_tests(fn) -> list[str]:
    """The request arrays a chain function reads, in order, before its first test inside
    ``if i < bs`` (the loads a GPU issues together)."""
    import ast
    import inspect
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    guard = next(n for n in ast.walk(tree) if isinstance(n, ast.If))
    names = []
    for stmt in guard.body:
        if isinstance(stmt, ast.If):
            break
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                names.append(node.value.id)
    return names


@pytest.mark.parametrize("name", ["chain", "chain_pointers"])
def test_numba_chain_loads_every_request_value_before_any_test(name):
    """A short-circuit test such as ``row > 0 and extend[i] > 0`` loads ``extend`` one round trip
    after ``row``: a floor one dependent load slower than the plan it stands for (seen in the
    compiled PTX of the earlier chain kernel, reports/gpu/2026-12-04-b/README.md)."""
    from conformance.bench import chain_numba

    assert _loads_before_tests(getattr(chain_numba, name)) == ["rpi", "prefix", "extend"]


def _seeds_by_torch(kw: dict) -> torch.Tensor:
    """The chain's value per request, from the tensors with torch ops (independent of both
    kernels): lut[table[row, min(p - 1, cols - 1)]], -1 where a request reads nothing."""
    from impls.offsets_planner.contract import REQUEST_INPUT_NAMES, TABLE_INPUT_NAMES

    rpi, prefix, extend = (kw[n] for n in REQUEST_INPUT_NAMES)
    table, lut = (kw[n] for n in TABLE_INPUT_NAMES)
    rows, cols = table.shape
    has = (rpi > 0) & (rpi < rows) & (prefix > 0) & (extend > 0)
    col = torch.clamp(prefix - 1, min=0, max=cols - 1)
    slot = table[torch.where(has, rpi, 0), col].to(torch.int64)
    if lut is not None:
        ok = has & (slot >= 0)
        slot = torch.where(ok, lut[torch.clamp(slot, min=0, max=lut.shape[0] - 1)], slot)
    return torch.where(has, slot, -1)


@pytest.mark.parametrize("style", [None, chain_floors.POINTERS])
def test_both_numba_chain_kernels_write_the_chain(style):
    """The array and the pointer kernel (the simulator on the CPU, compiled on a GPU) write the
    same value per request, the one torch computes, on a workload with padding rows and a LUT."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    bs = 70
    kw = workloads.build(bs, workloads.spec_for("serving", device, seed=5), device)
    seeds = kw[chain_floors.SEEDS_NAME]
    seeds.fill_(-7)
    _eager, call = chain_floors.chain_call("chain-numba", kw, (32, style))
    call()
    if device == "cuda":
        torch.cuda.synchronize()
    want = _seeds_by_torch(kw)
    assert (want >= -1).all() and (want > 0).any()  # the workload reaches the LUT
    assert torch.equal(seeds[:bs].cpu(), want.cpu())
    assert (seeds[bs:] == -7).all()


@pytest.mark.parametrize(("chain", "shape"), [("chain-triton", (32, 1)), ("chain-numba", (32, None)),
                                              ("chain-numba", (32, chain_floors.POINTERS))])
def test_a_chain_floor_reads_nothing_from_a_table_with_no_columns(chain, shape):
    """``--bench-table 8x0``: every active request has a prefix and an extend but its row has no
    column to read; the chain writes -1 for each (as the planners plan it), and on the CPU
    stand-ins any read at column -1 would raise."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kw = workloads.build(8, workloads.spec_for("decode", device, table=(8, 0), seed=1), device)
    seeds = kw[chain_floors.SEEDS_NAME]
    seeds.fill_(-7)
    chain_floors.chain_call(chain, kw, shape)[1]()
    if device == "cuda":
        torch.cuda.synchronize()
    assert seeds[:8].tolist() == [-1] * 8
