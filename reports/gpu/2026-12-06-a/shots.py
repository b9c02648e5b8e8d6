"""Fewer block-wide steps in the look-back's scan programs, timed against the planners' own
configs at bs 1, 64, 512, 1024 and 4096 (CUDA-graph replay):

* Triton ``roles-lookback`` (``JOINED``, ``EARLY_POLL``, the planner's) at the planner's shapes
  above bs 512 (bs 1024: 32-lane seed tiles, 128-lane scan tiles, 8 warps; 4096: 64 / 512 / 8) and
  at small one- to four-program shapes below (the planner runs ``roles`` there: its ``current``
  row is the one to beat): ``scan_totals`` (the tile's totals from its scan's last row, no
  block-wide reduction), ``one_read`` (one block-wide reduction a poll), both
  (impls/offsets_planner/triton_roles_lookback.py);
* Numba ``warp-lookback`` (128-request chunks, joint re-polls: the planner's above bs 1024) and
  its candidate with fewer warp-wide steps (impls/offsets_planner/numba_warp_lookback_lean.py:
  ``tail_publish``, ``column_sums``, both), and at bs 4096 each one's re-polls and fallbacks a
  launch (``count_spins``, 1000 replays).

Every graph replayed in turn (9 rounds of 200 replays behind a sleep kernel), every candidate
checked byte for byte against the current Numba planner on the serving workload and two
out-of-contract draws before its replays, and its outputs again after them
(``../2026-12-04-b/replay_rounds.py``). The last line says what won: ``triton=`` the flags to set
(``scan_totals``, ``one_read``, both, or none) and ``numba-cuda=1`` when the lean kernel (both
steps) did: a candidate wins when it is at least 0.03 us faster than the planner's own config at
bs 4096 and (Triton) no more than 0.02 us slower at 1024, with every candidate the same as the
planner.

    python reports/gpu/2026-12-06-a/shots.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner import numba_one_pass as nop  # noqa: E402 (the repository's root first)
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b")))
import replay_rounds  # noqa: E402  (the earlier folder's graphs, rounds and checks)

dev = torch.device("cuda", 0)
BATCHES = (1, 64, 512, 1024, 4096)
TRITON = {1: dict(tile=32, scan_tile=32, num_warps=2), 64: dict(tile=32, scan_tile=64, num_warps=2),
          512: dict(tile=32, scan_tile=128, num_warps=8),
          1024: dict(tile=32, scan_tile=128, num_warps=8),
          4096: dict(tile=64, scan_tile=512, num_warps=8)}
"""Above bs 512 the planner's ``roles-lookback`` rows (impls/offsets_planner/
triton_launch_design.py ``DESIGNS``); below, one to four scan programs."""
FLAGS = {"base": {}, "scan_totals": dict(scan_totals=True), "one_read": dict(one_read=True),
         "scan_totals+one_read": dict(scan_totals=True, one_read=True)}
NUMBA = dict(chunk=128, joint_repoll=True)
"""The Numba planner's row above bs 1024 (impls/offsets_planner/numba_cuda_planner.py)."""
LEAN = {"base": {}, "tail_publish": dict(tail_publish=True), "column_sums": dict(column_sums=True),
        "lean": dict(tail_publish=True, column_sums=True)}


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


def candidates(bs):
    out = []
    for name, flags in FLAGS.items():
        out.append(("triton", f"RL {name}", c._triton_candidate(
            "roles-lookback", **TRITON[bs], joined=True, early_poll=True, **flags)[2]))
    for name, flags in LEAN.items():
        if bs in (1024, 4096) or name in ("base", "lean"):
            out.append(("numba-cuda", f"warp 128 {name}",
                        c._numba_candidate("warp-lookback", **NUMBA, **flags)[2]))
    return out


def rows(bs):
    out = replay_rounds.floors_and_current()
    return out + [r for r in (usable(bs, row) for row in candidates(bs)) if r is not None]


MEDIANS: dict = {}
bad = replay_rounds.run({bs: rows(bs) for bs in BATCHES}, dev, MEDIANS)


def median(bs, fw, label):
    """The row's median us, or infinity when the row did not run (it never wins)."""
    return MEDIANS.get((bs, fw, label), float("inf"))


kw = one_pass.workload(4096, dev)
for name, flags in LEAN.items():  # re-polls and fallbacks a launch (atomics on words 1, 2)
    if median(4096, "numba-cuda", f"warp 128 {name}") == float("inf"):
        continue
    g = replay_rounds.graph_of(lambda flags=flags: nop.plan_launch(
        design="warp-lookback", **NUMBA, **flags, count_spins=True, **kw))
    ws = nop.workspace(dev, "warp-lookback")
    ws[1:3] = 0
    for _ in range(1000):
        g.replay()
    torch.cuda.synchronize()
    print(f"warp 128 {name}, bs 4096: {int(ws[1]) / 1000:.2f} re-polls a launch, "
          f"{int(ws[2]) / 1000:.3f} fallbacks a launch")
    ws[1:3] = 0

best, best_t = "none", median(4096, "triton", "RL base") - 0.03
for name in ("scan_totals", "one_read", "scan_totals+one_read"):
    t = median(4096, "triton", f"RL {name}")
    if (t <= best_t
            and median(1024, "triton", f"RL {name}") <= median(1024, "triton", "RL base") + 0.02):
        best, best_t = name, t
numba_won = (median(4096, "numba-cuda", "warp 128 lean")
             <= median(4096, "numba-cuda", "warp 128 base") - 0.03)
if bad:
    best, numba_won = "none", False
print(f"DECISION triton={best} numba-cuda={int(numba_won)}")
sys.exit(1 if bad else 0)
