"""The Triton planner's scan programs alone at bs 4096: the default ``roles-lookback`` kernel
launched with only its scan programs (the grid cut to ``ceil(bs / scan tile)``: no seed program
runs, the seed slots stay unwritten), at scan tiles of 128, 256 and 512 lanes, replayed in turn
with the chain floors and both current planners (``../2026-12-04-b/replay_rounds.py``). Each
scan-only row's offsets, totals and scalars (not its seed slots) are checked against the
pure-Python planner's after its replays. ``--narrow``: scan tiles of 64 and 128 lanes with 2 or
4 warps, alone and with the seed programs (whole plans, every output checked).

    python reports/gpu/2026-12-06-f/scan_only.py [--narrow]   # from the repository root, on a GPU
"""
import os
import sys

import torch

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from impls.offsets_planner import triton_planner as tp  # noqa: E402  (first: the mode)
from impls.offsets_planner import triton_roles_lookback as trl  # noqa: E402
from impls.offsets_planner.contract import OUTPUT_NAMES, REQUEST_INPUT_NAMES  # noqa: E402
from impls.offsets_planner.harness.sweeps import one_pass  # noqa: E402
from impls.offsets_planner.python_planner import launch as python_launch  # noqa: E402
from impls.offsets_planner.validate_cache import lookup  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "reports", "gpu", "2026-12-04-b"))
import replay_rounds  # noqa: E402

BS = 4096
SHAPES = ((128, 4), (256, 4), (256, 8), (512, 8))
"""``(scan tile, warps)`` of the scan-only rows (the first call)."""
WHOLE = ()
"""``(seed tile, scan tile, warps)`` of whole-plan rows of the same design (the second call)."""
if "--narrow" in sys.argv:  # the second call: narrower scan programs, alone and with the seeds
    SHAPES = ((64, 2), (64, 4), (128, 2), (128, 4))
    WHOLE = ((64, 128, 4), (128, 128, 4), (64, 64, 2), (64, 64, 4), (64, 512, 8))
CHECKED = [n for n in OUTPUT_NAMES if n != "out_write_seed_slot_indices"]


def scan_only(scan_tile: int, num_warps: int):
    def make(kw):
        plan, buffers = lookup(kw)
        window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
        block, stile, tile, warps, _grid = trl.shape(plan.bs, 64, scan_tile, num_warps)
        args = (*(kw[n] for n in REQUEST_INPUT_NAMES), *buffers.tensors,
                trl.workspace(buffers.device), plan.bs, plan.req_to_token_stride0,
                plan.max_reqs, plan.max_seq_len, plan.lut_len, window,
                min(plan.verify_capacity, tp._INT64_MAX))
        grid = (max(1, -(-plan.bs // stile)),)
        return lambda: trl._roles_lookback_kernel[grid](
            *args, BLOCK=block, STILE=stile, TILE=tile, HAS_LUT=plan.has_swa_lut,
            NPROG=max(2, block // stile), SLOW_CARRY=False, JOINED=True, EARLY_POLL=True,
            num_warps=warps)
    return make


def whole(tile: int, scan_tile: int, num_warps: int):
    """The whole plan in the same design (``triton_one_pass.plan_launch``, the planner's flags)."""
    def make(kw):
        from impls.offsets_planner.triton_one_pass import plan_launch

        return lambda: plan_launch(design="roles-lookback", tile=tile, scan_tile=scan_tile,
                                   num_warps=num_warps, joined=True, early_poll=True, **kw)
    return make


if __name__ == "__main__":
    dev = torch.device("cuda", 0) if tp.MODE == "gpu" else torch.device("cpu")
    kw = one_pass.workload(BS, dev)
    cpu = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in one_pass._copy(kw).items()}
    python_launch(**cpu)
    rows, outs = [], []
    for scan_tile, warps in SHAPES:
        out = one_pass._copy(kw)
        rows.append((f"scan only {scan_tile} lanes {warps} warps", scan_only(scan_tile, warps), out))
    for tile, scan_tile, warps in WHOLE:
        out = one_pass._copy(kw)
        rows.append((f"whole, seed {tile} scan {scan_tile} {warps} warps",
                     whole(tile, scan_tile, warps), out))
    if dev.type != "cuda":
        for label, make, out in rows:
            make(out)()
            names = OUTPUT_NAMES if label.startswith("whole") else CHECKED
            print(label, [n for n in names if not torch.equal(out[n].cpu(), cpu[n])] or "same")
        sys.exit(0)
    base = [(fw, label, make) for fw, label, make in replay_rounds.floors_and_current()]
    graphs = [replay_rounds.graph_of(make(one_pass._copy(kw))) for _fw, _l, make in base]
    graphs += [replay_rounds.graph_of(make(out)) for _label, make, out in rows]
    samples = replay_rounds.interleaved(graphs)
    labels = [f"{fw} {label}" for fw, label, _m in base] + [label for label, _m, _o in rows]
    bad = 0
    for i, (label, xs) in enumerate(zip(labels, samples)):
        check = "-"
        if i >= len(base):
            out = rows[i - len(base)][2]
            names = OUTPUT_NAMES if labels[i].startswith("whole") else CHECKED
            wrong = [n for n in names if not torch.equal(out[n].cpu(), cpu[n])]
            check = f"differs in {', '.join(wrong)}" if wrong else "same"
            bad += bool(wrong)
        print(f"{BS:5d} {label:40s} median {xs[len(xs) // 2]:.2f} min {xs[0]:.2f} "
              f"max {xs[-1]:.2f}  after replays: {check}")
    print(f"rows that differ: {bad}")
    sys.exit(1 if bad else 0)
