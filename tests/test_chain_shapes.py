"""The chain floor's launch shape (conformance/bench/floors.py): tried on the GPU, the fastest
kept and named; the default, untried, without one."""

from __future__ import annotations

import pytest
import torch

from conformance.bench import floors, workloads


def test_labels_name_the_framework_shape():
    assert floors.shape_label("chain-triton", (128, 4)) == "BLOCK 128, 4 warps"
    assert floors.shape_label("chain-numba", (256, None)) == "256 threads"


def test_without_a_gpu_the_default_shape_is_used_untried():
    kw = workloads.build(8, workloads.spec_for("serving", "cpu", seed=8), "cpu")
    assert floors.best_chain_shape("chain-triton", kw) == ((floors.CHAIN_BLOCK, 4), {})
    assert floors.best_chain_shape("chain-numba", kw) == ((floors.CHAIN_BLOCK, None), {})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="shapes are tried by CUDA-graph replay")
@pytest.mark.parametrize("chain", floors.CHAIN_FLOORS)
def test_on_a_gpu_the_fastest_tried_shape_is_kept(chain):
    kw = workloads.build(4096, workloads.spec_for("serving", "cuda", seed=3), "cuda")
    shape, trials = floors.best_chain_shape(chain, kw)
    assert shape in floors.CHAIN_SHAPES[chain]
    assert set(trials) == {floors.shape_label(chain, s) for s in floors.CHAIN_SHAPES[chain]}
    assert trials[floors.shape_label(chain, shape)] == min(trials.values()) > 0
