"""The Numba CUDA planner's ``warp-lookback`` rows (the GPU's default above bs 1024,
``numba_cuda_planner.DESIGNS``): shapes, kernel keys, refusals, the capture-first fallback, and
the one-warp look-back kernel through the planner's own launch.

In the simulator the rows are patched into ``SIM_DESIGNS`` (small chunks, so that several scan
blocks pass their totals on); every output byte is compared with the pure-Python planner on
poisoned buffers. The invariant the look-back keeps (``numba_roles_lookback_kernel``'s docstring,
the same workspace): after each launch the set the next launch polls is all zero and word 0 holds
``epoch << 16`` with the ticket count back at 0. Expected shapes are written from the design's
description (one-warp blocks: ``ceil(bs / chunk)`` scan blocks, then ``ceil(bs / 32)`` seed blocks;
a lane polls ``ceil(4 * scan blocks at the row's largest bs / 32)`` words), not read from
launch_shape.
"""

from __future__ import annotations

import pytest
import torch

from tests.test_numba_cuda_planner import (  # noqa: F401 (module-level skip when unavailable)
    DEVICE, IN, OUT, check_against_reference, clone, poison, random_plan)
from tests.test_numba_lookback_default import other_set_is_zero
from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import python_planner

rlk = nb.lookback_kernel
sim_only = pytest.mark.skipif(nb.MODE != "simulator", reason="patches the simulator's designs")
WARP_ROWS = ((64, ("roles", 32, 32, 1)), (4096, ("warp-lookback", 32, 64, 0)))
"""A small roles row, then one-warp look-back scan blocks of 64 requests (2 a lane) above bs 64."""


def fresh_workspace(monkeypatch) -> torch.Tensor:
    """A new, zeroed workspace for this test only."""
    monkeypatch.setattr(rlk._WORKSPACES, "by_device", {})
    return rlk.workspace(torch.device(DEVICE))


def test_the_gpu_row_shapes_by_hand(monkeypatch):
    """The GPU's row (chunks of 128, 4 requests a lane): bs 1025 is 9 scan blocks and 33 seed
    blocks of 32 threads; bs 4096 32 and 128; bs 0 one scan block and no seed block; 32 scan
    blocks at bs 4096 publish 128 words, 4 a polling lane."""
    monkeypatch.setattr(nb, "SIMULATED", False)
    assert nb.launch_shape(1025) == (9 + 33, 32, 128, ("warp-lookback", 4, 4))
    assert nb.launch_shape(4096) == (32 + 128, 32, 128, ("warp-lookback", 4, 4))
    assert nb.launch_shape(1100, lookback=False)[3] == ("blocked",)
    assert ("warp-lookback", 4, 4) in nb.kernel_keys()


@sim_only
@pytest.mark.parametrize("bs", [65, 127, 128, 129, 300, 1025])
def test_warp_lookback_rows_match_reference(monkeypatch, bs):
    """Scan blocks of 64 requests (the last one partial at 65, 127, 129, 300 and 1025), seed
    blocks of 32: every byte equals the Python planner's, and the next set is left zero."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", WARP_ROWS)
    ws = fresh_workspace(monkeypatch)
    blocks, threads, chunk, key = nb.launch_shape(bs)
    assert (blocks, threads, chunk) == (-(-bs // 64) + -(-bs // 32), 32, 64)
    assert key == ("warp-lookback", 2, 8)  # 64 scan blocks at bs 4096: 256 words, 8 a lane
    check_against_reference(random_plan(8000 + bs, bs, lut=bs % 2 == 1, hazards=True))
    assert int(ws[0]) == 1 << 16
    assert other_set_is_zero(ws)


@sim_only
def test_scan_block_count_moving_up_and_down_beside_a_roles_lookback_row(monkeypatch):
    """bs moves between a ``roles-lookback`` row (up to 128), a ``warp-lookback`` row and bs 0
    on one buffer set and one workspace (outputs not re-poisoned, as a server reuses them): each
    launch finds the set it polls zeroed by the launch before, whichever kernel that was."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((128, ("roles-lookback", 32, 32, 0)),
                                            (4096, ("warp-lookback", 32, 64, 0))))
    ws = fresh_workspace(monkeypatch)
    shared = random_plan(9, 700, lut=True, hazards=True)
    poison(shared)
    mirror = clone(shared)
    for step, bs in enumerate([700, 97, 700, 129, 0, 300, 128, 640, 1]):
        fresh = random_plan(900 + step, bs, lut=True, hazards=True)
        for kw in (shared, mirror):
            for name in IN[:3]:
                kw[name] = fresh[name]
        nb.launch(**shared)
        python_planner.launch(**mirror)
        for name in OUT:
            assert torch.equal(shared[name], mirror[name]), (step, bs, name)
        assert int(ws[0]) == (step + 1) << 16, (step, bs)  # every launch here is a look-back
        assert other_set_is_zero(ws), (step, bs)


@sim_only
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's int64 wrap
def test_int64_totals_that_wrap_across_warp_blocks(monkeypatch):
    """Lengths in [2^61, 2^63): every block's totals wrap int64, so the carry rebuilt from the
    four ``READY | 32 bits`` words of each earlier block must equal the exact-then-wrapped
    offsets of the reference."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", WARP_ROWS)
    fresh_workspace(monkeypatch)
    bs = 200
    kw = random_plan(4343, bs, lut=False, hazards=False)
    g = torch.Generator().manual_seed(bs)
    kw["req_pool_indices"] = torch.randint(1, 9, (bs,), generator=g, dtype=torch.int64)
    for name in ("prefix_lens", "extend_seq_lens"):
        kw[name] = torch.randint(1 << 61, (1 << 63) - 1, (bs,), generator=g, dtype=torch.int64)
    kw["swa_window_size"] = 0
    got = check_against_reference(kw)
    exact = sum(int(v) for v in kw["extend_seq_lens"][:64])
    assert exact >= 1 << 63  # block 0's write total does wrap
    assert int(got["out_write_offsets"][64]) == (exact + (1 << 63)) % (1 << 64) - (1 << 63)


@sim_only
def test_more_scan_blocks_than_the_lanes_poll(monkeypatch):
    """A kernel built for fewer words than the grid publishes (``per_lane`` 1: 32 words, 8 scan
    blocks) takes the exact fallback in scan blocks 8 and above: the same outputs."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("warp-lookback", 32, 32, 0)),))
    monkeypatch.setattr(nb, "_largest", lambda design: 32 * 8)
    fresh_workspace(monkeypatch)
    bs = 32 * 11 + 5
    assert nb.launch_shape(bs)[3] == ("warp-lookback", 1, 1)
    check_against_reference(random_plan(78, bs, lut=True, hazards=True))


@sim_only
@pytest.mark.parametrize("row, largest", [
    (("warp-lookback", 64, 128, 0), 4096),  # 64 threads: lanes 32..63 would be a second warp
    (("warp-lookback", 32, 48, 0), 4096),  # not a multiple of 32: a lane's run is chunk / 32
    (("warp-lookback", 32, 0, 0), 4096),  # no requests a block
    (("warp-lookback", 32, 32, 0), 32 * 129),  # 129 scan blocks: past the set's 128
])
def test_a_warp_lookback_row_the_kernel_cannot_plan_is_refused(monkeypatch, row, largest):
    """Rows the one-warp kernel would plan wrong are refused before any launch, naming the limits;
    the outputs and the workspace stay as they were."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, row),))
    monkeypatch.setattr(nb, "_largest", lambda design: largest)
    ws = fresh_workspace(monkeypatch)
    with pytest.raises(ValueError, match=r"warp-lookback row.*threads must be 32.*at most 128"):
        nb.launch_shape(100)
    kw = random_plan(12, 100, lut=True, hazards=False)
    before = {name: kw[name].clone() for name in OUT}
    with pytest.raises(ValueError, match="warp-lookback row"):
        nb.launch(**kw)
    for name in OUT:
        assert torch.equal(kw[name], before[name]), name
    assert not bool(ws.any())


@sim_only
def test_bs_0_and_1_on_a_warp_lookback_row(monkeypatch):
    """A table whose only row is ``warp-lookback``: bs 0 still launches one scan block and no
    seed block, which writes the totals, draws the one ticket and advances the epoch."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("warp-lookback", 32, 64, 0)),))
    ws = fresh_workspace(monkeypatch)
    assert nb.launch_shape(0)[:3] == (1, 32, 64)
    assert nb.launch_shape(1)[:3] == (2, 32, 64)
    for step, bs in enumerate([0, 1, 0]):
        check_against_reference(random_plan(40 + step, bs, lut=True, hazards=True))
        assert int(ws[0]) == (step + 1) << 16, (step, bs)
        assert other_set_is_zero(ws), (step, bs)
