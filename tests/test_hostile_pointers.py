"""Hostile review of the raw-pointer kernels (the Numba planner's ``roles``,
``blocked``, ``roles-lookback``; the ``warp-lookback`` candidate; the ``chain-numba`` floor's
pointer kernel) and what the new bench code lets a planner under test reach.

On the GPU a pointer has no bounds check and no negative wraparound, so every index a hazard input
can drive outside [0, n) is an out-of-bounds access there. Here (the CUDA simulator) each kernel is
launched directly on ``Strict`` arrays (tests/test_numba_roles_default_attacks.py), which raise on
any scalar index outside [0, n), negative included, with outputs cut to exactly their defined
regions; every output is compared byte for byte with the pure-Python planner
(impls/offsets_planner/python_planner.py). Kernels of the GPU's shapes the simulator's design
table does not run (``roles-lookback``, ``warp-lookback`` above bs 1024; the GPU's 2-scan
``roles`` and 1-a-thread ``blocked``) are built directly.

Expected values are the Python planner's (or torch's for the chain floor), never read back from
the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.test_numba_cuda_planner import (  # noqa: F401 (module-level skip when unavailable)
    DEVICE, IN, OUT, POISON32, POISON64, check_against_reference, clone)
from tests.test_numba_roles_default_attacks import Strict, reference, strict
from impls.offsets_planner import numba_cuda_kernel
from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import python_planner
from impls.offsets_planner.numba_roles_kernel import build_roles_kernel
from impls.offsets_planner.numba_roles_lookback_kernel import (
    SET_WORDS, SETS_AT, WORKSPACE_LEN, build_roles_lookback_kernel)
from impls.offsets_planner.numba_warp_lookback_kernel import build_warp_lookback_kernel
from impls.offsets_planner.validate import zero_lut

cuda = nb.cuda
sim_only = pytest.mark.skipif(nb.MODE != "simulator", reason="Strict arrays need the simulator")
pytestmark = [sim_only,
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
SIZES = lambda bs: (bs + 1, bs + 1, bs, 1, 1, 1)  # noqa: E731 - the defined regions


# ---- building launcher arguments by hand --------------------------------------------------------

def make_kw(table: torch.Tensor, lut: torch.Tensor | None, rpi, prefix, extend, *, window: int = 0,
            cap: int = 1 << 40, write_cap: int | None = None) -> dict:
    """Launcher kwargs (spec section 3) with poisoned outputs; write capacity ``bs`` unless
    given (so out_write_offsets is exactly bs + 1 long)."""
    t = lambda v: torch.tensor(list(v), dtype=torch.int64, device=DEVICE)  # noqa: E731
    rpi, prefix, extend = t(rpi), t(prefix), t(extend)
    bs = rpi.shape[0]
    wc = bs if write_cap is None else write_cap
    kw = dict(
        req_pool_indices=rpi, prefix_lens=prefix, extend_seq_lens=extend, req_to_token=table,
        full_to_swa_index_mapping=lut, swa_window_size=window, verify_capacity=cap,
        out_verify_offsets_scratch=torch.full((4097,), POISON64, dtype=torch.int64, device=DEVICE),
        out_write_offsets=torch.full((wc + 1,), POISON64, dtype=torch.int64, device=DEVICE),
        out_write_seed_slot_indices=torch.full((wc,), POISON64, dtype=torch.int64, device=DEVICE),
        out_verify_num_valid=torch.full((1,), POISON32, dtype=torch.int32, device=DEVICE),
        out_verify_enable=torch.full((1,), POISON32, dtype=torch.int32, device=DEVICE),
        out_write_num_valid_reqs=torch.full((1,), POISON32, dtype=torch.int32, device=DEVICE))
    return kw


def table_of(rows: int, cols: int, seed: int = 0, lo: int = -8, hi: int = 200) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, (rows, cols), generator=g, dtype=torch.int32).to(DEVICE)


def lut_of(n: int, seed: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-(1 << 40), 1 << 40, (n,), generator=g, dtype=torch.int64).to(DEVICE)


def padded(values: list, bs: int, fill) -> list:
    return (list(values) * (bs // max(len(values), 1) + 1))[:bs] if values else [fill] * bs


# ---- the direct Strict launch -------------------------------------------------------------------

def run_strict(kernel, kw: dict, blocks: int, threads: int, chunk: int,
               ws: np.ndarray | None = None) -> np.ndarray | None:
    """``kernel`` on Strict copies (inputs, the flat table, the LUT, exact-size outputs); with
    ``ws`` None a workspace that may not be touched, else a Strict copy of ``ws`` (returned after
    the launch). Every output equals the Python planner's, no input written."""
    plan, buffers = nb.validate_arguments(kw)  # the validator accepts what follows
    bs = plan.bs
    ref = reference(kw)
    table, lut = buffers.tensors[:2]
    inputs = [strict(kw[n]) for n in IN[:3]] + [strict(table.reshape(-1)), strict(lut)]
    before = [a.view(np.ndarray).copy() for a in inputs]
    outs = [strict(kw[name][:n]) for name, n in zip(OUT, SIZES(bs))]
    w = (strict(zero_lut(buffers.device), forbidden=True) if ws is None
         else np.ascontiguousarray(ws).copy().view(Strict))
    kernel[blocks, threads](*inputs, *outs, w, bs, plan.lut_len, *nb._int64_scalars(plan), chunk,
                            *table.shape)
    for name, n, a in zip(OUT, SIZES(bs), outs):
        assert np.array_equal(a.view(np.ndarray), ref[name][:n].cpu().numpy()), (
            name, bs, a.view(np.ndarray)[:8], ref[name][:8])
    for name, a, b in zip(IN, inputs, before):
        assert np.array_equal(a.view(np.ndarray), b), name
    if ws is None:
        assert w.view(np.ndarray).tolist() == [0]
        return None
    return w.view(np.ndarray).copy()


_BUILT: dict = {}


def _jit(key, build):
    if key not in _BUILT:
        _BUILT[key] = cuda.jit(build())
    return _BUILT[key]


def pow2_at_least(n: int) -> int:
    return 1 << (max(n, 1) - 1).bit_length()


def roles_gpu(bs: int):
    """The GPU's small roles row (64 threads, chunk 64, 2 scan blocks) built directly."""
    items = pow2_at_least(-(-bs // 64))
    k = _jit(("roles", items), lambda: build_roles_kernel(
        use_shuffle=False, padding=0, no_seed=-1, max_threads=64, items=items, scans=2))
    return k, -(-bs // 64) + 2, 64, 64


def blocked_gpu(bs: int):
    """The GPU's blocked shape (chunk = threads, one request a thread), 64 threads."""
    k = _jit(("blocked-gpu",), lambda: numba_cuda_kernel.build_kernel(
        use_shuffle=False, padding=0, no_seed=-1, max_threads=64, items=1))
    return k, max(1, -(-bs // 64)), 64, 64


def roles_lookback(bs: int, *, chunk: int = 256, largest: int = 4096, slow: bool = False):
    """The GPU's roles-lookback row (chunk 256 compiled in, seed tile = threads) with the
    simulator's 32 threads (8 requests a scan thread); per_lane for ``largest``."""
    items = pow2_at_least(-(-chunk // 32))
    per_lane = -(-4 * -(-largest // chunk) // 32)
    k = _jit(("rl", chunk, per_lane, slow), lambda: build_roles_lookback_kernel(
        use_shuffle=False, padding=0, no_seed=-1, max_threads=32, items=items,
        poll=nb._plain_read, per_lane=per_lane, seed_tile=32, fixed_chunk=chunk,
        slow_carry=slow))
    return k, max(1, -(-bs // chunk)) + -(-bs // 32), 32, chunk


def warp_lookback(bs: int, *, chunk: int = 256, per_lane: int | None = None,
                  slow: bool = False, count_spins: bool = False):
    """The warp-lookback candidate as numba_one_pass.plan_launch builds it (per_lane from this
    launch's scan blocks unless given)."""
    items = chunk // 32
    nscan = max(1, -(-bs // chunk))
    per_lane = per_lane or -(-4 * nscan // 32)
    k = _jit(("wl", items, per_lane, slow, count_spins), lambda: build_warp_lookback_kernel(
        use_shuffle=False, padding=0, no_seed=-1, items=items, poll=nb._plain_read,
        per_lane=per_lane, slow_carry=slow, count_spins=count_spins))
    return k, nscan + -(-bs // 32), 32, chunk


def default_sim(bs: int):
    blocks, threads, chunk, key = nb.launch_shape(bs)
    return nb.compiled(key), blocks, threads, chunk


NO_WS = ("default", "roles-gpu", "blocked-gpu")
ALL = NO_WS + ("roles-lookback", "warp-lookback")
_SHAPES = {"default": default_sim, "roles-gpu": roles_gpu, "blocked-gpu": blocked_gpu,
           "roles-lookback": roles_lookback, "warp-lookback": warp_lookback}


def fresh_ws() -> np.ndarray:
    return np.zeros(WORKSPACE_LEN, dtype=np.int64)


def run_shape(shape: str, kw: dict, ws: np.ndarray | None = None):
    bs = kw["req_pool_indices"].shape[0]
    kernel, blocks, threads, chunk = _SHAPES[shape](bs)
    if shape in ("roles-lookback", "warp-lookback"):
        return run_strict(kernel, kw, blocks, threads, chunk, fresh_ws() if ws is None else ws)
    return run_strict(kernel, kw, blocks, threads, chunk)


def ws_invariant(ws: np.ndarray, epoch_before: int) -> None:
    """After a look-back launch: epoch one further, ticket count 0, next set all zero."""
    assert int(ws[0]) == (epoch_before + 1) << 16, int(ws[0])
    nxt = SETS_AT + ((epoch_before + 1) & 1) * SET_WORDS
    assert not ws[nxt:nxt + SET_WORDS].any()


def through_launch(kw: dict) -> None:
    """The planner's own launch (nb.launch) against the Python planner on identical copies,
    poison past the regions kept."""
    ref, got = clone(kw), clone(kw)
    python_planner.launch(**ref)
    nb.launch(**got)
    for name in OUT:
        assert torch.equal(got[name].cpu(), ref[name].cpu()), (name, got[name][:8], ref[name][:8])
    for name in IN:
        if kw[name] is not None:
            assert torch.equal(got[name], kw[name]), name


# ======== 1. tables at the edges =================================================================

EDGE_ROWS = [-1, 0, 1, 2, 3, 4, 5, I64_MAX, I64_MIN, -4]


@pytest.mark.parametrize("shape", ALL)
@pytest.mark.parametrize("rows,cols", [(0, 6), (4, 0), (0, 0), (1, 0), (0, 1)])
def test_empty_tables_every_kernel(shape, rows, cols):
    """A table with 0 rows, 0 columns or both (contiguous, stride(0) positive: the validator
    accepts each), requests that would read it if it had entries (rows -1..5, prefix 1 and huge,
    extend 1): no kernel may compute an index into it."""
    bs = 40
    kw = make_kw(table_of(rows, cols), lut_of(3), padded(EDGE_ROWS, bs, 1),
                 padded([1, 2, 7, I64_MAX, 1 << 40, -3], bs, 1), padded([1, 1, 5, -1, 0], bs, 1),
                 window=5)
    ws = run_shape(shape, kw)
    if ws is not None:
        ws_invariant(ws, 0)
    through_launch(kw)


@pytest.mark.parametrize("shape", ALL)
def test_one_row_table_with_an_odd_stride(shape):
    """rows == 1: torch calls a (1, 7) table with stride (1000, 1) contiguous, so the validator
    accepts stride0 = 1000 while the kernels index row * cols. Row 0 is padding, so every active
    row is outside the table; also a (2, 1) table whose row stride is 1 (cols == 1)."""
    odd = torch.empty_strided((1, 7), (1000, 1), dtype=torch.int32, device=DEVICE)
    odd.copy_(torch.arange(7, dtype=torch.int32).reshape(1, 7))
    assert odd.is_contiguous() and odd.stride(0) == 1000
    bs = 24
    kw = make_kw(odd, None, padded([0, 1, -1, 2], bs, 0), padded([1, 7, 8, 100], bs, 1),
                 padded([1, 2], bs, 1))
    run_shape(shape, kw)
    through_launch(kw)
    col = torch.empty_strided((2, 1), (1, 5), dtype=torch.int32, device=DEVICE)
    col.copy_(torch.tensor([[11], [22]], dtype=torch.int32))
    assert col.is_contiguous()
    kw = make_kw(col, lut_of(30), padded([1, 0, 1, 2, -1], bs, 1), padded([1, 5, 1 << 50], bs, 1),
                 padded([1, 3], bs, 1), window=2)
    run_shape(shape, kw)
    through_launch(kw)


@pytest.mark.parametrize("kind", ["row-slice", "flat-offset"])
def test_table_is_a_view_with_a_storage_offset(kind):
    """A contiguous table view that starts inside a larger storage (rows 3..6 of a (10, 6)
    table; a (4, 6) view of a flat buffer at element 5): the planner's launch (simulator: the
    view reshaped), the GPU packing (the table cell must be the view's data pointer, rows and
    cols its shape) and every kernel read from the view's start, at every row of it, with the
    rows past the view never read (the Python planner reads the view)."""
    if kind == "row-slice":
        big = torch.arange(60, dtype=torch.int32, device=DEVICE).reshape(10, 6)
        table = big[3:7]
    else:
        flat = torch.arange(5 + 24 + 40, dtype=torch.int32, device=DEVICE)
        table = flat[5:29].view(4, 6)
    assert table.is_contiguous() and table.storage_offset() > 0
    bs = 33
    kw = make_kw(table, lut_of(100), padded([1, 2, 3, 4, 5, 0, -1], bs, 1),
                 padded([1, 3, 6, 7, 1 << 33, -2], bs, 1), padded([1, 2, 0], bs, 1), window=4)
    through_launch(kw)
    plan, buffers = nb.validate_arguments(kw)
    ws = nb.lookback_kernel.workspace(buffers.device)
    params = nb.packed_launch.pointer_params((kw["req_pool_indices"], kw["prefix_lens"], kw["extend_seq_lens"],
                         *buffers.tensors, ws), bs, plan.lut_len, *nb._int64_scalars(plan), 64)
    assert params[3] == table.data_ptr() != table.untyped_storage().data_ptr()
    assert params[-2:] == [4, 6]
    for shape in ALL:
        run_shape(shape, kw)


# ======== 2. request values at every guard =======================================================

@pytest.mark.parametrize("shape", ALL)
def test_req_pool_indices_at_every_guard(shape):
    """Rows I64_MIN, -rows, -1, 0 (padding), 1, rows - 1, rows, rows + 1, I64_MAX (row * cols
    overflows int64 for I64_MAX if computed before the guard), each with a prefix and a write."""
    table = table_of(5, 9, seed=3)
    rows = [I64_MIN, -5, -1, 0, 1, 4, 5, 6, I64_MAX, (1 << 62) + 1, -(1 << 62)]
    bs = 44
    kw = make_kw(table, lut_of(50), padded(rows, bs, 1), padded([1, 9, 10, 4, 1 << 61], bs, 1),
                 padded([1, 3, 1, 7], bs, 1), window=3)
    run_shape(shape, kw)
    through_launch(kw)


@pytest.mark.parametrize("shape", ALL)
@pytest.mark.parametrize("window", [0, -5, 1, 3, I64_MAX, 1 << 70, -(1 << 70)])
def test_prefix_extremes_with_every_window(shape, window):
    """prefix I64_MIN, I64_MIN + 1, -1, 0, 1, cols, cols + 1, 2^62, I64_MAX (p - 1 and the
    column clamp; min(p, W) without overflow), W from -2^70 to 2^70 (clamped on the way in),
    extend I64_MIN..I64_MAX; totals wrap int64 as the Python planner's do."""
    table = table_of(4, 5, seed=5)
    pre = [I64_MIN, I64_MIN + 1, -1, 0, 1, 5, 6, 1 << 62, I64_MAX]
    ext = [1, I64_MAX, I64_MIN, 0, -1, 2, 1, 1, 3]
    bs = 36
    kw = make_kw(table, lut_of(20), padded([1, 2, 3, 1, 2, 3, 0, 1, 2], bs, 1), padded(pre, bs, 1),
                 padded(ext, bs, 1), window=window)
    run_shape(shape, kw)
    through_launch(kw)


@pytest.mark.parametrize("shape", ALL)
def test_lut_of_length_one_and_extreme_slots(shape):
    """A LUT of one entry (every non-negative slot clamps to index 0) against slots 0, 1,
    I32_MAX, -1, I32_MIN in the table; and the same table without a LUT (the stand-in zero LUT
    must not be read)."""
    table = torch.tensor([[0, 1, I32_MAX], [-1, I32_MIN, 5], [7, 8, 9]], dtype=torch.int32,
                         device=DEVICE)
    bs = 30
    rpi = padded([1, 1, 1, 2, 2, 2, 1, 2], bs, 1)
    pre = padded([1, 2, 3, 1, 2, 3, 100, 1 << 62], bs, 1)
    for lut, window in ((torch.tensor([777], dtype=torch.int64, device=DEVICE), 2), (None, 0)):
        kw = make_kw(table, lut, rpi, pre, padded([1], bs, 1), window=window)
        run_shape(shape, kw)
        through_launch(kw)


# ======== 3. bs and capacity at the edges ========================================================

@pytest.mark.parametrize("bs", [0, 1, 1024, 1025, 4096])
def test_bs_edges_exact_capacity_default_launch(bs):
    """bs 0, 1, 1024 (last roles), 1025 (first blocked here / roles-lookback on the GPU), 4096,
    with write capacity exactly bs (no slack past the defined regions) and hazard values: the
    planner's own launch, and the simulator's default kernel on Strict arrays."""
    g = torch.Generator().manual_seed(bs)
    r = lambda lo, hi: torch.randint(lo, hi, (bs,), generator=g).tolist()  # noqa: E731
    table = table_of(7, 11, seed=bs)
    kw = make_kw(table, lut_of(64), r(-2, 9), [p if p % 5 else (1 << 45) for p in r(-3, 15)],
                 r(-2, 5), window=bs % 7, cap=(1 << 31) - 1 + bs % 3, write_cap=bs)
    through_launch(kw)
    run_shape("default", kw)


@pytest.mark.slow  # the simulator at bs 1000-4096: 2-60 s each on 2 cores
@pytest.mark.parametrize("bs", [1025, 4096])
@pytest.mark.parametrize("shape", ["roles-lookback", "warp-lookback"])
def test_lookback_kernels_above_1024_on_strict_arrays(shape, bs):
    """The GPU's design above 1024 (roles-lookback, chunk 256, 16 scan blocks at 4096) and the
    warp-lookback candidate (chunk 256), launched twice on one Strict workspace: outputs right
    both times, every workspace index in range, the invariant kept."""
    g = torch.Generator().manual_seed(bs + 7)
    r = lambda lo, hi: torch.randint(lo, hi, (bs,), generator=g).tolist()  # noqa: E731
    kw = make_kw(table_of(9, 13, seed=bs), lut_of(80), r(-2, 11), r(-3, 20), r(-2, 6), window=6,
                 cap=bs * 3, write_cap=bs)
    ws = fresh_ws()
    for step in range(2):
        epoch = int(ws[0]) >> 16
        ws = run_shape(shape, kw, ws)
        ws_invariant(ws, epoch)
        kw = make_kw(table_of(9, 13, seed=bs + 1), lut_of(81), r(-2, 11), r(-3, 20), r(-2, 6),
                     window=0 if step else 3, cap=bs, write_cap=bs)


@pytest.mark.slow  # the simulator at bs 1000-4096: 2-60 s each on 2 cores
@pytest.mark.parametrize("chunk,bs", [(32, 4096), (4096, 4096), (64, 1000), (64, 33)])
def test_warp_lookback_workspace_edges(chunk, bs):
    """warp-lookback at its workspace's edge: chunk 32 at bs 4096 is 128 scan blocks (the last
    block publishes words 1028..1031 of 1032 and polls 508 words, 16 a lane); chunk 4096 one
    scan block of 128 requests a lane; a partial last block. Then a second launch that polls the
    other set."""
    g = torch.Generator().manual_seed(chunk + bs)
    r = lambda lo, hi: torch.randint(lo, hi, (bs,), generator=g).tolist()  # noqa: E731
    kw = make_kw(table_of(6, 10, seed=chunk), lut_of(40), r(-1, 8), r(-2, 14), r(-1, 4),
                 window=5, cap=bs * 2, write_cap=bs)
    k, blocks, threads, _ = warp_lookback(bs, chunk=chunk)
    ws = fresh_ws()
    for _ in range(2):
        epoch = int(ws[0]) >> 16
        ws = run_strict(k, kw, blocks, threads, chunk, ws)
        ws_invariant(ws, epoch)


@pytest.mark.slow  # the simulator at bs 1000-4096: 2-60 s each on 2 cores
def test_warp_lookback_per_lane_too_small_takes_the_fallback():
    """A warp-lookback kernel compiled with fewer polling words than its launch needs (per_lane
    1 = 8 blocks, launched with 20 scan blocks): the blocks past 8 must take the exact fallback,
    never poll past the words they own."""
    bs = 640
    g = torch.Generator().manual_seed(9)
    r = lambda lo, hi: torch.randint(lo, hi, (bs,), generator=g).tolist()  # noqa: E731
    kw = make_kw(table_of(6, 10), lut_of(40), r(-1, 8), r(-2, 14), r(-1, 4), window=5,
                 cap=bs, write_cap=bs)
    k, blocks, threads, chunk = warp_lookback(bs, chunk=32, per_lane=1)
    ws = run_strict(k, kw, blocks, threads, chunk, fresh_ws())
    ws_invariant(ws, 0)


@pytest.mark.parametrize("cap", [0, 1, (1 << 31) - 1, 1 << 31, (1 << 32) + 5, I64_MAX,
                                 I64_MAX + 1, 1 << 100])
@pytest.mark.parametrize("shape", ["default", "roles-gpu", "roles-lookback", "warp-lookback"])
def test_verify_capacity_extremes(shape, cap):
    """verify_capacity from 0 to 2^100 against totals around 2^31 and 2^62 (num_valid's int32
    wrap, enable, and the clamp of capacity to int64 on the way in)."""
    bs = 12
    pre = [(1 << 31) // 3 + 1, 1 << 62, 5, (1 << 31) - 1]
    kw = make_kw(table_of(4, 4), None, padded([1, 2, 3], bs, 1), padded(pre, bs, 1),
                 padded([1, 2], bs, 1), cap=cap)
    run_shape(shape, kw)
    through_launch(kw)


# ======== 4. the look-back workspace shared between the candidate and the default ================

@pytest.mark.slow  # the simulator at bs 1000-4096: 2-60 s each on 2 cores
def test_warp_lookback_candidate_then_default_roles_lookback_share_one_workspace(monkeypatch):
    """The candidate (numba_one_pass, design warp-lookback) and the default planner's
    roles-lookback row (patched into the simulator's table) use the same per-device workspace:
    launches of one between launches of the other, with different scan-block counts, must
    leave every launch of both exact (no stale READY word from the other design)."""
    from impls.offsets_planner import numba_one_pass as nop

    monkeypatch.setattr(nb, "SIM_DESIGNS", ((64, ("roles", 32, 32, 1)),
                                            (4096, ("roles-lookback", 32, 96, 0))))
    ws = nb.lookback_kernel.workspace(torch.device(DEVICE))
    g = torch.Generator().manual_seed(11)
    for step, (who, bs) in enumerate([("warp", 1100), ("default", 300), ("warp", 64),
                                      ("default", 1100), ("warp", 700), ("default", 97)]):
        r = lambda lo, hi: torch.randint(lo, hi, (bs,), generator=g).tolist()  # noqa: E731
        kw = make_kw(table_of(8, 12, seed=step), lut_of(60), r(-1, 10), r(-2, 18), r(-1, 5),
                     window=4, cap=bs * 2, write_cap=bs + 2)
        ref, got = clone(kw), clone(kw)
        python_planner.launch(**ref)
        epoch = int(ws[0]) >> 16
        if who == "warp":
            nop.plan_launch(design="warp-lookback", chunk=64, **got)
        else:
            nb.launch(**got)
        for name in OUT:
            assert torch.equal(got[name], ref[name]), (step, who, name)
        ws_invariant(ws.numpy(), epoch)


# ======== 5. the chain floor's kernels ===========================================================

def _chain_strict(kernel_name: str, kw: dict, block: int = 32) -> np.ndarray:
    """The chain floor's kernel run on Strict arrays (the pointer kernel on the flat table, the
    array one on the 2-D table), ``out`` exactly bs long; returns out."""
    from conformance.bench import chain_numba

    rpi, prefix, extend = (strict(kw[n]) for n in IN[:3])
    table = kw["req_to_token"]
    lut = kw["full_to_swa_index_mapping"]
    lut_len = 0 if lut is None else int(lut.shape[0])
    lut_a = strict(lut if lut is not None else torch.zeros(1, dtype=torch.int64))
    bs = rpi.shape[0]
    out = np.full(bs, -7, dtype=np.int64).view(Strict)
    grid = max(1, -(-bs // block))
    if kernel_name == "pointers":
        chain_numba.chain_pointer_kernel[grid, block](
            rpi, prefix, extend, strict(table.reshape(-1)), lut_a, out, bs, lut_len,
            int(table.shape[0]), int(table.shape[1]))
    else:
        t2 = np.ascontiguousarray(table.numpy()).copy().view(Strict)
        chain_numba.chain_kernel[grid, block](rpi, prefix, extend, t2, lut_a, out, bs, lut_len)
    return out.view(np.ndarray)


@pytest.mark.parametrize("kernel_name", ["pointers", "arrays"])
@pytest.mark.parametrize("rows,cols", [(4, 0), (0, 5), (1, 3)])
def test_chain_floor_kernels_on_edge_tables(kernel_name, rows, cols):
    """The chain floor claims to read 'guarded and clamped as the planner reads them': a table
    with no columns (rows >= 2), no rows, one row; an active row with prefix 1 and extend 1.
    The planner's kernels guard cols > 0; the chain must read nothing either (seed -1, as the
    Python planner's plan)."""
    bs = 8
    kw = make_kw(table_of(rows, cols), None, padded([1, 2, 3, 0, -1], bs, 1),
                 padded([1, 2, 1 << 40], bs, 1), padded([1], bs, 1))
    out = _chain_strict(kernel_name, kw)
    assert out.tolist() == reference(kw)["out_write_seed_slot_indices"][:bs].tolist()


@pytest.mark.parametrize("style", [None, "pointers"])
def test_chain_floor_on_a_bench_table_with_no_columns(style):
    """Through the bench's own path: ``--bench-table 8x0`` makes workloads.build's table (8, 0)
    (every prefix 1, extend 1, active rows 1..7); the Numba planner plans it (seeds -1), the
    chain floor must too (test_chain_floor compares its seeds with the plan's)."""
    from conformance.bench import chain_floors, workloads

    kw = workloads.build(8, workloads.spec_for("decode", "cpu", table=(8, 0), seed=1), "cpu")
    want = reference(kw)["out_write_seed_slot_indices"][:8].tolist()
    chain_floors.chain_call("chain-numba", kw, (32, style and chain_floors.POINTERS))[1]()
    assert kw[chain_floors.SEEDS_NAME][:8].tolist() == want


@pytest.mark.parametrize("kernel_name", ["pointers", "arrays"])
def test_chain_floor_kernels_guards(kernel_name):
    """Rows I64_MIN..I64_MAX, prefixes I64_MIN..I64_MAX, extend <= 0, table slots negative and
    at I32_MAX, a LUT of length 1: the chain's loads stay inside every tensor and equal the
    Python planner's seeds."""
    table = torch.tensor([[5, 6, 7], [-1, I32_MAX, 0], [I32_MIN, 2, 9]], dtype=torch.int32)
    bs = 40
    rpi = padded([I64_MIN, -1, 0, 1, 2, 3, 4, I64_MAX], bs, 1)
    pre = padded([I64_MIN, -1, 0, 1, 2, 3, 4, I64_MAX, 1 << 62], bs, 1)
    ext = padded([1, 0, -1, I64_MAX, I64_MIN, 2], bs, 1)
    for lut in (torch.tensor([31337], dtype=torch.int64), None):
        kw = make_kw(table, lut, rpi, pre, ext, window=1 if lut is not None else 0)
        out = _chain_strict(kernel_name, kw)
        assert out.tolist() == reference(kw)["out_write_seed_slot_indices"][:bs].tolist()


def test_chain_pointer_floor_reads_a_table_view_from_its_start():
    """chain_call with the pointer shape on a table that is a view at a storage offset: the
    seeds are the view's entries (the pointer kernel takes table.reshape(-1))."""
    from conformance.bench import chain_floors

    big = torch.arange(80, dtype=torch.int32).reshape(10, 8)
    table = big[2:6]
    bs = 20
    kw = make_kw(table, torch.arange(100, dtype=torch.int64) * 3, padded([1, 2, 3, 0, 4], bs, 1),
                 padded([1, 8, 9, 3], bs, 1), padded([1, 1, 0], bs, 1), window=2,
                 write_cap=bs)
    want = reference(kw)["out_write_seed_slot_indices"][:bs].tolist()
    chain_floors.chain_call("chain-numba", kw, (32, chain_floors.POINTERS))[1]()
    assert kw[chain_floors.SEEDS_NAME][:bs].tolist() == want


# ======== 6. what a planner under test can reach in the new bench code ===========================

@pytest.fixture
def watched():
    """The bench's watch list as the bench builds it (clocks, then the chain floors at import)."""
    from conformance.bench import chain_floors, clocks  # noqa: F401 (registers chain_floors' names)

    assert clocks.tampered() == []
    return clocks


def test_rebinding_the_chain_pointer_kernel_is_seen(watched, monkeypatch):
    """A planner under test runs in the bench's process, imported before the chain floors are
    timed (test_plan runs first). Rebinding conformance.bench.chain_numba.chain_pointer_kernel
    (the kernel _numba_chain_call looks up at each chain_call) to a slower one that still
    writes the right seeds would raise the chain-numba floor every other Numba planner's
    figure is compared with; the bench must see it (clocks.tampered)."""
    from conformance.bench import chain_floors, chain_numba

    real = chain_numba.chain_pointer_kernel
    calls = []

    class Slower:
        def __getitem__(self, config):
            def launch(*args):
                calls.append(config)  # stand-in for extra device work
                return real[config](*args)
            return launch

    monkeypatch.setattr(chain_numba, "chain_pointer_kernel", Slower())
    kw = make_kw(table_of(4, 4, lo=0), None, [1, 2, 3], [1, 2, 3], [1, 1, 1], write_cap=3)
    chain_floors.chain_call("chain-numba", kw, (32, chain_floors.POINTERS))[1]()
    assert calls, "the substitute was not called"
    want = reference(kw)["out_write_seed_slot_indices"].tolist()
    assert kw[chain_floors.SEEDS_NAME].tolist() == want
    assert any("chain_pointer_kernel" in name for name in watched.tampered()), watched.tampered()


def test_dropping_the_pointer_chain_shapes_is_refused_or_seen(watched, monkeypatch):
    """chain_floors.CHAIN_SHAPES (the three pointer shapes among them) is what best_chain_shape
    tries on the GPU, keeping the fastest: a planner that removes the pointer shapes leaves only the slower
    array shapes, and the chain-numba floor every Numba planner is compared with rises. In place
    it cannot (a read-only mapping of tuples); rebinding the name is seen."""
    from conformance.bench import chain_floors

    fewer = tuple(s for s in chain_floors.CHAIN_SHAPES["chain-numba"]
                  if s[1] != chain_floors.POINTERS)
    with pytest.raises(TypeError):
        chain_floors.CHAIN_SHAPES["chain-numba"] = fewer
    assert watched.tampered() == []
    monkeypatch.setattr(chain_floors, "CHAIN_SHAPES",
                        {**chain_floors.CHAIN_SHAPES, "chain-numba": fewer})
    assert any("CHAIN_SHAPES" in n for n in watched.tampered()), watched.tampered()


def test_rebinding_POINTERS_is_seen(watched, monkeypatch):
    """chain_floors.POINTERS (new) decides, in _numba_chain_call, whether a shape runs the pointer
    kernel: rebound, every '(n, "pointers")' shape runs the array kernel and is labelled plain
    'n threads' in the published table; the bench must see it."""
    from conformance.bench import chain_floors

    monkeypatch.setattr(chain_floors, "POINTERS", "not-pointers")
    assert chain_floors.shape_label("chain-numba", (32, "pointers")) == "32 threads"
    assert any("POINTERS" in n for n in watched.tampered()), watched.tampered()


# ======== 7. in-place changes of the buffer set between calls (the packed pointer cells) =========

def test_in_place_resize_of_lut_and_table_between_calls():
    """A LUT shrunk in place (resize_ keeps its data pointer) and a table reshaped in place
    between two calls with the same objects: the packed launch's cells (lut_len, rows, cols:
    GPU-only state built once per buffer set) must follow, and the plan must equal the Python
    planner's (a stale lut_len would clamp to a LUT entry that no longer exists; stale cols would
    index past the new table)."""
    table = torch.arange(5 * 9, dtype=torch.int32, device=DEVICE).reshape(5, 9)
    lut = torch.arange(100, dtype=torch.int64, device=DEVICE) + 1000
    bs = 10
    kw = make_kw(table, lut, padded([1, 2, 3, 4], bs, 1), padded([9, 5, 1, 8], bs, 1),
                 padded([1], bs, 1), window=3)
    through_launch(kw)
    plan0, buf0 = nb.validate_arguments(kw)
    ptr_lut, ptr_table = lut.data_ptr(), table.data_ptr()
    lut.resize_(1)
    table.resize_(3, 2)  # fewer entries, same storage
    assert lut.data_ptr() == ptr_lut and table.data_ptr() == ptr_table
    through_launch(kw)
    plan, buffers = nb.validate_arguments(kw)
    assert buffers is not buf0 and (plan.lut_len, plan.max_reqs, plan.max_seq_len) == (1, 3, 2)
    packed = nb.packed_launch.PackedLaunch(plan, buffers)
    cells = [c.value for c in packed.cells]
    assert cells[nb.packed_launch.BS_CELL + 1] == 1 and cells[-2:] == [3, 2]
    assert cells[3] == table.data_ptr() and cells[4] == lut.data_ptr()


# ======== 8. the harness above is live ===========================================================

@pytest.mark.parametrize("bad", ["table-minus-1", "ws-past-end", "seed-past-bs"])
def test_run_strict_catches_what_it_looks_for(bad):
    """run_strict fails a kernel of the planner's signature that reads the flat table at -1 (the
    unguarded cols == 0 read), writes one word past the look-back workspace, or writes a seed
    at index bs."""
    def kernel_fn(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed,
                  out_num_valid, out_enable, out_reqs, ws, bs, lut_len, window, capacity, chunk,
                  rows, cols):
        if cuda.threadIdx.x == 0 and cuda.blockIdx.x == 0:
            if bad == "table-minus-1":
                out_seed[0] = table[1 * cols + min(prefix[0] - 1, cols - 1)]
            elif bad == "ws-past-end":
                ws[SETS_AT + 2 * SET_WORDS] = 1
            else:
                out_seed[bs] = 1

    kw = make_kw(table_of(4, 0 if bad == "table-minus-1" else 3), None, [1, 2], [1, 1], [1, 1])
    with pytest.raises(Exception, match="outside shape"):
        run_strict(cuda.jit(kernel_fn), kw, 1, 32, 32, fresh_ws())
