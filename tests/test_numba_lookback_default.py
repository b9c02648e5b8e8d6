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
    monkeypatch.setattr(nb.packed_launch, "capturing", lambda device: True)
    monkeypatch.setattr(nb, "SIMULATED", False)  # the GPU's table
    monkeypatch.setattr(nb.packed_launch, "kernel_handle", lambda k: 0)
    kw = random_plan(3, 5, lut=True, hazards=False)
    plan, buffers = nb.validate_arguments(kw)
    packed = nb.packed_launch.PackedLaunch(plan, buffers)
    assert (packed.provisional, packed.lookback) == (True, False)
    assert rlk.existing_workspace(buffers.device) is None
    step = random_plan(9, 4096, lut=True, hazards=False)
    packed.set_batch(4096, *[step[n] for n in IN[:3]])
    assert (packed.blocks.value, packed.threads.value) == (8, 512)  # 4096 / 512 blocked blocks
    monkeypatch.setattr(nb.packed_launch, "capturing", lambda device: False)
    again = nb.packed_launch.PackedLaunch(plan, buffers)
    assert (again.provisional, again.lookback) == (False, True)
    assert rlk.existing_workspace(buffers.device) is not None
    again.set_batch(4096, *[step[n] for n in IN[:3]])
    # the GPU's warp-lookback row: 32 scan blocks of 128 requests + 128 seed blocks, one warp each
    assert (again.blocks.value, again.threads.value) == (32 + 128, 32)


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


# ---- review attacks (hostile read of numba_roles_lookback_kernel) --------------------------------

def fresh_workspace(monkeypatch) -> torch.Tensor:
    """A new, zeroed workspace for this test only (the module's stays as the other tests left it)."""
    monkeypatch.setattr(rlk._WORKSPACES, "by_device", {})
    return rlk.workspace(torch.device(DEVICE))


@sim_only
@pytest.mark.parametrize("row, bs", [
    (("roles-lookback", 4, 4, 0), 13),  # a polling lane reads every 32nd word: words 4..31 unread
    (("roles-lookback", 48, 96, 0), 100),  # not a multiple of 32
    (("roles-lookback", 32, 31, 0), 129),  # 133 scan blocks at bs 4096: past the set's 128
    (("roles-lookback", 32, 96, 64), 100),  # seed tile 64 > 32 threads: requests 32..63 unplanned
])
def test_a_look_back_row_the_kernel_cannot_plan_is_refused(monkeypatch, row, bs):
    """Rows the look-back kernel would plan wrong are refused before any launch, with a message
    that names the limits: blocks of fewer than 32 threads (unread earlier-block words, wrong
    offsets), more than 128 scan blocks at the row's largest bs (stores past its workspace set:
    stale READY words, or past the workspace's end), a seed tile above threads (seeds left
    poisoned). The outputs and the workspace stay as they were."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, row),))
    ws = fresh_workspace(monkeypatch)
    with pytest.raises(ValueError, match=r"multiple of 32 in \[32, 1024\].*at most 128"):
        nb.launch_shape(bs)
    kw = random_plan(11, bs, lut=True, hazards=False)
    before = {name: kw[name].clone() for name in OUT}
    with pytest.raises(ValueError, match="roles-lookback row"):
        nb.launch(**kw)
    for name in OUT:
        assert torch.equal(kw[name], before[name]), name
    assert not bool(ws.any())


@sim_only
def test_a_look_back_row_of_exactly_128_scan_blocks_plans_right(monkeypatch):
    """The limit itself is accepted: chunks of 32 up to bs 4096 are 128 scan blocks; at bs 129 the
    five blocks plan right and leave the next set zero."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("roles-lookback", 32, 32, 0)),))
    ws = fresh_workspace(monkeypatch)
    assert nb.launch_shape(129) == (5 + 5, 32, 32, ("roles-lookback", 1, 32, 16, 32, 32))
    check_against_reference(random_plan(70, 129, lut=False, hazards=True))
    assert int(ws[0]) == 1 << 16
    assert other_set_is_zero(ws)


@sim_only
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's int64 wrap
@pytest.mark.parametrize("bs", [192, 300])
def test_int64_totals_that_wrap_across_scan_blocks(monkeypatch, bs):
    """Every request active with prefix and extend lengths in [2^61, 2^63): each scan block's totals
    wrap int64 and their 32-bit halves are all non-trivial, so the carry rebuilt from the four
    ``READY | 32 bits`` words of each earlier block (high half shifted back by 32, wrapping) must
    equal the reference's exact-then-wrapped offsets; bs 192 is two full chunks, 300 four."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", LOOKBACK_ROWS)
    ws = fresh_workspace(monkeypatch)
    kw = random_plan(4242 + bs, bs, lut=False, hazards=False)
    g = torch.Generator().manual_seed(bs)
    kw["req_pool_indices"] = torch.randint(1, 9, (bs,), generator=g, dtype=torch.int64)
    kw["prefix_lens"] = torch.randint(1 << 61, (1 << 63) - 1, (bs,), generator=g, dtype=torch.int64)
    kw["extend_seq_lens"] = torch.randint(1 << 61, (1 << 63) - 1, (bs,), generator=g,
                                          dtype=torch.int64)
    kw["prefix_lens"][0] = (1 << 63) - 1  # a low half of 0xFFFFFFFF in block 0
    kw["swa_window_size"] = 0
    got = check_against_reference(kw)
    exact = sum(int(v) for v in kw["extend_seq_lens"][:96])
    assert exact >= 1 << 63  # block 0's write total does wrap
    assert int(got["out_write_offsets"][96]) == (exact + (1 << 63)) % (1 << 64) - (1 << 63)
    assert other_set_is_zero(ws)


@sim_only
def test_bs_0_and_1_on_a_look_back_row(monkeypatch):
    """A table whose only row is look-back: bs 0 still launches one scan block (and no seed block),
    which writes the totals, draws the one ticket and advances the epoch; bs 1 likewise."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("roles-lookback", 32, 96, 0)),))
    ws = fresh_workspace(monkeypatch)
    assert nb.launch_shape(0)[:3] == (1, 32, 96)
    for step, bs in enumerate([0, 1, 0]):
        check_against_reference(random_plan(20 + step, bs, lut=True, hazards=True))
        assert int(ws[0]) == (step + 1) << 16, (step, bs)
        assert other_set_is_zero(ws), (step, bs)


@sim_only
def test_two_look_back_rows_of_different_chunks_share_one_workspace(monkeypatch):
    """Chunks of 32 up to bs 128 (per_lane 16: exactly the set's 128 blocks at bs 4096), chunks of
    96 above: launches alternate between the two kernels on one workspace, each finding the set
    it polls zeroed by the other."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((128, ("roles-lookback", 32, 32, 0)),
                                            (4096, ("roles-lookback", 32, 96, 0))))
    assert nb.launch_shape(128)[3] == ("roles-lookback", 1, 32, 16, 32, 32)
    assert nb.launch_shape(300)[3] == ("roles-lookback", 4, 32, 6, 32, 96)
    ws = fresh_workspace(monkeypatch)
    for step, bs in enumerate([128, 300, 97, 128, 33]):
        check_against_reference(random_plan(30 + step, bs, lut=step % 2 == 0, hazards=True))
        assert int(ws[0]) == (step + 1) << 16, (step, bs)
        assert other_set_is_zero(ws), (step, bs)


@sim_only
def test_reset_after_a_launch_killed_midway(monkeypatch):
    """A launch killed after two of its four scan blocks drew tickets and published: word 0 holds
    a ticket count of 2 and READY words lie in both sets. ``reset_workspace`` (what the docstrings
    prescribe) must bring back the invariant: the next launches plan right, advance the epoch by
    one each and leave the count at 0 and the next set zero."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", LOOKBACK_ROWS)
    ws = fresh_workspace(monkeypatch)
    ws[0] = (3 << 16) | 2
    ws[rlk.SETS_AT:rlk.SETS_AT + 16] = (1 << 32) | 12345
    ws[rlk.SETS_AT + rlk.SET_WORDS:rlk.SETS_AT + rlk.SET_WORDS + 16] = (1 << 32) | 777
    rlk.reset_workspace(torch.device(DEVICE))
    assert not bool(ws.any())  # zeroed in place: a captured graph keeps its pointer
    for step, bs in enumerate([300, 97]):
        check_against_reference(random_plan(40 + step, bs, lut=True, hazards=True))
        assert int(ws[0]) == (step + 1) << 16, (step, bs)
        assert other_set_is_zero(ws), (step, bs)
