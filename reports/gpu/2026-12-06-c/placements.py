"""How much of a replay figure is where its buffers lie: both planners and their chain floors at
bs 1024 and 4096 on several buffer placements, each planner judged against the floor that ran on
the same buffers.

``../2026-12-06-b/`` found that rows whose output buffers lie elsewhere differ by 0.15-0.3 us
(designs without a workspace included). Here each placement is one set of buffers: the three
request tensors and the six outputs cloned behind a pad allocation of a drawn size (seeded; the
512 MiB table and the LUT stay shared), then the Triton chain floor (BLOCK 64, 2 warps), the
Numba chain floor (32 threads, raw pointers) and both planners' own launches are captured on that
set. Every graph is replayed in turn (``../2026-12-04-b/replay_rounds.py``: 9 rounds of 200
replays behind a sleep kernel); each planner's outputs are checked byte for byte against the
pure-Python planner's before its capture and after the replays. Printed per bs and planner: the
planner and its floor at each placement, their ratio, and the median, min and max of the ratios.

    python reports/gpu/2026-12-06-c/placements.py        # from the repository root, on a GPU
"""
import os
import random
import statistics
import sys

import torch

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
from impls.offsets_planner.contract import OUTPUT_NAMES, REQUEST_INPUT_NAMES  # noqa: E402
from impls.offsets_planner.harness.sweeps import one_pass, one_pass_calls as c  # noqa: E402
from impls.offsets_planner.python_planner import launch as python_launch  # noqa: E402

sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b")))
import replay_rounds  # noqa: E402

dev = torch.device("cuda", 0)
PLACEMENTS = 6
ROWS = (("triton", "floor", c._triton_chain(64, 2)), ("numba-cuda", "floor",
        c._numba_chain(32, "pointers")), ("triton", "planner", c.current("triton")[2]),
        ("numba-cuda", "planner", c.current("numba-cuda")[2]))
KEEP = []  # the pads, alive for the whole run (their blocks stay taken)


def placed(kw: dict, rng: random.Random) -> dict:
    """``kw`` with its request tensors and outputs cloned behind a pad of a drawn size."""
    KEEP.append(torch.empty(rng.randrange(1, 4096) * 512, dtype=torch.uint8, device=dev))
    return {k: v.clone() if k in OUTPUT_NAMES or k in REQUEST_INPUT_NAMES else v
            for k, v in kw.items()}


def want_of(kw: dict) -> dict:
    """The pure-Python planner's outputs for ``kw`` (on the CPU)."""
    cpu = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}
    python_launch(**cpu)
    return {n: cpu[n] for n in OUTPUT_NAMES}


rng = random.Random(20261206)
entries, bad, WANT = [], 0, {}
for bs in (1024, 4096):
    base = one_pass.workload(bs, dev)
    want = WANT[bs] = want_of(one_pass._copy(base))
    for p in range(PLACEMENTS):
        kw = placed(base, rng)
        for fw, role, make in ROWS:
            if role == "planner":
                got = one_pass.outputs_of(make, kw)
                diff = one_pass.difference(got, want)
                bad += diff is not None
                print(f"{bs} {fw} placement {p}: before capture {diff or 'same'}")
            entries.append((bs, fw, role, p, kw, replay_rounds.graph_of(make(kw))))
samples = replay_rounds.interleaved([e[5] for e in entries])
med = {(bs, fw, role, p): xs[len(xs) // 2] for (bs, fw, role, p, _kw, _g), xs
       in zip(entries, samples)}
for bs, fw, role, p, kw, _g in entries:
    if role == "planner":
        got = {n: kw[n].cpu() for n in OUTPUT_NAMES}
        diff = one_pass.difference(got, WANT[bs])
        bad += diff is not None
        if diff:
            print(f"{bs} {fw} placement {p}: after replays {diff}")
for bs in (1024, 4096):
    for fw in ("triton", "numba-cuda"):
        ratios = []
        for p in range(PLACEMENTS):
            plan, floor = med[(bs, fw, "planner", p)], med[(bs, fw, "floor", p)]
            ratios.append(plan / floor)
            print(f"{bs:5d} {fw:10s} placement {p}: planner {plan:.2f} us, floor {floor:.2f} us, "
                  f"x{plan / floor:.2f}")
        plans = [med[(bs, fw, "planner", p)] for p in range(PLACEMENTS)]
        floors = [med[(bs, fw, "floor", p)] for p in range(PLACEMENTS)]
        print(f"SUMMARY bs {bs} {fw}: ratio median {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}..{max(ratios):.2f}); planner median "
              f"{statistics.median(plans):.2f} us ({min(plans):.2f}..{max(plans):.2f}), floor "
              f"median {statistics.median(floors):.2f} us ({min(floors):.2f}..{max(floors):.2f})")
print(f"CHECKS {'all same' if not bad else f'{bad} differ'}")
sys.exit(1 if bad else 0)
