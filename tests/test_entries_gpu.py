"""The compiled entries planners on a CUDA device: the oracle, and CUDA-graph capture and replay.

Skipped without CUDA (and for a planner not in ``gpu`` mode here). Run on a GPU machine with
``python -m pytest tests/test_entries_gpu.py -q -p no:cacheprovider``. Spec:
docs/spec/entries-planner.md section 5 ("CUDA-graph safety": the total and the enable are read on
the device, so a captured launch replays correctly after its input tensors are refilled in place).
"""

from __future__ import annotations

import random

import pytest
import torch

from impls.entries_planner import get_planner, planner_mode
from tests.entries_oracle import POISON, build, linear_pool, outputs

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
GPU_PLANNERS = ("triton", "numba-cuda")


@pytest.fixture(scope="module", params=GPU_PLANNERS)
def planner(request):
    if planner_mode(request.param) != "gpu":
        pytest.skip(f"{request.param} is not in gpu mode here ({planner_mode(request.param)})")
    return get_planner(request.param)


def on_gpu(kwargs):
    return {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}


def padded(expected, capacity):
    return {k: v + [POISON] * (capacity - len(v)) for k, v in expected.items()}


def test_compiled_random_mixes_match_the_oracle(planner):
    rng = random.Random(7)
    for _ in range(40):
        bs = rng.randint(1, 40)
        rpi = [rng.choice([0, 1, 2, 3, 9]) for _ in range(bs)]
        prefix = [rng.choice([0, 1, 3, 15, 16, 17, 300]) for _ in range(bs)]
        lut = torch.arange(rng.choice([0, 30, 64]), dtype=torch.int64) + 7
        kwargs, offsets, expected = build(
            rpi, prefix, window=rng.choice([0, 5]), lut=lut if rng.random() < 0.5 else None,
            pool=linear_pool(cols=8), valid=[rng.randint(0, 12) for _ in range(bs)],
            offset=rng.choice([-1, 0, 1]))
        kwargs = on_gpu(kwargs)
        planner(**kwargs)
        torch.cuda.synchronize()
        assert outputs(kwargs) == padded(expected, offsets[-1] + 3)


def test_capture_then_replay_with_refilled_inputs(planner):
    """One capture, three replays: a new batch, a smaller one (tail untouched), enable 0."""
    capacity = 64
    first, _, _ = build([1, 2, 3], [5, 9, 2], capacity=capacity, pool=linear_pool(),
                        valid=[4, 16, 1], offset=1)
    kwargs = on_gpu(first)
    planner(**kwargs)  # compile and warm up outside capture
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        planner(**kwargs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        planner(**kwargs)

    def refill(rpi, prefix, valid, enable=None):
        new, offsets, expected = build(rpi, prefix, capacity=capacity, pool=linear_pool(),
                                       valid=valid, offset=1, enable=enable)
        for name in ("req_pool_indices", "prefix_lens", "verify_offsets_scratch",
                     "verify_enable", "req_to_verify_expected_tokens_valid_lens"):
            kwargs[name][: new[name].shape[0]].copy_(new[name].cuda())
        return offsets, expected

    for out in ("out_verify_slot_indices", "out_verify_expected_tokens",
                "out_verify_expected_positions", "out_verify_prev_slot_indices"):
        kwargs[out].fill_(POISON)
    offsets, expected = refill([3, 0, 1], [16, 4, 7], [16, 0, 3])
    graph.replay()
    torch.cuda.synchronize()
    assert outputs(kwargs) == padded(expected, capacity)

    before = outputs(kwargs)
    small_offsets, small = refill([2, 0, 0], [2, 0, 0], [16, 0, 0])
    graph.replay()
    torch.cuda.synchronize()
    after = outputs(kwargs)
    for name, values in small.items():
        assert after[name][:2] == values and after[name][2:] == before[name][2:]

    refill([1, 2, 3], [5, 5, 5], [5, 5, 5], enable=0)
    graph.replay()
    torch.cuda.synchronize()
    assert outputs(kwargs) == after


def test_the_numba_planner_launches_through_the_driver_and_falls_back_right(monkeypatch):
    """On the GPU the Numba entries planner launches its kernel by one cuLaunchKernel with
    Numba-packed parameters (impls/entries_planner/numba_driver_launch.py): after a launch its
    self-check has passed (no fallback reason) and the outputs are the oracle's; with the driver
    path refused, Numba's own launch gives the oracle's outputs too."""
    from impls.entries_planner import numba_cuda_planner, numba_driver_launch

    if planner_mode("numba-cuda") != "gpu":
        pytest.skip("numba-cuda is not in gpu mode here")
    table = torch.arange(4 * 32, dtype=torch.int32).reshape(4, 32) * 3 + 1
    kwargs, offsets, expected = build([1, 0, 3], [7, 2, 30], table=table, window=5,
                                      pool=linear_pool(cols=40), valid=[6, 1, 29], offset=1)
    want = padded(expected, offsets[-1] + 3)
    direct = on_gpu(kwargs)
    numba_cuda_planner.launch(**direct)
    torch.cuda.synchronize()
    assert numba_driver_launch.FALLBACK_REASON is None
    assert outputs(direct) == want
    monkeypatch.setattr(numba_driver_launch, "FALLBACK_REASON", "refused by the test")
    fallback = on_gpu(kwargs)
    numba_cuda_planner.launch(**fallback)
    torch.cuda.synchronize()
    assert outputs(fallback) == want
