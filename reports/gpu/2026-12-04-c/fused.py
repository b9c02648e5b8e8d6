"""The ``fused`` look-back (each scan program or block also gathers its own lanes' seeds: its
table loads issued before its scan, its LUT loads while its first poll is out; no seed programs)
against the current planners and the chain floors, at the bench's bs 1-4096, Triton and Numba,
several tiles. Every graph replayed in turn (9 rounds of 200 replays behind a sleep kernel);
every candidate checked byte for byte against the current Numba planner (the serving workload
and two out-of-contract draws, and again after the replays).

    git checkout 5968117      # the fused candidate's code was removed after this ran
    python reports/gpu/2026-12-04-c/fused.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass_calls as c

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b"))
import replay_rounds  # noqa: E402  (the earlier folder's graphs and rounds)

dev = torch.device("cuda", 0)
N, T = c._numba_candidate, c._triton_candidate


def rows(bs):
    out = replay_rounds.floors_and_current()
    for chunk in (32, 64, 128, 256):
        if chunk // 2 < bs or chunk == 32:
            out.append(("numba-cuda", f"fused {chunk}", N("fused-lookback", chunk=chunk)[2]))
    for st, w in ((32, 1), (64, 1), (128, 1), (128, 2), (256, 2), (256, 4), (512, 4), (512, 8)):
        if (st // 2 < bs or st == 32) and -(-bs // st) <= 64:
            out.append(("triton", f"fused {st}/{w}w", T(
                "roles-lookback", tile=32, scan_tile=st, num_warps=w, joined=True,
                early_poll=True, fused=True)[2]))
    if bs == 4096:
        out.append(("numba-cuda", "warp-lookback 128", N("warp-lookback", chunk=128)[2]))
    return out


bad = replay_rounds.run({bs: rows(bs) for bs in (1, 8, 64, 512, 1024, 4096)}, dev)
sys.exit(1 if bad else 0)
