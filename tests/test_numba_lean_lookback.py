"""The ``warp-lookback`` candidate with fewer warp-wide steps
(impls/offsets_planner/numba_warp_lookback_lean.py: ``tail_publish``, ``column_sums``) in Numba's
simulator: plans byte for byte the pure-Python planner's at small batches with several scan
blocks, and the not-ready test that ``column_sums`` folds into its column sums (a word not ready
adds ``NOT_READY``) sending a block to the exact fallback, with the simulator's blocks run last to
first and with a poll that never shows chosen blocks (the schedules and poll of
tests/test_numba_joint_repoll_fallback.py). Workspace words 1 and 2 (``count_spins``) count the
re-polls and fallbacks, expected values from the schedule.
"""

from __future__ import annotations

import pytest
import torch

from tests.test_hostile_pointers import fresh_ws, run_strict, ws_invariant
from tests.test_numba_cuda_planner import IN, OUT, clone
from tests.test_numba_joint_repoll_fallback import (  # noqa: F401 (last_block_first: a fixture)
    SPIN_LIMIT, WARP, carries_not_zero, cuda, expected_polls, fresh_workspace, hiding_poll,
    last_block_first, nb, plan_of, scan_blocks)
from tests.test_numba_lookback_default import other_set_is_zero
from tests.test_triton_planner import assert_same, expected, random_case
from impls.offsets_planner import numba_one_pass as nop
from impls.offsets_planner import python_planner
from impls.offsets_planner.numba_warp_lookback_lean import (NOT_READY,
                                                            build_lean_warp_lookback_kernel)

pytestmark = [pytest.mark.slow,  # a one-pass candidate kernel in the simulator (pyproject's rule)
              pytest.mark.skipif(nb.MODE != "simulator", reason="Numba's simulator only"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]
LEAN = [{"tail_publish": True, "column_sums": True}, {"tail_publish": True},
        {"column_sums": True}]


def test_not_ready_is_above_every_column_sum():
    """128 ready halves of 2^32 - 1 (the most one column holds: 4096 / 32 blocks) stay below
    ``NOT_READY``, and 512 not-ready words (4 columns x 128) stay far from int64's limit."""
    assert 128 * (2**32 - 1) < NOT_READY and 512 * NOT_READY < 2**62


@pytest.mark.parametrize("flags", LEAN, ids=["both", "tail_publish", "column_sums"])
def test_lean_matches_python_at_small_batches(flags):
    """64-request scan blocks (several from bs 65 on), in index order, both values of each
    step: byte for byte the pure-Python planner's."""
    for i, bs in enumerate((0, 1, 33, 65, 300)):
        kw = random_case(bs, i, ("plain", "swa", "hazard")[i % 3])
        got = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
        nop.plan_launch(design="warp-lookback", chunk=64, joint_repoll=True, **flags, **got)
        assert_same(got, expected(kw), kw)


def test_lean_refuses_other_orders():
    kw = random_case(65, 1, "plain")
    with pytest.raises(ValueError, match="joint_repoll alone"):
        nop.plan_launch(design="warp-lookback", chunk=64, tail_publish=True, **kw)
    with pytest.raises(ValueError, match="joint_repoll alone"):
        nop.plan_launch(design="warp-lookback", chunk=64, joint_repoll=True, pre_poll=True,
                        column_sums=True, **kw)


@pytest.mark.parametrize("data,bs", [("random", 65), ("random", 300), ("wrap", 200)])
def test_lean_falls_back_when_earlier_blocks_run_later(monkeypatch, last_block_first, data, bs):
    """Blocks run last to first: block b finds the 4b earlier words zero, re-polls each in all
    SPIN_LIMIT rounds, its column sums reach NOT_READY and it takes the fallback (word 2 counts
    ``nscan - 1``); outputs equal the Python planner's, int64 wrap included."""
    chunk = 64
    ws = fresh_workspace(monkeypatch)
    kw = plan_of(data, 5100 + bs, bs)
    nscan = scan_blocks(bs, chunk)
    carries_not_zero(kw, bs, chunk, range(1, nscan))
    ref, got = clone(kw), clone(kw)
    python_planner.launch(**ref)
    nop.plan_launch(design="warp-lookback", chunk=chunk, joint_repoll=True, count_spins=True,
                    tail_publish=True, column_sums=True, **got)
    assert last_block_first == list(range(nscan + -(-bs // WARP)))[::-1]
    for name in OUT:
        assert torch.equal(got[name], ref[name]), (name, bs, got[name][:8], ref[name][:8])
    for name in IN:
        if kw[name] is not None:
            assert torch.equal(got[name], kw[name]), name
    assert int(ws[1]) == SPIN_LIMIT * sum(4 * b for b in range(nscan)), int(ws[1])
    assert int(ws[2]) == nscan - 1, int(ws[2])
    assert int(ws[0]) == 1 << 16 and other_set_is_zero(ws)


@pytest.mark.parametrize("data,bs,chunk,hidden", [("random", 300, 64, (2,)),
                                                  ("random", 330, 32, (1, 9)),
                                                  ("wrap", 200, 64, (1,))])
def test_lean_falls_back_when_a_block_never_shows(data, bs, chunk, hidden):
    """A poll that never shows the blocks in ``hidden`` (READY clear, garbage low bits): every
    block after one takes the fallback, the others carry from the words' column sums; the polls
    made, re-polls and fallbacks are exactly the planner's kernel's."""
    nscan = scan_blocks(bs, chunk)
    per_lane = -(-4 * nscan // WARP)
    log: dict = {}
    kernel = cuda.jit(build_lean_warp_lookback_kernel(
        use_shuffle=False, padding=0, no_seed=-1, items=chunk // WARP,
        poll=hiding_poll(hidden, log), per_lane=per_lane, count_spins=True))
    kw = plan_of(data, 6100 + bs, bs)
    late = [b for b in range(nscan) if b > min(hidden)]
    carries_not_zero(kw, bs, chunk, late)
    ws = run_strict(kernel, kw, nscan + -(-bs // WARP), WARP, chunk, fresh_ws())
    assert log == expected_polls(nscan, per_lane, hidden)
    assert int(ws[1]) == SPIN_LIMIT * 4 * sum(sum(h < b for h in hidden) for b in range(nscan))
    assert int(ws[2]) == len(late), int(ws[2])
    ws_invariant(ws, 0)
