"""The one-warp look-back's poll order at bs 1024 and 4096: its totals published before or after
the warp's inclusive scan (``early_publish``), words not ready polled again all at once or one at
a time (``joint_repoll``), against the chain floors and both current planners (the Numba one is
neither: its kernel is the one of ``early 0 joint 0``). Not yet run: the session's device time
ran out (the call that would have run it got no answer). Every graph replayed in turn (9 rounds of 200 replays
behind a sleep kernel); every candidate checked byte for byte against the current Numba planner.

    python reports/gpu/2026-12-04-c/repoll.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass_calls as c

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b"))
import replay_rounds  # noqa: E402  (the earlier folder's graphs and rounds)

dev = torch.device("cuda", 0)


def rows(bs):
    out = replay_rounds.floors_and_current()
    for early in (True, False):
        for joint in (True, False):
            out.append(("numba-cuda", f"warp 128 early {early:d} joint {joint:d}",
                        c._numba_candidate("warp-lookback", chunk=128, early_publish=early,
                                           joint_repoll=joint)[2]))
    return out


bad = replay_rounds.run({bs: rows(bs) for bs in (1024, 4096)}, dev)
sys.exit(1 if bad else 0)
