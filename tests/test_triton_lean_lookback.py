"""The ``roles-lookback`` candidates with fewer block-wide steps
(impls/offsets_planner/triton_roles_lookback.py: ``SCAN_TOTALS``, the tile's totals from its scan;
``ONE_READ``, one reduction a poll): plans byte for byte the pure-Python planner's at small
batches with several scan programs (32- and 64-lane scan tiles), both flags set on the planner
reaching its default launch above bs 512, and ``ONE_READ``'s not-ready test on polls built by
hand (the interpreter runs programs in index order, so a launch never meets a missing word).
On the GPU the same plans are checked by the sweep (reports/gpu/2026-12-06-a/).
"""

from __future__ import annotations

import pytest
import torch

from tests.test_triton_planner import DEVICE, assert_same, expected, on, random_case
from impls.offsets_planner import triton_one_pass as top
from impls.offsets_planner import triton_planner as tp
from impls.offsets_planner import triton_roles_lookback as trl
from impls.offsets_planner import validate_cache

pytestmark = pytest.mark.skipif(tp.MODE is None, reason="triton planner unavailable")
FLAGS = [{"scan_totals": True}, {"one_read": True}, {"scan_totals": True, "one_read": True},
         {"scan_totals": True, "one_read": True, "late_shot": True}]


@pytest.mark.parametrize("flags", FLAGS, ids=["scan_totals", "one_read", "both", "both-late"])
def test_candidates_match_python_at_small_batches(flags):
    for i, bs in enumerate((0, 1, 33, 300, 513)):
        kw = random_case(bs, i, ("plain", "swa", "hazard")[i % 3])
        dev = on(kw, DEVICE)
        top.plan_launch(design="roles-lookback", tile=32, scan_tile=32 if i % 2 else 64,
                        joined=True, early_poll=True, **flags, **dev)
        assert_same(on(dev, "cpu"), expected(kw), kw)


def test_scan_totals_with_the_slow_carry():
    """Every scan program's carry from the request vectors (the missing-word path), totals from
    the scan: still the Python planner's plan."""
    for i, bs in enumerate((65, 300)):
        kw = random_case(bs, i, "hazard")
        dev = on(kw, DEVICE)
        top.plan_launch(design="roles-lookback", scan_tile=64, joined=True, slow_carry=True,
                        scan_totals=True, one_read=True, **dev)
        assert_same(on(dev, "cpu"), expected(kw), kw)


def test_candidate_flags_refused_without_joined():
    kw = random_case(300, 1, "plain")
    for flags in ({"scan_totals": True}, {"one_read": True}):
        with pytest.raises(ValueError, match="need joined"):
            top.plan_launch(design="roles-lookback", scan_tile=64, **flags, **kw)
    with pytest.raises(ValueError, match="pick one"):
        top.plan_launch(design="roles-lookback", scan_tile=64, joined=True, tagged=True,
                        one_read=True, **kw)


def test_planner_flags_reach_the_default_launch(monkeypatch):
    monkeypatch.setattr(tp, "SCAN_TOTALS", True)
    monkeypatch.setattr(tp, "ONE_READ", True)
    for i, bs in enumerate((513, 2048)):
        kw = random_case(bs, i, ("swa", "hazard")[i])
        dev = on(kw, DEVICE)
        tp.launch(**dev)
        assert_same(on(dev, "cpu"), expected(kw), kw)
        plan, buffers = validate_cache.lookup(dev)
        key = buffers.records[plan.bs].key
        assert key[1] == "roles-lookback" and key[-2:] == (True, True)
    validate_cache.clear()


if tp.MODE == "interpreter":
    triton, tl = tp.triton, tp.tl

    @triton.jit
    def _read_kernel(poll_ptr, out_ptr, NPROG: tl.constexpr):
        w = tl.arange(0, NPROG * 4)
        carry_v, carry_w, waiting = trl._one_read(tl.load(poll_ptr + w), NPROG)
        k = tl.arange(0, 4)
        tl.store(out_ptr + k, tl.where(k == 0, carry_v, tl.where(k == 1, carry_w, waiting)),
                 mask=k < 3)


@pytest.mark.skipif(tp.MODE != "interpreter", reason="a hand-built poll in the interpreter")
@pytest.mark.parametrize("gap", [None, 0, 5, 31])
def test_one_read_carries_and_missing_word(gap):
    """Eight tiles' words ``READY | half`` with halves up to 2^32 - 1 (totals that wrap int64):
    the carries are the int64 sums of the tiles' totals; a word left zero (``gap``, any column)
    makes ``waiting`` 1, none makes it 0."""
    g = torch.Generator().manual_seed(7)
    halves = torch.randint(0, 1 << 32, (32,), generator=g, dtype=torch.int64)
    halves[:4] = (1 << 32) - 1
    poll = halves | (1 << 32)
    if gap is not None:
        poll[gap] = 0
    out = torch.zeros(3, dtype=torch.int64)
    _read_kernel[(1,)](poll, out, NPROG=8)
    totals = [(int(halves[4 * t + 2 * s]) + (int(halves[4 * t + 2 * s + 1]) << 32))
              for t in range(8) for s in range(2)]
    want = [sum(totals[0::2]), sum(totals[1::2])]
    want = [(x + (1 << 63)) % (1 << 64) - (1 << 63) for x in want]
    assert int(out[2]) == (0 if gap is None else 1)
    if gap is None:
        assert [int(out[0]), int(out[1])] == want
