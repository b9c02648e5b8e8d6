"""The look-back's epoch read by a load beside the request loads, the ticket drawn after the
outputs (``epoch_load``), against the epoch from the ticket's own atomic before publishing (both
planners' kernels until now), at bs 1024 (Triton's look-back row) and 4096 (both). Every graph
replayed in turn (9 rounds of 200 replays behind a sleep kernel), every candidate checked byte for
byte against the current Numba planner before and after its replays. The last line says, per
planner, whether ``epoch_load`` won: at least 0.02 us faster at 4096, and (Triton) no more than
0.02 us slower at 1024, with every candidate the same as the planner.

    python reports/gpu/2026-12-05-b/epoch.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass_calls as c

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b"))
import replay_rounds  # noqa: E402  (the earlier folder's graphs and rounds)

dev = torch.device("cuda", 0)
TRITON = {1024: dict(tile=32, scan_tile=128, num_warps=8), 4096: dict(tile=64, scan_tile=512, num_warps=8)}
"""The planner's ``roles-lookback`` rows (impls/offsets_planner/triton_planner.py ``DESIGNS``)."""


def rows(bs):
    out = replay_rounds.floors_and_current()
    for epoch in (False, True):
        out.append(("triton", f"RL epoch_load {epoch:d}",
                    c._triton_candidate("roles-lookback", **TRITON[bs], joined=True,
                                        early_poll=True, epoch_load=epoch)[2]))
    if bs == 4096:
        for epoch in (False, True):
            out.append(("numba-cuda", f"warp 128 epoch_load {epoch:d}",
                        c._numba_candidate("warp-lookback", chunk=128, joint_repoll=True,
                                           epoch_load=epoch)[2]))
    return out


printed = []
real_print = print


def keep(*args, **kw):  # the medians, for the decision
    printed.append(" ".join(str(a) for a in args))
    real_print(*args, **kw)


replay_rounds.print = keep
bad = replay_rounds.run({bs: rows(bs) for bs in (1024, 4096)}, dev)


def median(bs, fw, label):
    for line in printed:
        parts = line.split()
        if int(parts[0]) == bs and parts[1] == fw and line.find(label) > 0:
            return float(parts[parts.index("median") + 1])
    raise LookupError((bs, fw, label))


won = {"triton": (median(4096, "triton", "RL epoch_load 1") <= median(4096, "triton", "RL epoch_load 0") - 0.02
                  and median(1024, "triton", "RL epoch_load 1") <= median(1024, "triton", "RL epoch_load 0") + 0.02),
       "numba-cuda": median(4096, "numba-cuda", "warp 128 epoch_load 1")
       <= median(4096, "numba-cuda", "warp 128 epoch_load 0") - 0.02}
real_print("DECISION " + " ".join(f"{k}={int(v and not bad)}" for k, v in won.items()))
sys.exit(1 if bad else 0)
