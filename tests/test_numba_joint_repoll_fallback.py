"""The ``warp-lookback`` kernel's ``joint_repoll`` candidate
(impls/offsets_planner/numba_warp_lookback_kernel.py) when an earlier scan block's status words
never show: after :data:`SPIN_LIMIT` rounds, each re-polling every word still not ready, the block
must take the exact fallback (the carry summed from the earlier requests' lengths), because the
outputs may never depend on the grid being resident or on timing (that module's docstring; the
look-back scheme of impls/offsets_planner/numba_roles_lookback_kernel.py).

Two ways force the timeout in Numba's simulator, which otherwise runs a grid's blocks one after
another in index order (so every earlier block has published before a block polls):

* the candidate's own launch (``numba_one_pass.plan_launch``, its workspace and its poll) with
  the simulator running the grid's blocks last to first, a schedule a GPU may give (as
  tests/test_one_pass.py does for Triton's interpreter): every earlier block's words are still
  the zeros the launch before left;
* the kernel built directly with a ``poll`` that never shows the words of chosen earlier blocks
  (READY clear, garbage in the low bits) and shows all the others, launched on Strict arrays
  (tests/test_hostile_pointers.py's ``run_strict``: every workspace index in range).

Every output byte is compared with the pure-Python planner (impls/offsets_planner/
python_planner.py). That the fallback ran is shown by the kernel's ``count_spins`` words (word
1: re-polls, word 2: blocks that took the fallback), expected values computed from the schedule
and the design (a word not ready is re-polled once a round, :data:`SPIN_LIMIT` rounds), and, with
the hiding poll, by the log of every poll each lane made; a block that skipped the fallback
would add the zero or garbage words into its carry and the outputs would differ.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from tests.test_hostile_pointers import fresh_ws, run_strict, ws_invariant
from tests.test_numba_cuda_planner import (  # noqa: F401 (module-level skip when unavailable)
    DEVICE, IN, OUT, clone, random_plan)
from tests.test_numba_lookback_default import other_set_is_zero
from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import numba_one_pass as nop
from impls.offsets_planner import python_planner
from impls.offsets_planner.numba_roles_lookback_kernel import SET_WORDS, SETS_AT, SPIN_LIMIT
from impls.offsets_planner.numba_warp_lookback_kernel import build_warp_lookback_kernel

rlk = nb.lookback_kernel
cuda = nb.cuda
pytestmark = [pytest.mark.slow,  # a one-pass candidate kernel in the simulator (pyproject's rule)
              pytest.mark.skipif(nb.MODE != "simulator",
                                 reason="controls the simulator's block order and polls"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

WARP = 32
GARBAGE = 0x5A5A5A5A
"""What a hidden word reads as: READY (bit 32) clear, low bits that are no block's totals."""


def scan_blocks(bs: int, chunk: int) -> int:
    return max(1, -(-bs // chunk))


def wrapping_plan(seed: int, bs: int) -> dict:
    """A plan whose lengths lie in [2^61, 2^63) (no padding rows, no window): every block's
    totals, and so every carry, wrap int64 (as in tests/test_numba_warp_lookback_default.py)."""
    kw = random_plan(seed, bs, lut=False, hazards=False)
    g = torch.Generator().manual_seed(seed)
    kw["req_pool_indices"] = torch.randint(1, 9, (bs,), generator=g, dtype=torch.int64)
    for name in ("prefix_lens", "extend_seq_lens"):
        kw[name] = torch.randint(1 << 61, (1 << 63) - 1, (bs,), generator=g, dtype=torch.int64)
    kw["swa_window_size"] = 0
    return kw


def plan_of(data: str, seed: int, bs: int) -> dict:
    if data == "wrap":
        return wrapping_plan(seed, bs)
    return random_plan(seed, bs, lut=bs % 2 == 1, hazards=True)


def carries_not_zero(kw: dict, bs: int, chunk: int, blocks) -> None:
    """The reference's carry into each of ``blocks`` (both sides) is not 0, so a block that
    skipped the fallback and summed zero words would be wrong."""
    ref = clone(kw)
    python_planner.launch(**ref)
    for b in blocks:
        for name in ("out_verify_offsets_scratch", "out_write_offsets"):
            assert int(ref[name][b * chunk]) != 0, (name, bs, b)


# ======== 1. the candidate's launch, blocks last to first ========================================

@pytest.fixture
def last_block_first(monkeypatch) -> list:
    """The simulator running each grid's blocks last to first: every launch's blocks are queued
    and, once the grid's last one is, run in reverse. Returns the block indices in the order run
    (one list for every launch)."""
    from numba.cuda.simulator import kernel as simulator

    base = simulator.BlockManager
    queued: list = []
    order: list = []

    class LastFirst(base):
        def run(self, grid_point, *args):
            queued.append((self, grid_point, args))
            if len(queued) == int(np.prod(self._grid_dim)):
                batch = queued[::-1]
                queued.clear()
                for manager, point, a in batch:
                    order.append(point[0])
                    base.run(manager, point, *a)

    monkeypatch.setattr(simulator, "BlockManager", LastFirst)
    return order


def fresh_workspace(monkeypatch) -> torch.Tensor:
    """A new, zeroed look-back workspace (the one ``warp-lookback`` shares) for this test only."""
    monkeypatch.setattr(rlk._WORKSPACES, "by_device", {})
    return rlk.workspace(torch.device(DEVICE))


@pytest.mark.parametrize("data,bs", [("random", 64), ("random", 65), ("random", 128),
                                     ("random", 129), ("random", 300), ("wrap", 200)])
def test_joint_repoll_times_out_when_earlier_blocks_run_later(monkeypatch, last_block_first,
                                                              data, bs):
    """Scan blocks of 64 requests (2 a lane; one block at 64, a partial last one at 65, 129, 300)
    run last to first: scan block b finds the 4b words of blocks 0..b-1 still zero, re-polls each
    in every one of SPIN_LIMIT rounds and takes the fallback; block 0 has none to wait for. The
    outputs equal the Python planner's (int64 totals that wrap included), word 1 counts
    ``SPIN_LIMIT * 4b`` re-polls of each block b, word 2 the ``nscan - 1`` fallbacks, and the
    workspace is left as the next launch needs it."""
    chunk = 64
    ws = fresh_workspace(monkeypatch)
    kw = plan_of(data, 5100 + bs, bs)
    nscan = scan_blocks(bs, chunk)
    carries_not_zero(kw, bs, chunk, range(1, nscan))
    ref, got = clone(kw), clone(kw)
    python_planner.launch(**ref)
    nop.plan_launch(design="warp-lookback", chunk=chunk, joint_repoll=True, count_spins=True,
                    **got)
    grid = nscan + -(-bs // WARP)
    assert last_block_first == list(range(grid))[::-1]  # the schedule forced
    for name in OUT:
        assert torch.equal(got[name], ref[name]), (name, bs, got[name][:8], ref[name][:8])
    for name in IN:
        if kw[name] is not None:
            assert torch.equal(got[name], kw[name]), name
    assert int(ws[1]) == SPIN_LIMIT * sum(4 * b for b in range(nscan)), int(ws[1])
    assert int(ws[2]) == nscan - 1, int(ws[2])
    assert int(ws[0]) == 1 << 16 and other_set_is_zero(ws)


def test_joint_repoll_in_index_order_never_falls_back(monkeypatch):
    """The control: the same launch with the simulator's own order (block 0 first), every
    earlier block's words ready at the first poll: no re-poll and no fallback counted, so the
    counts above come from the schedule forced, not from the launch itself."""
    ws = fresh_workspace(monkeypatch)
    bs = 300
    kw = plan_of("random", 5100 + bs, bs)
    ref, got = clone(kw), clone(kw)
    python_planner.launch(**ref)
    nop.plan_launch(design="warp-lookback", chunk=64, joint_repoll=True, count_spins=True, **got)
    for name in OUT:
        assert torch.equal(got[name], ref[name]), name
    assert (int(ws[1]), int(ws[2])) == (0, 0)


# ======== 2. the kernel built with a poll that never shows chosen blocks =========================

def hiding_poll(hidden: tuple, log: dict):
    """``poll(ws, i)`` as the simulator's (a plain read) except that the words of the blocks in
    ``hidden`` (in either set) read :data:`GARBAGE`; every call is logged under the polling
    thread's ``(block, lane)``."""
    def poll(ws, i):
        t = threading.current_thread()  # the simulator's thread: its block and lane
        log.setdefault((t.blockIdx.x, t.threadIdx.x), []).append(int(i))
        if (i - SETS_AT) % SET_WORDS // 4 in hidden:
            return GARBAGE
        return ws[i]
    return poll


def expected_polls(nscan: int, per_lane: int, hidden: tuple) -> dict:
    """Each scan block b's lanes first poll their words below 4b (lane + 32k, k rising), then,
    in each of SPIN_LIMIT rounds, every one of them still not ready (the hidden blocks'), in the
    same order; seed blocks poll nothing. Workspace epoch 0: the words from SETS_AT."""
    want = {}
    for b in range(nscan):
        for lane in range(WARP):
            first = list(range(lane, min(4 * b, WARP * per_lane), WARP))
            pending = [i for i in first if i // 4 in hidden]
            if first:
                want[(b, lane)] = [SETS_AT + i for i in first + pending * SPIN_LIMIT]
    return want


@pytest.mark.parametrize("data,bs,chunk,hidden", [
    ("random", 65, 32, (0,)),  # 3 blocks, the last partial: blocks 1 and 2 fall back
    ("random", 96, 32, (1,)),  # block 1 finds block 0 ready; block 2 waits for block 1 in vain
    ("random", 129, 64, (0,)),  # 2 requests a lane, a partial last block
    ("random", 300, 64, (2,)),  # 5 blocks: 1 and 2 carry from the words, 3 and 4 fall back
    ("random", 330, 32, (1, 9)),  # 11 blocks, 2 words a lane: lanes 4-7 of block 10 wait for both
    ("wrap", 200, 64, (1,)),  # every carry wraps int64
])
def test_joint_repoll_falls_back_when_a_block_never_shows(data, bs, chunk, hidden):
    """The joint_repoll kernel (as plan_launch builds it: 32-thread blocks, ``chunk / 32``
    requests a lane, ``ceil(4 * nscan / 32)`` words a lane) with a poll that never shows the
    blocks in ``hidden``: every output equals the Python planner's; every lane polled exactly
    its first words and then, SPIN_LIMIT rounds, each of its words still not ready (a joint
    round: a lane's two pending words alternate); word 1 counts those re-polls and word 2 the
    blocks after a hidden one, the only ones whose carry cannot come from the words."""
    nscan = scan_blocks(bs, chunk)
    assert max(hidden) < nscan - 1  # some block polls every hidden one
    per_lane = -(-4 * nscan // WARP)
    log: dict = {}
    kernel = cuda.jit(build_warp_lookback_kernel(
        use_shuffle=False, padding=0, no_seed=-1, items=chunk // WARP,
        poll=hiding_poll(hidden, log), per_lane=per_lane, count_spins=True, joint_repoll=True))
    kw = plan_of(data, 6100 + bs, bs)
    late = [b for b in range(nscan) if b > min(hidden)]
    carries_not_zero(kw, bs, chunk, late)
    ws = run_strict(kernel, kw, nscan + -(-bs // WARP), WARP, chunk, fresh_ws())
    want = expected_polls(nscan, per_lane, hidden)
    assert log == want
    repolls = SPIN_LIMIT * 4 * sum(sum(h < b for h in hidden) for b in range(nscan))
    assert int(ws[1]) == repolls, int(ws[1])
    assert int(ws[2]) == len(late), int(ws[2])
    ws_invariant(ws, 0)
