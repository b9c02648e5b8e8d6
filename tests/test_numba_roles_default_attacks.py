"""Hostile-review attacks on the Numba CUDA planner's default launch (``roles`` up to bs 1024,
``blocked`` above: numba_cuda_planner DESIGNS / SIM_DESIGNS, launch_shape, kernel_keys, compiled,
PackedLaunch.set_batch; the roles kernel's strided seed blocks; the unused workspace argument).

Every output is compared byte for byte with the pure-Python planner on poisoned buffers (poison past
the defined regions must survive, spec section 5). Expected grids and kernel keys are written from
the design's description (the planner's docstrings and the spec), not read back from the code under test. Runs in
the simulator here (about 30 s on 2 busy cores); the GPU-shaped attacks patch the simulator's design
table and are skipped on a GPU, where tests/test_numba_cuda_planner.py runs the real shapes.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch

from tests.test_numba_cuda_planner import (  # noqa: F401 (module-level skip when unavailable)
    DEVICE, IN, OUT, POISON32, POISON64, check_against_reference, clone, poison, random_plan)
from impls.offsets_planner import numba_cuda_kernel
from impls.offsets_planner import numba_cuda_planner as nb
from impls.offsets_planner import python_planner
from impls.offsets_planner.numba_roles_kernel import build_roles_kernel
from impls.offsets_planner.validate import zero_lut

cuda = nb.cuda

sim_only = pytest.mark.skipif(nb.MODE != "simulator", reason="patches the simulator's designs")
GPU_ROLES = ((64, ("roles", 64, 64, 2)), (1024, ("roles", 512, 512, 2)))
"""The GPU's roles rows as the planner's DESIGNS docstring describes them (threads 64 up to bs 64, 512 up to 1024)."""


def expected_design(bs: int, gpu: bool) -> str:
    return "roles" if bs <= 1024 else "warp-lookback" if gpu else "blocked"


def expected_shape(bs: int, gpu: bool) -> tuple[int, int, int, tuple]:
    """(blocks, threads, chunk, key) from the design (the planner's DESIGNS docstring), independently of launch_shape."""
    if gpu:
        if bs <= 1024:
            threads = 64 if bs <= 64 else 512
            items = 1
            while items * threads < bs:
                items *= 2
            return -(-bs // threads) + 2, threads, threads, ("roles", items, 2, threads)
        # warp-lookback, one-warp blocks, chunks of 128 (4 requests a lane): scan blocks then
        # seed blocks of 32; a lane reads 4 of the 128 words of 32 scan blocks at bs 4096
        return -(-bs // 128) + -(-bs // 32), 32, 128, ("warp-lookback", 4, 4)
    if bs <= 1024:
        items = 1
        while items * 32 < bs:
            items *= 2
        return (1 if bs else 0) + 1, 32, 1024, ("roles", items, 1, 32)
    return -(-bs // 1024), 32, 1024, ("blocked",)


def reference(kw: dict) -> dict:
    ref = clone(kw)
    python_planner.launch(**ref)
    return ref


def assert_same_outputs(got: dict, ref: dict, what) -> None:
    for name in OUT:
        assert torch.equal(got[name].cpu(), ref[name].cpu()), (what, name)


# ---- 1. every bucket edge through the default launch ------------------------------------------

@pytest.mark.parametrize("bs", [0, 1, 31, 32, 33, 63, 64, 65, 511, 512, 513, 1023, 1024, 1025,
                                4096])
def test_bucket_edges_match_reference(bs):
    """bs at every edge of the simulator's and the GPU's buckets (32-thread scan rows, the 64 and
    512 roles rows, the 1024 roles/blocked switch, 4096): the default launch picks roles up to
    1024 and blocked above, and every byte (poison past bs included) equals the Python planner."""
    assert nb.launch_shape(bs)[3][0] == expected_design(bs, nb.MODE == "gpu")
    assert nb.launch_shape(bs) == expected_shape(bs, nb.MODE == "gpu")
    lut, hazards = [(True, True), (False, True), (True, False), (False, False)][bs % 4]
    check_against_reference(random_plan(9000 + bs, bs, lut=lut, hazards=hazards))


# ---- 2. one buffer set, bs moving back and forth across the designs ---------------------------

def test_back_and_forth_between_designs_on_one_buffer_set():
    """The same output buffers (capacity 4096) while bs jumps roles -> blocked -> roles ... and
    back to a bs already seen: no stale grid, kernel, chunk or total from the previous call. The
    outputs are not re-poisoned between calls, so the tails left by an earlier, larger batch must
    survive exactly as the Python planner leaves them."""
    shared = random_plan(1, 4096, lut=True, hazards=True)
    poison(shared)
    mirror = clone(shared)  # the Python planner's copy of the same buffers
    for step, bs in enumerate([1024, 1025, 3, 4096, 0, 1024, 64, 65, 1025, 1, 1024]):
        fresh = random_plan(500 + step, bs, lut=True, hazards=True)
        for kw in (shared, mirror):  # new requests; table, LUT, W, outputs: one buffer set
            for name in IN[:3]:
                kw[name] = fresh[name]
        nb.launch(**shared)
        python_planner.launch(**mirror)
        assert_same_outputs(shared, mirror, (step, bs))
    # and the same inputs twice give the same outputs, whatever was left in the buffers
    again = clone(shared)
    poison(again)
    nb.launch(**again)
    assert_same_outputs(again, reference(again), "again")
    for name in OUT[:3]:
        n = 1025 if name != "out_write_seed_slot_indices" else 1024
        assert torch.equal(again[name][:n], shared[name][:n])


# ---- 3. PackedLaunch's kernel handle, grid and chunk cells ------------------------------------

@pytest.mark.parametrize("gpu_table", [True, False])
def test_packed_launch_kernel_handle_grid_and_chunk_follow_the_design(monkeypatch, gpu_table):
    """The driver path (faked on the CPU: a recording cuLaunchKernel and one handle per kernel key):
    at each call, including memoised bs revisited after a design switch, the launch gets the
    handle of the kernel of that bs's design, its grid and block, and the chunk and bs cells."""
    if not gpu_table and nb.MODE == "gpu":
        pytest.skip("the simulator's table needs the simulator's blocked kernel (32 a thread)")
    calls = []

    def fake_launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        calls.append((function.value, gx.value, gy.value, gz.value, bx.value, by.value, bz.value,
                      params))
        return 0

    handles: dict[tuple, int] = {}
    monkeypatch.setattr(nb.packed_launch, "LAUNCH", fake_launch)
    monkeypatch.setattr(nb, "compiled", lambda key=("blocked",), use_shuffle=True: ("kernel", key))
    monkeypatch.setattr(nb.packed_launch, "kernel_handle",
                        lambda k: handles.setdefault(k[1], 0x7000 + 0x100 * len(handles)))
    monkeypatch.setattr(nb, "SIMULATED", not gpu_table)
    kw = random_plan(3, 5, lut=True, hazards=False)
    plan, buffers = nb.validate_arguments(kw)
    packed = nb.packed_launch.PackedLaunch(plan, buffers)
    assert packed.call is not None
    seen_keys = set()
    for bs in (5, 1024, 1025, 64, 65, 4096, 0, 1024, 513, 5, 1025, 64, 512, 4096, 1):
        step = random_plan(10 + bs, bs, lut=True, hazards=False)
        request = [step[n] for n in IN[:3]]
        packed.set_batch(bs, *request)
        packed.call(packed.stream, packed.params, None)
        blocks, threads, chunk, key = expected_shape(bs, gpu_table)
        seen_keys.add(key)
        handle = handles[key]
        function, gx, gy, gz, bx, by, bz, params = calls[-1]
        assert (function, gx, gy, gz, bx, by, bz) == (handle, blocks, 1, 1, threads, 1, 1), bs
        assert params is packed.params
        ws = nb.lookback_kernel.workspace(buffers.device)  # made by PackedLaunch, outside capture
        want = nb.packed_launch.pointer_params((*request, *buffers.tensors, ws), bs,
                                 plan.lut_len, *nb._int64_scalars(plan), chunk)
        assert [c.value for c in packed.cells] == want, bs
        # the params array still points at the cells (nothing re-allocated)
        assert [packed.params[i] for i in range(len(packed.cells))] == \
            [ctypes.addressof(c) for c in packed.cells]
    assert len(set(handles.values())) == len(handles) == len(seen_keys)


def test_kernel_keys_cover_every_bs_and_shapes_cover_every_request(monkeypatch):
    """What probe precompiles (kernel_keys) holds every bs's kernel, for both tables, so that no
    compile happens during a graph capture; every roles grid has enough seed blocks and scan
    items for bs, and on the GPU one seed a thread (chunk <= threads); blocked chunks fit."""
    for gpu_table in (True, False) if nb.MODE == "simulator" else (True,):
        monkeypatch.setattr(nb, "SIMULATED", not gpu_table)
        keys = nb.kernel_keys()
        assert len(keys) == len(set(keys))
        for bs in range(4097):
            blocks, threads, chunk, key = nb.launch_shape(bs)
            assert (blocks, threads, chunk, key) == expected_shape(bs, gpu_table), bs
            assert key in keys
            if key[0] == "roles-lookback":
                _, items, kthreads, per_lane, seed_tile, kchunk = key
                scanners = max(1, -(-bs // chunk))
                assert kthreads == threads and items * threads >= chunk == kchunk and seed_tile <= threads
                assert blocks - scanners == -(-bs // seed_tile) and 32 * per_lane >= 4 * scanners
            elif key[0] == "warp-lookback":
                _, items, per_lane = key
                scanners = max(1, -(-bs // chunk))
                assert threads == 32 and 32 * items == chunk
                assert blocks - scanners == -(-bs // 32) and 32 * per_lane >= 4 * scanners
            elif key[0] == "roles":
                _, items, scans, kthreads = key
                assert kthreads == threads and items * threads >= bs and blocks >= 1
                assert (blocks - scans) * chunk >= bs and (blocks - scans - 1) * chunk < max(bs, 1)
                if gpu_table:
                    assert chunk <= threads
            else:
                assert blocks * chunk >= bs and (blocks - 1) * chunk < bs


# ---- 4. the GPU's roles shapes, and odd chunks, in the simulator ------------------------------

@sim_only
@pytest.mark.parametrize("bs", [0, 1, 63, 64, 200])
def test_gpu_roles_64_thread_shapes_in_the_simulator(monkeypatch, bs):
    """The GPU's small roles row (64 threads, chunk 64, two scan blocks), run by the simulator's
    shared-memory scan: one seed block up to 64, several seed blocks and 4 items a scan thread at
    bs 200 (that row stops at 64 on the GPU; 200 exercises the same code with more blocks)."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, ("roles", 64, 64, 2)),))
    assert nb.launch_shape(bs)[:3] == (-(-bs // 64) + 2, 64, 64)
    check_against_reference(random_plan(700 + bs, bs, lut=bs % 2 == 0, hazards=True))


@sim_only
def test_gpu_roles_512_thread_shape_in_the_simulator(monkeypatch):
    """The GPU's large roles row exactly (512 threads, chunk 512, two scan blocks) at bs 1000: two
    seed blocks, the second partial, and two requests a scan thread (about 4 s in the simulator)."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", GPU_ROLES + ((4096, ("blocked", 32, 1024, 0)),))
    assert nb.launch_shape(1000) == (4, 512, 512, ("roles", 2, 2, 512))
    check_against_reference(random_plan(1000, 1000, lut=True, hazards=True))


@sim_only
@pytest.mark.parametrize("design,scans,chunk,bs", [
    ("roles", 1, 50, 101), ("roles", 2, 50, 150), ("roles", 2, 20, 45), ("roles", 1, 33, 66),
    ("roles", 1, 1024, 1024), ("blocked", 0, 50, 101)])
def test_seed_stride_with_chunks_that_are_not_a_multiple_of_threads(monkeypatch, design, scans,
                                                                    chunk, bs):
    """The seed blocks' new stride loop (stride blockDim.x = 32 over a chunk): chunks that are not
    a multiple of 32 (50, 33: the last stride partial, so a thread must stop at its chunk's end
    and not plan the next block's requests), a chunk below the thread count (20), and a full
    1024-request chunk (32 strides)."""
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, (design, 32, chunk, scans)),))
    assert nb.launch_shape(bs)[:3] == (-(-bs // chunk) + scans, 32, chunk)
    check_against_reference(random_plan(800 + bs + chunk, bs, lut=True, hazards=True))


# ---- 5. bounds, inputs and the workspace, with the kernels called directly -------------------

class Strict(np.ndarray):
    """An array that refuses any scalar index outside [0, n) (negative ones included, which numpy
    would wrap silently) and, when ``forbidden``, any scalar access at all."""

    forbidden = False

    def _check(self, k):
        ks = k if isinstance(k, tuple) else (k,)
        if not all(isinstance(i, (int, np.integer)) for i in ks):
            return  # slices: the simulator's own copies
        if self.forbidden:
            raise IndexError(f"workspace accessed at {k}")
        if len(ks) != self.ndim or not all(0 <= int(i) < n for i, n in zip(ks, self.shape)):
            raise IndexError(f"index {k} outside shape {self.shape}")

    def __getitem__(self, k):
        self._check(k)
        return super().__getitem__(k)

    def __setitem__(self, k, v):
        self._check(k)
        super().__setitem__(k, v)


class Forbidden(Strict):
    """A Strict array that refuses every scalar access (a class attribute: the simulator's device
    copy keeps the array's type, not its instance attributes)."""

    forbidden = True


def strict(t: torch.Tensor, forbidden: bool = False) -> Strict:
    return np.ascontiguousarray(t.cpu().numpy()).copy().view(Forbidden if forbidden else Strict)


def run_direct(kernel, kw: dict, blocks: int, threads: int, chunk: int) -> None:
    """Launch ``kernel`` on Strict copies: inputs, exact-size outputs ([bs+1], [bs+1], [bs], the
    three [1]) and a workspace that may not be touched; compare with the Python planner."""
    plan, buffers = nb.validate_arguments(kw)
    bs = plan.bs
    ref = reference(kw)
    table, lut = buffers.tensors[:2]
    inputs = [strict(kw[n]) for n in IN[:3]] + [strict(table.reshape(-1)), strict(lut)]
    before = [a.view(np.ndarray).copy() for a in inputs]
    sizes = (bs + 1, bs + 1, bs, 1, 1, 1)
    outs = [strict(kw[name][:n]) for name, n in zip(OUT, sizes)]
    ws = strict(zero_lut(buffers.device), forbidden=True)
    kernel[blocks, threads](*inputs, *outs, ws, bs, plan.lut_len, *nb._int64_scalars(plan), chunk,
                            *table.shape)
    for name, n, a in zip(OUT, sizes, outs):
        assert np.array_equal(a.view(np.ndarray), ref[name][:n].cpu().numpy()), (name, bs)
    for name, a, b in zip(IN, inputs, before):
        assert np.array_equal(a.view(np.ndarray), b), name
    assert ws.view(np.ndarray).tolist() == [0]


def hazard_plan(seed: int, bs: int, lut: bool) -> dict:
    """A random hazard plan whose first requests sit on every guard: rows -1, 0, max_reqs - 1,
    max_reqs; prefixes 0, 1, max_seq_len, max_seq_len + 1, negative; extend 0 and negative;
    table slots negative and at / past lut_len."""
    kw = random_plan(seed, bs, lut=lut, hazards=True)
    max_reqs, cols = kw["req_to_token"].shape
    edge = [(-1, 5, 2), (max_reqs, 5, 2), (max_reqs - 1, cols, 1), (max_reqs - 1, cols + 1, 1),
            (1, 1, 1), (2, 0, 3), (3, 4, 0), (4, 4, -2), (5, -7, 3), (0, 9, 9)]
    for r, (row, p, e) in enumerate(edge[:bs]):
        kw["req_pool_indices"][r], kw["prefix_lens"][r], kw["extend_seq_lens"][r] = row, p, e
    table = kw["req_to_token"]
    table[max_reqs - 1, cols - 1] = -5  # negative: passes the LUT untranslated
    table[1, 0] = 10_000  # past lut_len: clamped
    return kw


@sim_only
@pytest.mark.parametrize("shape", ["default-roles", "roles-2-scans", "gpu-blocked", "sim-blocked"])
@pytest.mark.parametrize("lut", [True, False])
def test_kernels_stay_in_bounds_leave_inputs_and_workspace_alone(shape, lut):
    """Each kernel the planner now launches, called directly on arrays that raise on any index
    outside the tensor (negative included) and on outputs cut to exactly their defined regions,
    with a workspace that raises on any access: no out-of-bounds read or write, no write past
    the regions, no input written, the workspace (the cached zero LUT) neither read nor written.
    The simulator's own launch copies inputs and the workspace (cuda.In), which would hide a
    write; this launch copies back (InOut)."""
    if shape == "default-roles":
        for bs in (0, 1, 33, 100):
            blocks, threads, chunk, key = nb.launch_shape(bs)
            assert key[0] == "roles"
            run_direct(nb.compiled(key), hazard_plan(40 + bs, bs, lut), blocks, threads, chunk)
    elif shape == "roles-2-scans":
        for bs in (0, 10, 101):
            items = 1
            while items * 32 < bs:
                items *= 2
            kernel = cuda.jit(build_roles_kernel(use_shuffle=False, padding=0, no_seed=-1,
                                                    max_threads=32, items=items, scans=2))
            run_direct(kernel, hazard_plan(60 + bs, bs, lut), -(-bs // 50) + 2, 32, 50)
    elif shape == "gpu-blocked":  # the GPU's blocked shape: chunk = threads, one request a thread
        kernel = cuda.jit(numba_cuda_kernel.build_kernel(
            use_shuffle=False, padding=0, no_seed=-1, max_threads=64, items=1))
        for bs in (0, 130):
            run_direct(kernel, hazard_plan(80 + bs, bs, lut), max(1, -(-bs // 64)), 64, 64)
    else:
        bs = 1025
        blocks, threads, chunk, key = nb.launch_shape(bs)
        assert key == ("blocked",)
        run_direct(nb.compiled(key), hazard_plan(90, bs, lut), blocks, threads, chunk)


@sim_only
@pytest.mark.parametrize("index", ["ws0", "seed_bs", "seed_minus_1", "verify_bs_plus_1",
                                   "table_row_minus_1"])
def test_the_strict_harness_catches_what_it_looks_for(index):
    """The harness of the test above is live: a kernel of the same signature that touches the
    workspace, writes one element past a defined region or reads at a negative index fails."""
    def bad(rpi, prefix, extend, table, lut, out_verify, out_write, out_seed, out_num_valid,
            out_enable, out_reqs, ws, bs, lut_len, window, capacity, chunk, rows, cols):
        if cuda.threadIdx.x == 0:
            if index == "ws0":
                out_reqs[0] = ws[0]
            elif index == "seed_bs":
                out_seed[bs] = 1
            elif index == "seed_minus_1":
                out_seed[bs - 1 - bs] = 1
            elif index == "verify_bs_plus_1":
                out_verify[bs + 1] = 1
            else:
                out_reqs[0] = table[bs - 1 - bs]

    with pytest.raises(Exception, match="workspace accessed|outside shape"):
        run_direct(cuda.jit(bad), hazard_plan(5, 3, True), 1, 32, 32)


def test_zero_lut_is_never_written_through_the_planner():
    """The planner passes the cached zero LUT as the workspace (and as the LUT when there is
    none): after launches of both designs without a LUT it is the same tensor, still [0]."""
    lut = zero_lut(torch.device(DEVICE))
    ptr = lut.data_ptr()
    for bs in (0, 7, 1024, 1025):
        kw = hazard_plan(100 + bs, bs, lut=False)
        check_against_reference(kw)
    assert zero_lut(torch.device(DEVICE)) is lut and lut.data_ptr() == ptr
    assert lut.cpu().tolist() == [0]


# ---- 6. values at the edges of int64 / int32 -------------------------------------------------

@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the simulator's
@pytest.mark.parametrize("bs", [8, 1025])  # numpy int64 scalars wrap as the GPU's do, with a warning
def test_int64_total_wrap_int32_num_valid_wrap_and_huge_scalars(bs):
    """Verify totals that pass 2^31 (num_valid's int32 wrap) and 2^63 (the offsets' int64 wrap),
    write totals past 2^63, and W and verify_capacity above int64 (clamped on the way in), in the
    roles design (bs 8) and the blocked one (bs 1025); all as the Python planner."""
    base = random_plan(4242 + bs, bs, lut=True, hazards=False)
    rows = torch.arange(bs, dtype=torch.int64) % 8 + 1
    cases = [
        (torch.full((bs,), 1 << 61, dtype=torch.int64), torch.full((bs,), 1 << 61), 0, 1 << 70),
        (torch.full((bs,), (1 << 31) // 3 + 1), torch.ones(bs, dtype=torch.int64), 0, 1 << 40),
        (torch.full((bs,), (1 << 62) + 7), torch.full((bs,), (1 << 62) + 5), 1 << 70, 3),
        (torch.full((bs,), 5), torch.full((bs,), 1), (1 << 63) - 1, (1 << 63) + 11),
    ]
    for prefix, extend, window, cap in cases:
        kw = clone(base)
        kw["req_pool_indices"] = rows.clone().to(DEVICE)
        kw["prefix_lens"] = prefix.clone().to(DEVICE)
        kw["extend_seq_lens"] = extend.clone().to(DEVICE)
        kw["swa_window_size"], kw["verify_capacity"] = window, cap
        check_against_reference(kw)


# ---- 7. request tensors that are views with a storage offset -----------------------------------

@pytest.mark.parametrize("bs", [32, 1024, 1025])
def test_request_views_with_storage_offset(bs):
    """Request tensors that are contiguous views into larger tensors (nonzero storage offset),
    at a roles and a blocked bs: the launch reads from the view's start, not the storage's."""
    kw = hazard_plan(1300 + bs, bs, lut=True)
    for name in IN[:3]:
        big = torch.full((bs + 37,), 3, dtype=torch.int64, device=DEVICE)
        big[5:5 + bs] = kw[name]
        kw[name] = big[5:5 + bs]
        assert kw[name].storage_offset() == 5 and kw[name].is_contiguous()
    check_against_reference(kw)
