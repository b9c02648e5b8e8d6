"""Fewer block-wide steps and earlier polls on the look-back's path, at bs 1024 (Triton's
look-back row) and 4096 (both planners):

* Triton ``roles-lookback`` at the planner's shapes (``JOINED``, ``EARLY_POLL``): ``tagged`` (a
  poll's count of words not ready and its four word sums from one five-operand reduction: one
  block-wide exchange a poll, not two), ``late_shot`` (a second poll sent after the tile's scan fills the words the first
  found not ready), both; at 4096 also both on 256- and 1024-lane scan tiles and on 4 warps;
* Numba ``warp-lookback`` (128-request chunks, joint re-polls, the planner's): ``pre_poll`` (the
  first polls sent as soon as the ticket is known, before the warp's scan and its own publish),
  and each one's re-polls a launch (``count_spins``, 1000 replays).

Every graph replayed in turn (9 rounds of 200 replays behind a sleep kernel), every candidate
checked byte for byte against the current Numba planner before and after its replays. The last
line says what won: ``triton=`` the flags to set (``tagged``, ``late_shot``, both, or none) and
``numba-cuda=1`` when ``pre_poll`` did: a candidate wins when it is at least 0.03 us faster than
the planner's own config at 4096 and (Triton) no more than 0.02 us slower at 1024, with every
candidate the same as the planner.

    python reports/gpu/2026-12-05-d/shots.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner import numba_one_pass as nop  # noqa: E402 (the repository's root first)
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b"))
import replay_rounds  # noqa: E402  (the earlier folder's graphs and rounds)

dev = torch.device("cuda", 0)
TRITON = {1024: dict(tile=32, scan_tile=128, num_warps=8), 4096: dict(tile=64, scan_tile=512, num_warps=8)}
"""The planner's ``roles-lookback`` rows (impls/offsets_planner/triton_launch_design.py ``DESIGNS``)."""
FLAGS = {"base": {}, "tagged": dict(tagged=True), "late_shot": dict(late_shot=True),
         "tagged+late_shot": dict(tagged=True, late_shot=True)}
NUMBA = dict(chunk=128, joint_repoll=True)
"""The Numba planner's row above bs 1024 (impls/offsets_planner/numba_cuda_planner.py)."""


def triton(label, shape, flags):
    return ("triton", label, c._triton_candidate("roles-lookback", **shape, joined=True,
                                                 early_poll=True, **flags)[2])


def usable(bs, row):
    """``row`` if its candidate compiles and runs once at bs, else None (said on one line), so
    that one candidate that fails to build does not cost the others their figures."""
    fw, label, make = row
    try:
        make(one_pass.workload(bs, dev))()
        torch.cuda.synchronize()
        return row
    except Exception as exc:  # a compile error of one candidate
        print(f"ROW FAILED {bs} {fw} {label}: {type(exc).__name__}: {str(exc)[:300]}")
        return None


def rows(bs):
    out = replay_rounds.floors_and_current()
    return out[:6] + [r for r in (usable(bs, row) for row in candidates(bs)) if r is not None]


def candidates(bs):
    out = []
    for name, flags in FLAGS.items():
        out.append(triton(f"RL {name}", TRITON[bs], flags))
    if bs == 4096:
        both = FLAGS["tagged+late_shot"]
        out.append(triton("RL 64/256w8 tagged+late_shot", dict(tile=64, scan_tile=256, num_warps=8), both))
        out.append(triton("RL 64/1024w16 tagged+late_shot", dict(tile=64, scan_tile=1024, num_warps=16), both))
        out.append(triton("RL 64/512w4 tagged+late_shot", dict(tile=64, scan_tile=512, num_warps=4), both))
        for pre in (False, True):
            out.append(("numba-cuda", f"warp 128 pre_poll {pre:d}",
                        c._numba_candidate("warp-lookback", **NUMBA, pre_poll=pre)[2]))
    return out


MEDIANS: dict = {}
bad = replay_rounds.run({bs: rows(bs) for bs in (1024, 4096)}, dev, MEDIANS)


def median(bs, fw, label):
    """The row's median us, or infinity when the row did not run (it never wins)."""
    return MEDIANS.get((bs, fw, label), float("inf"))


kw = one_pass.workload(4096, dev)
for pre in (False, True):  # re-polls and fallbacks a launch (diagnostics: atomics on words 1, 2)
    if median(4096, "numba-cuda", f"warp 128 pre_poll {pre:d}") == float("inf"):
        continue
    g = replay_rounds.graph_of(lambda pre=pre: nop.plan_launch(
        design="warp-lookback", **NUMBA, pre_poll=pre, count_spins=True, **kw))
    ws = nop.workspace(dev, "warp-lookback")
    ws[1:3] = 0
    for _ in range(1000):
        g.replay()
    torch.cuda.synchronize()
    print(f"warp 128 pre_poll {pre:d}, bs 4096: {int(ws[1]) / 1000:.2f} re-polls a launch, "
          f"{int(ws[2]) / 1000:.3f} fallbacks a launch")
    ws[1:3] = 0

best, best_t = "none", median(4096, "triton", "RL base") - 0.03
for name in ("tagged", "late_shot", "tagged+late_shot"):
    t = median(4096, "triton", f"RL {name}")
    if (t <= best_t
            and median(1024, "triton", f"RL {name}") <= median(1024, "triton", "RL base") + 0.02):
        best, best_t = name, t
numba_won = (median(4096, "numba-cuda", "warp 128 pre_poll 1")
             <= median(4096, "numba-cuda", "warp 128 pre_poll 0") - 0.03)
if bad:
    best, numba_won = "none", False
print(f"DECISION triton={best} numba-cuda={int(numba_won)}")
sys.exit(1 if bad else 0)
