"""The Numba CUDA planner's ``roles-lookback`` rows (the GPU's default above bs 1024): its
workspace, the capture-first fallback and the look-back kernel through the planner's own launch.

In the simulator the rows are patched into ``SIM_DESIGNS`` (32-thread blocks, small chunks, so that
several scan blocks pass their totals on); every output byte is compared with the pure-Python
planner on poisoned buffers. The invariant the kernel keeps (``numba_roles_lookback_kernel``'s
docstring): after each launch the set the next launch polls is all zero, whatever the number of
scan blocks of this launch or the one before; word 0 holds ``epoch << 16`` with the ticket count
back at 0. Expected shapes are written from the design's description, not read from launch_shape.
"""

from __future__ import annotations

import pytest
import torch

from tests.test_numba_cuda_planner import (  # noqa: F401 (module-level skip when unavailable)
    DEVICE, IN, OUT, check_against_reference, clone, poison, random_plan)
from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import python_planner

rlk = nb.lookback_kernel
sim_only = pytest.mark.skipif(nb.MODE != "simulator", reason="patches the simulator's designs")
LOOKBACK_ROWS = ((64, ("roles", 32, 32, 1)), (4096, ("roles-lookback", 32, 96, 0)))
"""A small roles row, then look-back scan blocks of 96 requests (3 a thread) above bs 64."""


def other_set_is_zero(ws: torch.Tensor) -> bool:
    """Whether the set the next launch polls (epoch & 1 of word 0) holds only zeros, and the
    ticket count is back at 0."""
    epoch, tickets = int(ws[0]) >> 16, int(ws[0]) & 0xFFFF
    start = rlk.SETS_AT + (epoch & 1) * rlk.SET_WORDS
    return tickets == 0 and not bool(ws[start:start + rlk.SET_WORDS].any())


@sim_only
@pytest.mark.parametrize("bs", [65, 95, 96, 97, 300, 1025])
def test_lookback_rows_match_reference(monkeypatch, bs):
    """Scan blocks of 96 requests (the last one partial at 97, 300 and 1025), seed blocks of 32:
    the grid is ``ceil(bs / 96)`` scan blocks then ``ceil(bs / 32)`` seed blocks, and every byte
    equals the Python planner's."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", LOOKBACK_ROWS)
    blocks, threads, chunk, key = nb.launch_shape(bs)
    assert (blocks, threads, chunk) == (-(-bs // 96) + -(-bs // 32), 32, 96)
    # 3 requests a scan thread (rounded up to 4); 43 scan blocks at bs 4096 poll 172 words: 6 a lane
    assert key == ("roles-lookback", 4, 32, 6, 32, 96)
    check_against_reference(random_plan(4000 + bs, bs, lut=bs % 2 == 1, hazards=True))
    assert other_set_is_zero(rlk.workspace(torch.device(DEVICE)))


@sim_only
@pytest.mark.parametrize("bs", [97, 1025])
def test_seed_blocks_of_fewer_requests_than_threads(monkeypatch, bs):
    """A row whose fourth value is a seed tile of 16: seed blocks of 32 threads plan 16 requests
    each (threads 16..31 return at once), ``ceil(bs / 16)`` of them after the scan blocks."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((64, ("roles", 32, 32, 1)),
                                            (4096, ("roles-lookback", 32, 96, 16))))
    blocks, threads, chunk, key = nb.launch_shape(bs)
    assert (blocks, threads, chunk) == (-(-bs // 96) + -(-bs // 16), 32, 96)
    assert key == ("roles-lookback", 4, 32, 6, 16, 96)
    check_against_reference(random_plan(4100 + bs, bs, lut=True, hazards=True))


@sim_only
def test_scan_block_count_moving_up_and_down_on_one_buffer_set(monkeypatch):
    """bs jumps between look-back grids of 1 to 11 scan blocks, the roles row and bs 0 on one
    buffer set (outputs not re-poisoned, as a server reuses them): each launch must find the set it
    polls zeroed by the launch before, even when that one had fewer scan blocks than the one before
    it (a stale READY word from two launches back would add a carry that is not there)."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", LOOKBACK_ROWS)
    shared = random_plan(5, 1056, lut=True, hazards=True)
    poison(shared)
    mirror = clone(shared)
    ws = rlk.workspace(torch.device(DEVICE))
    for step, bs in enumerate([1056, 97, 1056, 200, 0, 1056, 64, 960, 65, 1056]):
        fresh = random_plan(600 + step, bs, lut=True, hazards=True)
        for kw in (shared, mirror):
            for name in IN[:3]:
                kw[name] = fresh[name]
        epoch = int(ws[0]) >> 16
        nb.launch(**shared)
        python_planner.launch(**mirror)
        for name in OUT:
            assert torch.equal(shared[name], mirror[name]), (step, bs, name)
        assert int(ws[0]) >> 16 == epoch + (bs > 64), (step, bs)  # one epoch a look-back launch
        assert other_set_is_zero(ws), (step, bs)


@sim_only
def test_more_scan_blocks_than_the_polling_warp_reads(monkeypatch):
    """A kernel built for fewer words than the grid publishes (``per_lane`` 1: 32 words, 8 scan
    blocks) takes the exact fallback in scan blocks 8 and above: the same outputs."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("roles-lookback", 32, 64, 0)),))
    monkeypatch.setattr(nb, "_largest", lambda design: 64 * 8)
    bs = 64 * 11 + 5
    assert nb.launch_shape(bs)[3] == ("roles-lookback", 2, 32, 1, 32, 64)
    check_against_reference(random_plan(77, bs, lut=True, hazards=True))


def test_packed_launch_under_capture_without_a_workspace_falls_back(monkeypatch):
    """The first launch on a device inside a CUDA-graph capture (no workspace yet, and zeroing one
    there would run only at replay): the packed launch allocates nothing, is provisional, and its
    look-back rows launch :data:`FALLBACK_DESIGN` (``blocked``, one request a thread on the GPU)."""
    monkeypatch.setattr(rlk._WORKSPACES, "by_device", {})
    monkeypatch.setattr(nb, "_capturing", lambda device: True)
    monkeypatch.setattr(nb, "SIMULATED", False)  # the GPU's table
    monkeypatch.setattr(nb, "_kernel_handle", lambda k: 0)
    kw = random_plan(3, 5, lut=True, hazards=False)
    plan, buffers = nb.validate_arguments(kw)
    packed = nb.PackedLaunch(plan, buffers)
    assert (packed.provisional, packed.lookback) == (True, False)
    assert rlk.existing_workspace(buffers.device) is None
    step = random_plan(9, 4096, lut=True, hazards=False)
    packed.set_batch(4096, *[step[n] for n in IN[:3]])
    assert (packed.blocks.value, packed.threads.value) == (8, 512)  # 4096 / 512 blocked blocks
    monkeypatch.setattr(nb, "_capturing", lambda device: False)
    again = nb.PackedLaunch(plan, buffers)
    assert (again.provisional, again.lookback) == (False, True)
    assert rlk.existing_workspace(buffers.device) is not None
    again.set_batch(4096, *[step[n] for n in IN[:3]])
    assert (again.blocks.value, again.threads.value) == (32, 256)  # 16 scan + 16 seed blocks


gpu = pytest.mark.skipif(nb.MODE != "gpu", reason="needs a CUDA device (planner is in simulator mode)")


@gpu
def test_gpu_capture_first_then_eager_then_capture_again(monkeypatch):
    """No workspace and no packed launch before a capture at bs 4096: the graph holds the fallback
    kernel and replays right; the next eager launch packs again with the look-back kernel (and
    makes the workspace); a second capture holds that one; both graphs replay right after refills."""
    from impls.offsets_planner import validate_cache

    monkeypatch.setattr(rlk._WORKSPACES, "by_device", {})
    validate_cache.clear()
    static = random_plan(31, 4096, lut=True, hazards=True)
    graphs = []
    for round_ in range(2):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            nb.launch(**static)
        graphs.append(graph)
        assert (rlk.existing_workspace(static["prefix_lens"].device) is None) == (round_ == 0)
        eager = clone(static)
        nb.launch(**eager)  # outside capture: packs again, look-back from here on
        torch.cuda.synchronize()
        assert rlk.existing_workspace(static["prefix_lens"].device) is not None
        for step in range(3):
            fresh = random_plan(900 + 10 * round_ + step, 4096, lut=True, hazards=True,
                                capacity=static["verify_capacity"])
            for name in IN:
                static[name].copy_(fresh[name])
            for graph in graphs:
                poison(static)
                graph.replay()
                torch.cuda.synchronize()
                ref = check_against_reference(clone(static))
                for name in OUT:
                    assert torch.equal(static[name], ref[name]), (round_, step, name)
