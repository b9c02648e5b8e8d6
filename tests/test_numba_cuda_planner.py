"""The numba-cuda planner against the pure-Python planner, on poisoned buffers (spec sections 5, 6).

Runs in whichever mode the planner has here: the CUDA simulator on a CPU machine (CI), compiled
kernels on a GPU. Tests marked ``gpu`` need a CUDA device (CUDA-graph capture, stream ordering, the
shuffle-free scan and Numba's ordinary launch path) and are skipped without one. Simulator cost on
the 2-core dev machine: about 0.1-0.2 s per planner call up to bs 1025, 0.5 s at bs 4096; the file
runs in about 10 s.
"""

from __future__ import annotations

import pytest
import torch

from impls.offsets_planner import python_planner
from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.registry import availability
from impls.offsets_planner import validate_cache
from impls.offsets_planner.validate import zero_lut

AVAIL = availability("numba-cuda")
if not AVAIL.available:
    pytest.skip(f"numba-cuda planner unavailable: {AVAIL.reason}", allow_module_level=True)

from impls.offsets_planner import numba_cuda_kernel  # noqa: E402 (after the availability check)
from impls.offsets_planner import numba_cuda_planner as nb  # noqa: E402

DEVICE = "cuda" if nb.MODE == "gpu" else "cpu"
gpu = pytest.mark.skipif(nb.MODE != "gpu", reason="needs a CUDA device (planner is in simulator mode)")
POISON64, POISON32 = -0x5A5A5A5A5A5A5A5B, -0x5A5A5A5B
OUT = ("out_verify_offsets_scratch", "out_write_offsets", "out_write_seed_slot_indices",
       "out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs")
IN = ("req_pool_indices", "prefix_lens", "extend_seq_lens", "req_to_token", "full_to_swa_index_mapping")


def random_plan(seed: int, bs: int, *, lut: bool, hazards: bool, capacity: int | None = None) -> dict:
    """Launcher kwargs for a random plan on DEVICE, with poisoned outputs (capacity bs + 3)."""
    g = torch.Generator().manual_seed(seed)
    max_reqs, max_seq_len, lut_len = 9, 24, 150

    def ints(lo, hi, n=bs, dtype=torch.int64):
        return torch.randint(lo, hi, (n,), generator=g, dtype=dtype)

    rpi = ints(1, max_reqs)
    pad = ints(0, 5) == 0  # about one row in five is padding, with garbage prefix and extend
    rpi[pad] = 0
    prefix, extend = ints(0, 40), ints(0, 6)
    if hazards:  # negative and out-of-table values that pass validation (spec section 6)
        rpi = torch.where(ints(0, 6) == 0, ints(-3, max_reqs + 4), rpi)
        prefix = torch.where(ints(0, 5) == 0, ints(-6, 3 * max_seq_len), prefix)
        prefix = torch.where(ints(0, 20) == 0, ints(1, 1 << 40), prefix)  # totals above 2^31
        extend = torch.where(ints(0, 5) == 0, ints(-4, 3), extend)
    table = torch.randint(-8 if hazards else 1, lut_len + 40, (max_reqs, max_seq_len), generator=g,
                          dtype=torch.int32)
    windows = ([0, 1, 7, 30] + ([-5] if hazards else [])) if lut else ([0, -3] if hazards else [0])
    kw = dict(req_pool_indices=rpi, prefix_lens=prefix, extend_seq_lens=extend, req_to_token=table,
              full_to_swa_index_mapping=ints(0, 1 << 33, lut_len) if lut else None,
              swa_window_size=windows[seed % len(windows)])
    cap = int(capacity if capacity is not None else ints(0, 60 * max(bs, 1), 1)[0])
    bufs = PlanBuffers.allocate(write_req_capacity=bs + 3, verify_capacity=max(cap, 1))
    kw.update(bufs.launcher_kwargs(), verify_capacity=cap)
    kw = {k: (v.to(DEVICE) if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}
    poison(kw)
    return kw


def poison(kw: dict) -> None:
    for name in OUT:
        kw[name].fill_(POISON64 if kw[name].dtype == torch.int64 else POISON32)


def clone(kw: dict) -> dict:
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in kw.items()}


def check_against_reference(kw: dict, planner=None) -> dict:
    """Run numba-cuda and the reference on identical poisoned copies; every byte must agree."""
    ref, got = clone(kw), clone(kw)
    python_planner.launch(**ref)
    (planner or nb.launch)(**got)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    bs = kw["req_pool_indices"].shape[0]
    for name in OUT:
        assert torch.equal(got[name].cpu(), ref[name].cpu()), (name, bs, got[name][:bs + 2],
                                                               ref[name][:bs + 2])
    for name in IN:  # inputs untouched
        if kw[name] is not None:
            assert torch.equal(got[name], kw[name]), name
    # beyond the defined regions the poison must still be there (spec section 5)
    assert (got["out_verify_offsets_scratch"][bs + 1:] == POISON64).all()
    assert (got["out_write_offsets"][bs + 1:] == POISON64).all()
    assert (got["out_write_seed_slot_indices"][bs:] == POISON64).all()
    assert int(got["out_write_num_valid_reqs"][0]) == bs
    return got


@pytest.mark.parametrize("bs", [0, 1, 33, 1025, 4096])
@pytest.mark.parametrize("lut,hazards", [(False, False), (True, False), (True, True), (False, True)])
def test_random_plans_match_reference(bs, lut, hazards):
    if bs >= 1025 and DEVICE == "cpu" and (lut, hazards) == (False, False):
        pytest.skip("large bs in the simulator: two of the four variants are enough for CI")
    got = check_against_reference(random_plan(bs * 7 + lut * 3 + hazards, bs, lut=lut,
                                              hazards=hazards))
    if bs:
        assert int(got["out_write_offsets"][bs]) >= 0


@pytest.mark.parametrize("design,scans", [("blocked", 0), ("roles", 2), ("roles", 1)])
@pytest.mark.parametrize("bs", [95, 96, 97, 300])
def test_block_boundaries_in_the_simulator(monkeypatch, bs, design, scans):
    """Chunks of 96 requests (3 per thread): ``blocked`` blocks that each sum the requests before
    them, or ``roles`` seed blocks whose threads plan every 32nd request of their chunk, then one
    or two scan blocks."""
    if nb.MODE != "simulator":
        pytest.skip("block shape is fixed on the GPU; GPU boundaries are in the GPU tests")
    monkeypatch.setattr(nb, "SIM_DESIGNS", ((4096, (design, nb.SIM_THREADS, 96, scans)),))
    blocks, threads, chunk, key = nb.launch_shape(bs)
    assert (blocks, threads, chunk) == (-(-bs // 96) + scans, 32, 96)
    items = {95: 4, 96: 4, 97: 4, 300: 16}[bs]  # ceil(bs / 32) requests a scan thread, to a power of 2
    assert key == (("blocked",) if design == "blocked" else ("roles", items, scans, 32))
    check_against_reference(random_plan(bs + 11, bs, lut=True, hazards=True))


def test_design_table_covers_every_bs():
    """Each bs in [0, 4096] has one design, and the GPU's table is the sweep's choice: ``roles``
    up to bs 1024 (two scan blocks), ``warp-lookback`` with 128-request chunks above (``blocked``
    when its workspace cannot be made); the simulator ``roles`` up to 1024 and ``blocked`` above."""
    for table in (nb.DESIGNS, nb.SIM_DESIGNS):
        assert [largest for largest, _ in table][-1] == 4096
        assert [d[0] for largest, d in table if largest <= 1024] == ["roles"] * (
            2 if table is nb.DESIGNS else 1)
    assert nb.DESIGNS[1] == (1024, ("roles", 512, 512, 2))
    assert nb.DESIGNS[-1] == (4096, ("warp-lookback", 32, 128, 0))
    assert nb.SIM_DESIGNS[-1][1][0] == "blocked"
    assert nb.FALLBACK_DESIGN[0] == "blocked"
    keys = nb.kernel_keys()
    assert len(keys) == len(set(keys)) and ("blocked",) in keys


def test_section7_examples_hand_values():
    """Spec section 7, values written by hand (not from the reference)."""
    table = (torch.arange(4 * 16, dtype=torch.int32).reshape(4, 16)).to(DEVICE)

    def run(rpi, prefix, extend, cap=1000, lut=None, window=0, tbl=table):
        bufs = PlanBuffers.allocate(write_req_capacity=len(rpi) + 2, verify_capacity=max(cap, 1),
                                    device=DEVICE)
        kw = dict(bufs.launcher_kwargs(), verify_capacity=cap)
        poison(kw)
        t = lambda v: torch.tensor(v, dtype=torch.int64, device=DEVICE)  # noqa: E731
        nb.launch(req_pool_indices=t(rpi), prefix_lens=t(prefix), extend_seq_lens=t(extend),
                  req_to_token=tbl, full_to_swa_index_mapping=lut, swa_window_size=window, **kw)
        n = len(rpi)
        return (kw["out_verify_offsets_scratch"][:n + 1].tolist(), kw["out_write_offsets"][:n + 1].tolist(),
                kw["out_write_seed_slot_indices"][:n].tolist(), int(kw["out_verify_num_valid"][0]),
                int(kw["out_verify_enable"][0]), int(kw["out_write_num_valid_reqs"][0]))

    assert run([3], [0], [5]) == ([0, 0], [0, 5], [-1], 0, 1, 1)
    assert run([2], [7], [1])[2] == [38]
    assert run([1, 0, 2], [5, 99, 3], [1, 99, 1]) == ([0, 5, 5, 8], [0, 1, 1, 2], [20, -1, 34], 8, 1, 3)
    assert run([1, 2, 0, 0], [3, 5, 99, 99], [1, 1, 99, 99])[1] == [0, 1, 2, 2, 2]
    assert run([1, 2], [4, 6], [0, 0])[:3] == ([0, 4, 10], [0, 0, 0], [-1, -1])
    assert run([1], [3], [1], cap=2)[3:5] == (2, 0)
    assert run([1], [3], [1], cap=3)[3:5] == (3, 1)
    lut = (torch.arange(65, dtype=torch.int64) + 100).to(DEVICE)
    assert run([1], [3], [1], lut=lut, window=128)[2] == [118]
    big = (torch.arange(4 * 2048, dtype=torch.int32).reshape(4, 2048)).to(DEVICE)
    ident = torch.arange(4 * 2048, dtype=torch.int64, device=DEVICE)
    assert run([1, 2, 3, 1], [50, 128, 200, 1024], [1] * 4, lut=ident, window=128, tbl=big)[0][4] == 434


def test_bs_zero_launches_and_writes_totals():
    """numba#4140, #5017: zero-size inputs and bs = 0 still launch one block and write the totals."""
    kw = random_plan(1, 0, lut=False, hazards=False, capacity=0)
    got = check_against_reference(kw)
    assert got["out_verify_offsets_scratch"][0] == 0 and got["out_write_offsets"][0] == 0
    assert (int(got["out_verify_num_valid"][0]), int(got["out_verify_enable"][0])) == (0, 1)
    empty_table = clone(kw)
    empty_table["req_to_token"] = torch.zeros((3, 0), dtype=torch.int32, device=DEVICE)
    check_against_reference(empty_table)


def test_no_seed_read_at_column_minus_one():
    """numba#8028: prefix 0 must not read table[row, -1] (or the previous row's last column)."""
    kw = random_plan(2, 4, lut=False, hazards=False)
    kw["req_pool_indices"].copy_(torch.tensor([2, 3, 1, 2]))
    kw["prefix_lens"].copy_(torch.tensor([0, 0, 1, 0]))
    kw["extend_seq_lens"].copy_(torch.tensor([3, 1, 1, 2]))
    kw["req_to_token"].fill_(777)
    kw["req_to_token"][1, 0] = 555
    got = check_against_reference(kw)
    assert got["out_write_seed_slot_indices"][:4].tolist() == [-1, -1, 555, -1]


def test_constants_are_frozen_closure_values(monkeypatch):
    """numba#3265: the kernel reads no module-level constant, so patching one changes nothing."""
    fn = nb.build_kernel(use_shuffle=False, padding=0, no_seed=-1, max_threads=32, items=4)
    module_names = {n for n in fn.__code__.co_names if n in vars(numba_cuda_kernel)}
    assert module_names == {"cuda", "np"}  # modules only; constants arrive as closure cells
    assert {"padding", "no_seed", "slots", "use_shuffle"} <= set(fn.__code__.co_freevars)
    kw = random_plan(3, 40, lut=True, hazards=True)
    before = check_against_reference(kw)
    monkeypatch.setattr(nb, "NO_SEED", -99)
    monkeypatch.setattr(nb, "REQ_POOL_IDX_PADDING", 5)
    after = check_against_reference(kw)
    for name in OUT:
        assert torch.equal(before[name], after[name])


def test_shrinking_batch_keeps_stale_tail_and_is_deterministic():
    kw = random_plan(4, 50, lut=True, hazards=True)
    nb.launch(**kw)
    first = clone(kw)
    small = random_plan(5, 10, lut=True, hazards=True)
    for name in OUT:
        small[name] = kw[name]  # same buffers, smaller batch
    small["verify_capacity"] = kw["verify_capacity"]
    ref = clone(small)
    python_planner.launch(**ref)
    nb.launch(**small)
    for name in OUT:
        assert torch.equal(small[name].cpu(), ref[name].cpu()), name
    assert torch.equal(kw["out_write_seed_slot_indices"][10:50].cpu(),
                       first["out_write_seed_slot_indices"][10:50].cpu())
    again = clone(small)
    poison(again)
    nb.launch(**again)
    assert torch.equal(again["out_write_offsets"][:11].cpu(), small["out_write_offsets"][:11].cpu())


def test_documented_error_before_launch_and_changed_metadata_revalidated():
    kw = random_plan(6, 8, lut=False, hazards=False)
    nb.launch(**clone(kw))  # memoised as valid
    bad = clone(kw)
    bad["prefix_lens"] = torch.zeros(16, dtype=torch.int64, device=DEVICE)[::2]  # same length
    with pytest.raises(ValueError, match="kv-canary: prefix_lens must be contiguous"):
        nb.launch(**bad)
    assert (bad["out_write_offsets"] == POISON64).all()
    bad = clone(kw)
    bad["out_write_seed_slot_indices"] = bad["out_write_seed_slot_indices"][:4]
    with pytest.raises(ValueError, match=r"write_offsets_len must equal write_req_capacity \+ 1, "
                                         r"got 12 and 4"):
        nb.launch(**bad)


def test_probe_reports_mode_and_numpy_hint():
    a = nb.probe()
    assert (a.available, a.mode, a.device) == (True, nb.MODE, DEVICE)
    hint = nb.explain_failure("AttributeError: module 'numpy' has no attribute 'row_stack'")
    assert "numpy<2.5" in hint and "docs/numba-numpy.md" in hint


# ---- GPU only ----------------------------------------------------------------------------------

def shared_memory_scan_planner(**kw) -> None:
    """The planner with the shared-memory scan (the simulator's) compiled for the GPU."""
    plan, buffers = nb.validate_arguments(kw)
    nb.packed_launch.launch_gpu(plan, buffers, tuple(kw[n] for n in IN[:3]), use_shuffle=False)


@gpu
def test_gpu_block_boundaries_both_scans_and_numba_launch_path(monkeypatch):
    for bs in (1, 64, 511, 512, 513, 1025, 4095, 4096):
        check_against_reference(random_plan(bs, bs, lut=True, hazards=True))
        check_against_reference(random_plan(bs, bs, lut=True, hazards=True),
                                planner=shared_memory_scan_planner)
    monkeypatch.setattr(nb.packed_launch, "LAUNCH_PATH", "numba")
    validate_cache.clear()  # no packed records left from the driver path
    for bs in (1, 777):
        check_against_reference(random_plan(bs + 1, bs, lut=False, hazards=True))


@gpu
@pytest.mark.parametrize("bs", [1, 64, 512, 4096])
def test_gpu_cuda_graph_capture_and_replay(bs):
    """Capture once, refill inputs in place, replay: same outputs as eager, several batches."""
    static = random_plan(100 + bs, bs, lut=True, hazards=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        nb.launch(**static)  # warm-up (compile, pack) off the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        nb.launch(**static)
    for step in range(4):
        fresh = random_plan(200 + 10 * bs + step, bs, lut=True, hazards=True,
                            capacity=static["verify_capacity"])
        for name in ("req_pool_indices", "prefix_lens", "extend_seq_lens", "req_to_token",
                     "full_to_swa_index_mapping"):
            static[name].copy_(fresh[name])
        poison(static)
        graph.replay()
        eager = clone(static)
        poison(eager)
        nb.launch(**eager)
        torch.cuda.synchronize()
        ref = check_against_reference(clone(static))
        for name in OUT:
            assert torch.equal(static[name], eager[name]), (step, name)
            assert torch.equal(static[name], ref[name]), (step, name)


@gpu
def test_gpu_a_caller_that_never_probed_and_captures_first_gets_no_check_in_its_graph(monkeypatch):
    """A server that captures its first call without ``probe``: the packed launch's self-check (it
    makes sample tensors on the device) waits for the first launch not captured, and the graph
    holds the plan alone: its replay plans right, and no packing was chosen during the capture."""
    monkeypatch.setattr(nb.packed_launch, "LAUNCH", None)
    monkeypatch.setattr(nb.packed_launch, "LAUNCH_PATH", "driver")
    monkeypatch.setattr(nb.packed_launch, "FALLBACK_REASON", None)
    validate_cache.clear()  # no packed record from an earlier test
    static = random_plan(41, 300, lut=True, hazards=False)
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        nb.launch(**static)
    assert nb.packed_launch.LAUNCH is None  # nothing chosen, nothing sampled, under capture
    poison(static)
    graph.replay()
    torch.cuda.synchronize()
    ref = check_against_reference(clone(static))
    for name in OUT:
        assert torch.equal(static[name], ref[name]), name
    eager = clone(static)
    poison(eager)
    nb.launch(**eager)  # the first launch not captured: the check, then the packed launch
    torch.cuda.synchronize()
    assert nb.packed_launch.LAUNCH is not None and nb.packed_launch.LAUNCH_PATH == "driver"
    for name in OUT:
        assert torch.equal(eager[name], ref[name]), name
    validate_cache.clear()


@gpu
def test_gpu_inputs_written_on_a_side_stream_are_seen():
    """numba#7706: the launch goes on torch's current stream, so stream order is respected."""
    kw = random_plan(7, 4096, lut=True, hazards=False)
    final = random_plan(8, 4096, lut=True, hazards=False, capacity=kw["verify_capacity"])
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):  # planner on the side stream, right after a slow input write
        torch.cuda._sleep(50_000_000)
        kw["prefix_lens"].copy_(final["prefix_lens"])
        nb.launch(**kw)
    torch.cuda.synchronize()
    ref = check_against_reference(clone(kw))
    assert torch.equal(kw["out_verify_offsets_scratch"], ref["out_verify_offsets_scratch"])
    poison(kw)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):  # input written on the side stream, planner on the main one
        torch.cuda._sleep(50_000_000)
        kw["extend_seq_lens"].copy_(final["extend_seq_lens"])
    torch.cuda.current_stream().wait_stream(side)
    nb.launch(**kw)
    torch.cuda.synchronize()
    ref = check_against_reference(clone(kw))
    assert torch.equal(kw["out_write_offsets"], ref["out_write_offsets"])


def test_both_packings_lay_out_numba_parameters_as_numba_does():
    """``_params`` flattens Numba arrays (meminfo, parent, nitems, itemsize, data, shape...,
    strides... in bytes) for the entries planner's driver launch; ``_pointer_params`` gives the
    offsets kernels' eleven data pointers, the workspace as an array, the scalars, then the
    table's shape. Both are checked against Numba's own marshalling on a GPU (at probe); here,
    against the layouts written out by hand."""
    table = torch.zeros((3, 5), dtype=torch.int32)
    vec = torch.zeros(4, dtype=torch.int64)
    assert nb.packed_launch.array_parameters((table, vec), 7, 8) == [
        0, 0, 15, 4, table.data_ptr(), 3, 5, 20, 4,
        0, 0, 4, 8, vec.data_ptr(), 4, 8, 7, 8]
    ones = [torch.zeros(2, dtype=torch.int64) for _ in range(11)]
    ones[3] = table
    ws = torch.zeros(6, dtype=torch.int64)
    assert nb.packed_launch.pointer_params((*ones, ws), 1, 2, 3, 4, 5) == [
        *(t.data_ptr() for t in ones), 0, 0, 6, 8, ws.data_ptr(), 6, 8, 1, 2, 3, 4, 5, 3, 5]


def test_packed_launch_rewrites_its_cells_for_each_batch():
    """The driver path's cells after set_batch are exactly the packing of the new call (checked
    here on the CPU; on the GPU the packing itself is checked against Numba's at probe)."""
    kw = random_plan(3, 5, lut=True, hazards=False)
    plan, buffers = nb.validate_arguments(kw)
    packed = nb.packed_launch.PackedLaunch(plan, buffers)
    for bs in (5, 9, 0, 9, 1):
        step = random_plan(10 + bs, bs, lut=True, hazards=False)
        request = [step[n] for n in IN[:3]]
        packed.set_batch(bs, *request)
        blocks, threads, chunk, _key = nb.launch_shape(bs)
        ws = nb.lookback_kernel.workspace(buffers.device)  # the look-back designs' workspace
        want = nb.packed_launch.pointer_params((*request, *buffers.tensors, ws), bs,
                                 plan.lut_len, *nb._int64_scalars(plan), chunk)
        assert [c.value for c in packed.cells] == want, bs
        assert (packed.blocks.value, packed.threads.value) == (blocks, threads)
