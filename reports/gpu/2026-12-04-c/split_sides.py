"""Which side of a look-back plan is slower at bs 1024 and 4096: the scan programs alone (the
planner's own kernel launched with its scan programs only: no seeds, a diagnostic, not a plan)
against the whole launch and the chain floor; and the look-back configs not swept before
(Triton scan programs of one or two warps, the exact slow carry instead of the look-back, Numba
one-warp blocks at 64-256 requests). Every graph replayed in turn (9 rounds of 200 replays behind
a sleep kernel); every candidate checked byte for byte against the current Numba planner (the
serving workload and two out-of-contract draws, and again after the replays); ``diag`` rows are
not plans and are not checked.

    python reports/gpu/2026-12-04-c/split_sides.py        # from the repository root, on a GPU
"""
import os
import sys

import torch

from impls.offsets_planner.harness.sweeps import one_pass_calls as c

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-04-b"))
import replay_rounds  # noqa: E402  (the earlier folder's graphs and rounds)

dev = torch.device("cuda", 0)
N, T = c._numba_candidate, c._triton_candidate


def triton_scan_only(tile, scan_tile, warps):
    """The Triton roles-lookback launch with its scan programs only (diagnostic)."""
    def make(kw):
        from impls.offsets_planner import triton_planner as tp, triton_roles_lookback as rl
        from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
        from impls.offsets_planner.validate_cache import lookup

        plan, buffers = lookup(kw)
        window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
        args = (*(kw[n] for n in REQUEST_INPUT_NAMES), *buffers.tensors, plan.bs,
                plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
                window, min(plan.verify_capacity, tp._INT64_MAX))
        block, stile, tile_, w, _grid = rl.shape(plan.bs, tile, scan_tile, warps)
        nscan = max(1, -(-plan.bs // stile))
        ws = rl.workspace(dev)
        return lambda: rl._roles_lookback_kernel[(nscan,)](
            *args[:11], ws, *args[11:], BLOCK=block, STILE=stile, TILE=tile_,
            HAS_LUT=plan.has_swa_lut, NPROG=max(2, block // stile), SLOW_CARRY=False,
            JOINED=True, EARLY_POLL=True, num_warps=w)
    return make


def numba_scan_only(chunk):
    """The Numba warp-lookback launch with its scan blocks only (diagnostic)."""
    def make(kw):
        from numba import cuda

        from impls.offsets_planner import numba_cuda_planner as nb, numba_one_pass as op
        from impls.offsets_planner.contract import REQUEST_INPUT_NAMES
        from impls.offsets_planner.validate_cache import lookup

        plan, buffers = lookup(kw)
        _blocks, threads, chunk_, items = op.launch_shape("warp-lookback", plan.bs, None, chunk)
        nscan = max(1, -(-plan.bs // chunk_))
        per_lane = -(-4 * nscan // 32)
        k = op.kernel("warp-lookback", items, threads, 1, False, per_lane, threads, 0, False, 0,
                      True)
        window, capacity = nb._int64_scalars(plan)
        ws = op.workspace(dev, "warp-lookback")
        table = buffers.tensors[0]
        tensors = (*(kw[n] for n in REQUEST_INPUT_NAMES), table.reshape(-1),
                   *buffers.tensors[1:])
        views = [t.data_ptr() for t in tensors] + [cuda.as_cuda_array(ws, sync=False)]
        scalars = (plan.bs, plan.lut_len, window, capacity, chunk_, *table.shape)

        def call():
            stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
            k[nscan, threads, stream](*views, *scalars)
        return call
    return make


def rows(bs):
    out = replay_rounds.floors_and_current()
    if bs == 4096:
        out += [("triton", "diag scans only 64/512/8", triton_scan_only(64, 512, 8)),
                ("triton", "RL 64/512/8 slow carry", T("roles-lookback", tile=64, scan_tile=512, num_warps=8, joined=True, early_poll=True, slow_carry=True)[2]),
                ("triton", "RL 64/1024/16", T("roles-lookback", tile=64, scan_tile=1024, num_warps=16, joined=True, early_poll=True)[2]),
                ("triton", "RL 64/128/1", T("roles-lookback", tile=64, scan_tile=128, num_warps=1, joined=True, early_poll=True)[2]),
                ("triton", "RL 32/128/1", T("roles-lookback", tile=32, scan_tile=128, num_warps=1, joined=True, early_poll=True)[2]),
                ("triton", "RL 64/256/2", T("roles-lookback", tile=64, scan_tile=256, num_warps=2, joined=True, early_poll=True)[2]),
                ("triton", "RL 128/512/4", T("roles-lookback", tile=128, scan_tile=512, num_warps=4, joined=True, early_poll=True)[2]),
                ("numba-cuda", "diag scans only warp 128", numba_scan_only(128)),
                ("numba-cuda", "warp-lookback 128", N("warp-lookback", chunk=128)[2]),
                ("numba-cuda", "warp-lookback 64", N("warp-lookback", chunk=64)[2]),
                ("numba-cuda", "warp-lookback 256", N("warp-lookback", chunk=256)[2]),
                ("numba-cuda", "RL 256/256 slow carry", N("roles-lookback", threads=256, chunk=256, fixed_chunk=True, slow_carry=True)[2])]
    else:
        out += [("triton", "diag scans only 32/128/8", triton_scan_only(32, 128, 8)),
                ("triton", "RL 32/128/1", T("roles-lookback", tile=32, scan_tile=128, num_warps=1, joined=True, early_poll=True)[2]),
                ("triton", "RL 32/256/2", T("roles-lookback", tile=32, scan_tile=256, num_warps=2, joined=True, early_poll=True)[2]),
                ("triton", "RL 32/512/4", T("roles-lookback", tile=32, scan_tile=512, num_warps=4, joined=True, early_poll=True)[2]),
                ("triton", "roles 32/8/2", T("roles", tile=32, num_warps=8, scans=2)[2]),
                ("numba-cuda", "diag scans only warp 128", numba_scan_only(128)),
                ("numba-cuda", "warp-lookback 128", N("warp-lookback", chunk=128)[2]),
                ("numba-cuda", "warp-lookback 64", N("warp-lookback", chunk=64)[2])]
    return out


ROWS = {bs: rows(bs) for bs in (1024, 4096)}
bad = replay_rounds.run({bs: [(fw, ("floor " + l) if l.startswith("diag") else l, m)
                              for fw, l, m in r] for bs, r in ROWS.items()}, dev)
sys.exit(1 if bad else 0)
