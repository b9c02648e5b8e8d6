"""Does a thread-block cluster make the bs 4096 scan cheaper? A one-launch Triton plan whose scan
is one program of ``ROWS x COLS`` lanes (ROWS = COLS... 4096 in all) launched with ``num_ctas``
in (1, 2, 4, 8): on sm_90 Triton may split that program over a cluster of CTAs and exchange the
row totals through distributed shared memory (cross-CTA reductions and scans came to Triton in
2026; whether the device's Triton 3.6 has them is what this finds), with no look-back through
global memory. The seed programs are the default planner's (``triton_roles._seed_part``, 512
lanes a program, also split over the cluster).

Each candidate is checked byte for byte against the current Numba planner on the serving
workload and two out-of-contract draws, then replayed in turn with the chain floors and both
current planners (``../2026-12-04-b/replay_rounds.py``), at bs 1024 and 4096. A candidate that
fails to compile prints its error and is left out.

    python reports/gpu/2026-12-06-f/cluster_scan.py [--two-d]  # from the repository root, on a GPU
"""
import os
import sys

import torch

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, ROOT)
from impls.offsets_planner import triton_planner as tp  # noqa: E402  (first: the mode)
from impls.offsets_planner import triton_roles  # noqa: E402
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES  # noqa: E402
from impls.offsets_planner.validate_cache import lookup  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "reports", "gpu", "2026-12-04-b"))
import replay_rounds  # noqa: E402

triton, tl = tp.triton, tp.tl
SEED_TILE = 512


@triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
def _cluster_kernel(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
                    verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
                    bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64, max_seq_len: tl.int64,
                    lut_len: tl.int64, window: tl.int64, capacity: tl.int64,
                    ROWS: tl.constexpr, COLS: tl.constexpr, TILE: tl.constexpr,
                    HAS_LUT: tl.constexpr):
    pid = tl.program_id(0)
    if pid == 0:
        lane = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
        live = lane < bs
        _r, _p, _a, v, w = tp._lengths(rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        v_rows = tl.sum(v, axis=1)
        w_rows = tl.sum(w, axis=1)
        v_carry = tl.cumsum(v_rows, axis=0) - v_rows
        w_carry = tl.cumsum(w_rows, axis=0) - w_rows
        tl.store(verify_ptr + lane, tl.cumsum(v, axis=1) - v + v_carry[:, None], mask=live)
        tl.store(write_ptr + lane, tl.cumsum(w, axis=1) - w + w_carry[:, None], mask=live)
        total_v = tl.sum(v_rows, axis=0)
        tl.store(verify_ptr + bs, total_v)
        tl.store(write_ptr + bs, tl.sum(w_rows, axis=0))
        tl.store(num_valid_ptr, tl.minimum(total_v, capacity).to(tl.int32))
        tl.store(enable_ptr, tl.where(total_v > capacity, 0, 1).to(tl.int32))
        tl.store(reqs_ptr, bs.to(tl.int32))
    else:
        triton_roles._seed_part(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr, seed_ptr,
                                pid - 1, bs, stride0, max_reqs, max_seq_len, lut_len, TILE,
                                HAS_LUT)


@triton.jit(do_not_specialize=tp._INT_ARGS, do_not_specialize_on_alignment=tp._PTR_ARGS)
def _cluster_2d_kernel(rpi_ptr, prefix_ptr, extend_ptr, table_ptr, lut_ptr,
                       verify_ptr, write_ptr, seed_ptr, num_valid_ptr, enable_ptr, reqs_ptr,
                       bs: tl.int64, stride0: tl.int64, max_reqs: tl.int64,
                       max_seq_len: tl.int64, lut_len: tl.int64, window: tl.int64,
                       capacity: tl.int64, ROWS: tl.constexpr, COLS: tl.constexpr,
                       TILE: tl.constexpr, HAS_LUT: tl.constexpr):
    # Every tensor 2-D (Triton 3.6's CTA planning refuses a 1-D layout with num_ctas > 1: the
    # first sweep of this script): the row totals keep their axis, the totals are [1, 1]; the
    # seed branch's names are its own (a name bound in both branches of an ``if`` must keep one
    # type in Triton).
    pid = tl.program_id(0)
    if pid == 0:
        lane = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
        live = lane < bs
        _r, _p, _a, v, w = tp._lengths(rpi_ptr, prefix_ptr, extend_ptr, lane, live, window)
        v_rows = tl.sum(v, axis=1, keep_dims=True)
        w_rows = tl.sum(w, axis=1, keep_dims=True)
        v_carry = tl.cumsum(v_rows, axis=0) - v_rows
        w_carry = tl.cumsum(w_rows, axis=0) - w_rows
        tl.store(verify_ptr + lane, tl.cumsum(v, axis=1) - v + v_carry, mask=live)
        tl.store(write_ptr + lane, tl.cumsum(w, axis=1) - w + w_carry, mask=live)
        one = tl.zeros((1, 1), dtype=tl.int64)
        total_v = tl.sum(v_rows, axis=0, keep_dims=True)
        tl.store(verify_ptr + bs + one, total_v)
        tl.store(write_ptr + bs + one, tl.sum(w_rows, axis=0, keep_dims=True))
        tl.store(num_valid_ptr + one, tl.minimum(total_v, capacity).to(tl.int32))
        tl.store(enable_ptr + one, tl.where(total_v > capacity, 0, 1).to(tl.int32))
        tl.store(reqs_ptr + one, (one + bs).to(tl.int32))
    else:
        s_lane = (pid - 1).to(tl.int64) * TILE + (tl.arange(0, ROWS)[:, None] * (TILE // ROWS)
                                                 + tl.arange(0, TILE // ROWS)[None, :])
        s_live = s_lane < bs
        s_zero = (s_lane * 0).to(tl.int64)
        s_row = tl.load(rpi_ptr + s_lane, mask=s_live, other=0)
        s_prefix = tl.load(prefix_ptr + s_lane, mask=s_live, other=0)
        s_extend = tl.load(extend_ptr + s_lane, mask=s_live, other=0)
        s_seed = s_live & (s_row != 0) & (s_prefix > 0) & (s_extend > 0) & (s_row >= 0)
        s_seed = s_seed & (s_row < s_zero + max_reqs) & (s_zero + max_seq_len > 0)
        s_pos = tl.minimum(s_prefix - 1, s_zero + (max_seq_len - 1))
        s_slot = tl.load(table_ptr + (s_row * stride0 + s_pos), mask=s_seed,
                         other=0).to(tl.int64)
        if HAS_LUT:
            s_translate = s_seed & (s_slot >= 0)
            s_index = tl.minimum(s_slot, s_zero + (lut_len - 1))
            s_slot = tl.where(s_translate, tl.load(lut_ptr + s_index, mask=s_translate, other=0), s_slot)
        tl.store(seed_ptr + s_lane, tl.where(s_seed, s_slot, s_zero - 1), mask=s_live)


def candidate(num_ctas: int, num_warps: int, rows: int, kernel=None):
    def make(kw):
        plan, buffers = lookup(kw)
        window = 0 if plan.swa_window_size <= 0 else min(plan.swa_window_size, tp._INT64_MAX)
        block = max(32, 1 << max(0, plan.bs - 1).bit_length())
        args = (*(kw[n] for n in REQUEST_INPUT_NAMES), *buffers.tensors, plan.bs,
                plan.req_to_token_stride0, plan.max_reqs, plan.max_seq_len, plan.lut_len,
                window, min(plan.verify_capacity, tp._INT64_MAX))
        grid = (1 + -(-plan.bs // SEED_TILE),)
        return lambda: (kernel or _cluster_kernel)[grid](*args, ROWS=rows, COLS=block // rows,
                                             TILE=SEED_TILE, HAS_LUT=plan.has_swa_lut,
                                             num_warps=num_warps, num_ctas=num_ctas)
    return make


CONFIGS = [(nc, nw, False) for nc, nw in ((1, 16), (1, 32), (2, 16), (4, 8), (8, 8), (8, 4))]
"""``(num_ctas, num_warps, 2-D kernel)``: the first sweep (every one with num_ctas > 1 refused
by Triton 3.6's CTA planning: "parent layout must have at least rank >= 2"); ``--two-d`` sweeps
the 2-D kernel instead."""
if "--two-d" in sys.argv:
    CONFIGS = [(nc, nw, True) for nc, nw in ((1, 16), (2, 16), (4, 8), (8, 8), (8, 4))]

if __name__ == "__main__":
    dev = torch.device("cuda", 0) if tp.MODE == "gpu" else torch.device("cpu")
    rows_by_bs = {}
    for bs in (1024, 4096):
        rows = list(replay_rounds.floors_and_current())
        for num_ctas, num_warps, two_d in CONFIGS:
            label = f"cluster{' 2-D' if two_d else ''} ctas {num_ctas} warps {num_warps}"
            make = candidate(num_ctas, num_warps, max(8, num_ctas),
                             _cluster_2d_kernel if two_d else None)
            try:  # compile (and run once) before the sweep
                from impls.offsets_planner.harness.sweeps import one_pass
                one_pass.outputs_of(make, one_pass.workload(bs, dev))
            except Exception as exc:  # noqa: BLE001 - a config Triton refuses: report, go on
                print(f"{bs} {label}: {type(exc).__name__}: {' | '.join(str(exc).splitlines()[:6])[:600]}")
                continue
            rows.append(("triton", label, make))
        rows_by_bs[bs] = rows
    if dev.type != "cuda":
        sys.exit(0)
    bad = replay_rounds.run(rows_by_bs, dev)
    print(f"candidate rows that differ: {bad}")
    sys.exit(1 if bad else 0)
