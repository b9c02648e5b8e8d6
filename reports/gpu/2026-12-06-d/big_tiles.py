"""Fewer, wider look-back scan programs for the Triton planner above bs 2048.

The sweeps of 2026-12-03 (``../2026-12-03-e/``) tried scan tiles of 128-512 lanes at bs 4096 and
found the wider the faster there (4.16 / 3.64 / 3.50 us for 128 / 256 / 512), but none wider than
512: the planner's row for bs 2049-4096 is 512-lane scan tiles with 8 warps (8 scan programs).
Here: scan tiles of 1024 and 2048 lanes (4 and 2 scan programs, so fewer earlier tiles' words to
wait for) with 8, 16 and 32 warps and seed tiles of 64 and 512 lanes, at bs 2560 and 4096 (both in
that row), against the current planner and the chain floors, every row replayed in turn
(``../2026-12-04-b/replay_rounds.py``: 9 rounds of 200 replays behind a sleep kernel; each
candidate checked byte for byte against the Numba planner on the serving workload and two
out-of-contract draws, before and after its replays). A config that does not compile is printed
and left out. The last line, ``DECISION triton=none`` or ``DECISION triton=SEED,SCAN,WARPS``,
names the config whose median beats the current planner by 0.1 us or more at bs 4096 and is no
slower at bs 2560 (no printed line is parsed for anything else).

    python reports/gpu/2026-12-06-d/big_tiles.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c  # noqa: E402

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b")))
import replay_rounds  # noqa: E402

dev = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
BATCHES = (2560, 4096)
CONFIGS = [(seed, scan, warps) for scan in (1024, 2048) for warps in (8, 16, 32)
           for seed in (64, 512)]
"""``(seed tile, scan tile, num_warps)`` of each candidate."""


def candidate(seed: int, scan: int, warps: int):
    label = f"seed {seed} scan {scan} w{warps}"
    make = c._triton_candidate("roles-lookback", tile=seed, scan_tile=scan, num_warps=warps,
                               joined=True, early_poll=True)[2]
    return ("triton", label, make)


def compiles(row) -> bool:
    """Whether the row's call runs on the serving workload at every batch (printed if not)."""
    try:
        for bs in BATCHES:
            one_pass.outputs_of(row[2], one_pass.workload(bs, dev))
        return True
    except Exception as exc:  # noqa: BLE001 - a config Triton refuses is left out, and said so
        print(f"left out {row[1]}: {type(exc).__name__}: {str(exc)[:200]}")
        return False


rows_of = [candidate(*cfg) for cfg in CONFIGS]
rows_of = [r for r in rows_of if compiles(r)]
MEDIANS: dict = {}
if dev.type == "cuda":
    bad = replay_rounds.run({bs: replay_rounds.floors_and_current() + rows_of for bs in BATCHES},
                            dev, MEDIANS)
else:  # a CPU dry run: the byte checks only
    bad = 0
    for bs in BATCHES:
        want = one_pass.outputs_of(c.current("numba-cuda")[2], one_pass.workload(bs, dev))
        for fw, label, make in rows_of:
            diff = one_pass.difference(one_pass.outputs_of(make, one_pass.workload(bs, dev)),
                                       want)
            bad += diff is not None
            print(f"{bs} {label}: {diff or 'same'}")
best = None
if dev.type == "cuda" and not bad:
    now = {bs: MEDIANS[(bs, "triton", "current")] for bs in BATCHES}
    for (seed, scan, warps), (_fw, label, _m) in zip(CONFIGS, [candidate(*x) for x in CONFIGS]):
        got = {bs: MEDIANS.get((bs, "triton", label)) for bs in BATCHES}
        if None in got.values():
            continue
        if got[4096] <= now[4096] - 0.1 and got[2560] <= now[2560] + 0.02:
            if best is None or got[4096] < best[0]:
                best = (got[4096], seed, scan, warps)
    print(f"current triton: bs 2560 {now[2560]:.2f} us, bs 4096 {now[4096]:.2f} us")
print("DECISION triton=" + (f"{best[1]},{best[2]},{best[3]}" if best else "none"))
sys.exit(1 if bad else 0)
