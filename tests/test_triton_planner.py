"""The Triton planner against the pure-Python planner, byte for byte, on poisoned buffers.

Runs compiled on a CUDA machine and under Triton's interpreter elsewhere (``impls.offsets_planner.triton_planner.MODE``).
Random plans cover bs 0, 1, 33, 1025 and 4096 with padding rows, negative values, SWA with a LUT
and every hazard of spec section 6; each runs under several ``num_warps`` (multi-warp scans have
been wrong on a few lanes: ROCm/triton#947) and with a block wider than bs. Every element outside
the defined regions of spec section 5 must keep its poison (triton#3281, triton#5048).
"""

from __future__ import annotations

import pytest
import torch

from impls.offsets_planner import availability, python_planner
from impls.offsets_planner import triton_planner as tp
from impls.offsets_planner import validate_cache
from impls.offsets_planner.constants import SCRATCH_MIN_LEN
from impls.offsets_planner.errors import PlanError

DEVICE = "cuda" if tp.MODE == "gpu" else "cpu"
pytestmark = pytest.mark.skipif(tp.MODE is None, reason=f"triton planner unavailable: {tp.probe().reason}")
OUT_DTYPES = {"out_verify_offsets_scratch": torch.int64, "out_write_offsets": torch.int64,
              "out_write_seed_slot_indices": torch.int64, "out_verify_num_valid": torch.int32,
              "out_verify_enable": torch.int32, "out_write_num_valid_reqs": torch.int32}
INPUTS = ("req_pool_indices", "prefix_lens", "extend_seq_lens", "req_to_token", "full_to_swa_index_mapping")


def _ints(g: torch.Generator, n: int, lo: int, hi: int) -> torch.Tensor:
    return torch.randint(lo, hi, (n,), generator=g, dtype=torch.int64)


def random_case(bs: int, seed: int, scenario: str) -> dict:
    """Launcher kwargs on the CPU for a random plan; poisoned outputs, spare capacity and scratch.

    scenario: ``plain`` (no LUT, W = 0), ``swa`` (LUT, W > 0 around the prefixes) or ``hazard``
    (rows outside the table, prefixes past the row, negative slots and values, a short LUT).
    """
    g = torch.Generator().manual_seed(seed * 7919 + bs)
    max_reqs = int(_ints(g, 1, 2, 40)) if bs else 3
    max_seq_len = int(_ints(g, 1, 1, 300))
    pick = torch.rand(bs, generator=g)
    rows = _ints(g, bs, 1, max_reqs)
    rows[pick < 0.2] = 0  # padding rows, with garbage prefix and extend
    prefix = _ints(g, bs, 0, max_seq_len + 1)
    extend = _ints(g, bs, 0, 9)
    extend[torch.rand(bs, generator=g) < 0.2] = 0
    table = torch.randint(0, 1 << 20, (max_reqs, max_seq_len), generator=g, dtype=torch.int32)
    lut, window = None, 0
    if scenario == "swa":
        lut = _ints(g, (1 << 20) + 1, 0, 1 << 40)
        window = int(_ints(g, 1, 1, max_seq_len + 2))
    if scenario == "hazard":
        rows[(pick >= 0.2) & (pick < 0.3)] = -_ints(g, bs, 1, 5)[(pick >= 0.2) & (pick < 0.3)]
        rows[(pick >= 0.3) & (pick < 0.4)] = max_reqs + _ints(g, bs, 0, 3)[(pick >= 0.3) & (pick < 0.4)]
        prefix[torch.rand(bs, generator=g) < 0.2] += max_seq_len + 5  # past the row: clamp
        prefix[torch.rand(bs, generator=g) < 0.1] *= -1
        extend[torch.rand(bs, generator=g) < 0.1] = -3
        table[torch.rand(table.shape, generator=g) < 0.2] *= -1  # negative slots pass through
        table[0, 0] = -(1 << 31)
        lut = _ints(g, int(_ints(g, 1, 1, 50)), -(1 << 40), 1 << 40)  # short: slots clamp
        window = int(_ints(g, 1, -3, max_seq_len))
    total = int(torch.where(rows != 0, prefix.clamp(min=0), 0).sum())
    capacity = max(0, total + int(_ints(g, 1, -3, 3)))
    kw = {"req_pool_indices": rows, "prefix_lens": prefix, "extend_seq_lens": extend,
          "req_to_token": table, "full_to_swa_index_mapping": lut,
          "swa_window_size": window, "verify_capacity": capacity}
    cap = bs + int(_ints(g, 1, 0, 5))
    lengths = {"out_verify_offsets_scratch": SCRATCH_MIN_LEN + 3, "out_write_offsets": cap + 1,
               "out_write_seed_slot_indices": cap}
    for name, dtype in OUT_DTYPES.items():
        info = torch.iinfo(dtype)
        kw[name] = torch.randint(info.min, info.max, (lengths.get(name, 1),), generator=g, dtype=dtype)
    return kw


def on(kw: dict, device: str) -> dict:
    return {k: v.clone().to(device) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


def run_triton(kw: dict, **config) -> dict:
    """Run the Triton planner on a device copy of ``kw``; return the copy, moved back to the CPU."""
    dev = on(kw, DEVICE)
    tp.plan_launch(**config, **dev) if config else tp.launch(**dev)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    return on(dev, "cpu")


def expected(kw: dict) -> dict:
    ref = on(kw, "cpu")
    python_planner.launch(**ref)
    return ref


def assert_same(got: dict, want: dict, kw: dict) -> None:
    bs = kw["req_pool_indices"].shape[0]
    for name in INPUTS:
        if kw[name] is not None:
            assert torch.equal(got[name], kw[name]), f"input {name} modified"
    for name in OUT_DTYPES:
        g, w = got[name], want[name]
        bad = (g != w).nonzero().flatten()
        assert bad.numel() == 0, (f"{name}[{int(bad[0])}]: got {int(g[bad[0]])}, want "
                                  f"{int(w[bad[0]])} (bs={bs}, {bad.numel()} differ)")
    # Past the defined regions the poison must survive (spec section 5, "nothing else is written").
    for name, start in (("out_verify_offsets_scratch", bs + 1), ("out_write_offsets", bs + 1),
                        ("out_write_seed_slot_indices", bs)):
        assert torch.equal(got[name][start:], kw[name][start:]), f"{name} written past its region"


# (bs, tile, num_warps); tile 0 = one program over the whole block. One warp over 2048+ lanes
# takes 7-30 s to compile on the H200, so large single-program batches take more warps.
# Every (tile, num_warps) the benchmark may choose (impls/offsets_planner/harness/sweeps/triton_sweep.py, SWEEP) is here.
CONFIGS = [(bs, 0, w) for bs in (0, 1, 33) for w in (1, 2, 4, 8)]
CONFIGS += [(33, 32, 1), (33, 16, 2), (33, 64, 2), (500, 0, 8), (500, 0, 16), (4096, 0, 32)]
CONFIGS += [(bs, 0, w) for bs in (1025, 4096) for w in (4, 16)]
CONFIGS += [(bs, t, w) for bs in (500, 1025, 4096) for t, w in ((128, 1), (128, 4), (256, 8), (512, 16))]


@pytest.mark.parametrize("scenario", ["plain", "swa", "hazard"])
@pytest.mark.parametrize(("bs", "tile", "num_warps"), CONFIGS)
def test_random_plans_match_python(bs, tile, num_warps, scenario):
    tile = tile or tp.block_for(bs)
    for seed in range(2 if bs <= 33 else 1):
        kw = random_case(bs, seed, scenario)
        want = expected(kw)
        assert_same(run_triton(kw, num_warps=num_warps, tile=tile), want, kw)
        if num_warps == 4:  # a carry block far wider than bs: lanes past bs must never count
            assert_same(run_triton(kw, num_warps=num_warps, tile=min(tile, 128), block=4096), want, kw)


def test_default_config_and_determinism():
    kw = random_case(1025, 3, "hazard")
    want = expected(kw)
    first, second = run_triton(kw), run_triton(kw)
    assert_same(first, want, kw)
    assert_same(second, want, kw)


def _linear(max_reqs: int, max_seq_len: int) -> torch.Tensor:
    return torch.arange(max_reqs * max_seq_len, dtype=torch.int32).reshape(max_reqs, max_seq_len)


def _spec_case(rpi, prefix, extend, *, table, lut=None, window=0, capacity=1 << 20) -> dict:
    kw = {"req_pool_indices": torch.tensor(rpi, dtype=torch.int64),
          "prefix_lens": torch.tensor(prefix, dtype=torch.int64),
          "extend_seq_lens": torch.tensor(extend, dtype=torch.int64),
          "req_to_token": table, "full_to_swa_index_mapping": lut,
          "swa_window_size": window, "verify_capacity": capacity}
    for name, dtype in OUT_DTYPES.items():
        n = {"out_verify_offsets_scratch": SCRATCH_MIN_LEN, "out_write_offsets": 9,
             "out_write_seed_slot_indices": 8}.get(name, 1)
        kw[name] = torch.full((n,), -99, dtype=dtype)
    return kw


def test_spec_section7_values():
    """Hand-written values of spec section 7 (upstream's own tests), not the reference's output."""
    got = run_triton(_spec_case([1, 0, 2], [5, 99, 3], [1, 99, 1], table=_linear(4, 16)))
    assert got["out_verify_offsets_scratch"][:5].tolist() == [0, 5, 5, 8, -99]
    assert got["out_write_offsets"].tolist() == [0, 1, 1, 2, -99, -99, -99, -99, -99]
    assert got["out_write_seed_slot_indices"][:4].tolist() == [20, -1, 34, -99]
    assert [int(got[n]) for n in list(OUT_DTYPES)[3:]] == [8, 1, 3]
    got = run_triton(_spec_case([1], [3], [1], table=_linear(4, 16), capacity=2))
    assert [int(got[n]) for n in list(OUT_DTYPES)[3:]] == [2, 0, 1]
    lut = torch.arange(65, dtype=torch.int64) + 100
    got = run_triton(_spec_case([1], [3], [1], table=_linear(4, 16), lut=lut, window=128))
    assert got["out_write_seed_slot_indices"][:2].tolist() == [118, -99]
    lut = torch.arange(2048 * 4, dtype=torch.int64)
    got = run_triton(_spec_case([1, 2, 3, 1], [50, 128, 200, 1024], [1] * 4, table=_linear(4, 2048),
                                lut=lut, window=128))
    assert int(got["out_verify_offsets_scratch"][4]) == 434
    got = run_triton(_spec_case([], [], [], table=_linear(4, 16)))
    assert got["out_verify_offsets_scratch"][:2].tolist() == [0, -99]
    assert [int(got[n]) for n in list(OUT_DTYPES)[3:]] == [0, 1, 0]


def test_hazards_pinned_values():
    """Spec section 6, this project's column: clamp LUT index, clamp position, no read off the table."""
    lut = torch.arange(10, dtype=torch.int64) + 500  # slots >= 10 clamp to index 9
    table = _linear(4, 16)
    table[2, 15] = -7  # a negative slot passes through the LUT untranslated
    table[1, 0] = 3  # translated without clamping: lut[3]
    kw = _spec_case([3, -1, 4, 2, 1], [40, 3, 3, 16, 1], [1, 1, 1, 1, 1], table=table, lut=lut,
                    window=8)
    got = run_triton(kw)
    assert got["out_write_seed_slot_indices"][:6].tolist() == [509, -1, -1, -7, 503, -99]
    assert_same(got, expected(kw), kw)
    empty = _spec_case([1, 2], [4, 9], [2, 3], table=torch.zeros((3, 0), dtype=torch.int32))
    got = run_triton(empty)  # max_seq_len == 0: nothing to read, seeds -1
    assert got["out_write_seed_slot_indices"][:3].tolist() == [-1, -1, -99]
    assert got["out_verify_offsets_scratch"][:3].tolist() == [0, 4, 13]


def test_totals_above_int32():
    big = 3 * (1 << 31)
    kw = _spec_case([1, 2, 0], [big, big, big], [big, 1, big], table=_linear(4, 16),
                    capacity=(1 << 40))
    got = run_triton(kw)
    assert got["out_verify_offsets_scratch"][:3].tolist() == [0, big, 2 * big]
    assert got["out_write_offsets"][:4].tolist() == [0, big, big + 1, big + 1]
    assert int(got["out_verify_num_valid"]) == python_planner._wrap(2 * big, 32)
    assert_same(got, expected(kw), kw)


def test_errors_are_the_validators():
    kw = on(random_case(33, 0, "plain"), DEVICE)
    kw["out_write_seed_slot_indices"] = kw["out_write_seed_slot_indices"][:32]
    with pytest.raises(PlanError) as triton_err:
        tp.launch(**kw)
    with pytest.raises(PlanError) as python_err:
        python_planner.launch(**kw)
    assert triton_err.value.error_id == python_err.value.error_id
    assert str(triton_err.value) == str(python_err.value)


def test_validation_memo_never_skips_a_changed_check():
    kw = on(random_case(33, 1, "swa"), DEVICE)
    validate_cache.clear()
    tp.launch(**kw)
    tp.launch(**kw)
    assert validate_cache.stats()["hits"] >= 1
    # Same objects, metadata changed in place: the memo must miss and the validator must raise.
    kw["out_write_offsets"].resize_(kw["out_write_offsets"].shape[0] + 1)
    with pytest.raises(PlanError) as err:
        tp.launch(**kw)
    assert err.value.error_id == "write-offsets-len-mismatch"
    kw["out_write_offsets"].resize_(kw["out_write_offsets"].shape[0] - 1)
    kw["req_to_token"] = kw["req_to_token"].t()  # non-contiguous view of the same storage
    with pytest.raises(PlanError, match="req_to_token must be contiguous"):
        tp.launch(**kw)
    # A different LUT object with the same metadata is the one the plan launches with.
    kw = on(random_case(33, 1, "swa"), DEVICE)
    tp.launch(**kw)
    lut2 = kw["full_to_swa_index_mapping"].clone() + 1
    plan = validate_cache.validate_launch_cached(**{**kw, "full_to_swa_index_mapping": lut2})
    assert plan.lut_tensor is lut2


def test_probe_and_registry():
    info = availability("triton")
    assert info.available and info.mode == tp.MODE
    assert info.device == ("cuda" if tp.MODE == "gpu" else "cpu")
    if not torch.cuda.is_available():
        assert tp.MODE == "interpreter"
    assert [tp.block_for(n) for n in (0, 32, 33, 512, 513, 4096)] == [32, 32, 128, 512, 2048, 4096]
    assert all(tile <= block and block % tile == 0 for block, (tile, _) in tp.CONFIG.items())


needs_cuda = pytest.mark.skipif(tp.MODE != "gpu", reason="needs a CUDA device (compiled Triton mode)")


@needs_cuda
@pytest.mark.parametrize("bs", [1, 33, 512, 4096])
def test_cuda_graph_capture_replay_matches_eager(bs):
    """Capture once, refill the inputs in place, replay: the same bytes as an eager launch."""
    static = on(random_case(bs, 100, "swa"), "cuda")
    poison = {name: static[name].clone() for name in OUT_DTYPES}
    tp.launch(**static)  # compile and warm the memo outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tp.launch(**static)
    for step in range(4):
        fresh = random_case(bs, 200 + step, "swa")
        for name in ("prefix_lens", "extend_seq_lens"):
            static[name].copy_(fresh[name])
        static["req_pool_indices"].copy_(fresh["req_pool_indices"] % static["req_to_token"].shape[0])
        static["req_to_token"].copy_(torch.randint(0, 1 << 20, static["req_to_token"].shape,
                                                   dtype=torch.int32))
        for name in OUT_DTYPES:
            static[name].copy_(poison[name])
        graph.replay()
        eager = on(static, "cuda")
        for name in OUT_DTYPES:
            eager[name].copy_(poison[name])
        tp.launch(**eager)
        torch.cuda.synchronize()
        replayed, eager = on(static, "cpu"), on(eager, "cpu")
        ref = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in replayed.items()}
        for name in OUT_DTYPES:
            ref[name] = poison[name].cpu()
        want = expected(ref)
        assert_same(replayed, want, ref)
        assert_same(eager, want, ref)
        assert int(replayed["out_write_num_valid_reqs"]) == bs


@needs_cuda
@pytest.mark.parametrize("bs", [1025, 4096])
def test_capture_first_without_a_workspace(bs, monkeypatch):
    """A look-back design's first launch under CUDA-graph capture, before the device has its
    workspace: the graph holds the ``roles`` stand-in (no workspace), and its replays with refilled
    inputs are exact; the next eager launch prepares again, makes the workspace and is exact; a
    graph captured after that holds the look-back kernel, and its replays are exact too."""
    from impls.offsets_planner import triton_roles_lookback as trl

    tp.launch(**on(random_case(bs, 7, "swa"), "cuda"))  # compile outside capture
    torch.cuda.synchronize()
    monkeypatch.setattr(trl._WORKSPACES, "by_device", {})
    static = on(random_case(bs, 101, "swa"), "cuda")
    poison = {name: static[name].clone() for name in OUT_DTYPES}

    draws = iter(range(300, 400))

    def check(run):
        fresh = random_case(bs, next(draws), "swa")  # new inputs every time
        for name in ("prefix_lens", "extend_seq_lens"):
            static[name].copy_(fresh[name])
        for name in OUT_DTYPES:
            static[name].copy_(poison[name])
        run()
        torch.cuda.synchronize()
        got = on(static, "cpu")
        ref = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in got.items()}
        for name in OUT_DTYPES:
            ref[name] = poison[name].cpu()
        assert_same(got, expected(ref), ref)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tp.launch(**static)
    assert trl.existing_workspace(static["prefix_lens"].device) is None
    for _ in range(2):
        check(graph.replay)
    check(lambda: tp.launch(**static))
    assert trl.existing_workspace(static["prefix_lens"].device) is not None
    second = torch.cuda.CUDAGraph()
    with torch.cuda.graph(second):
        tp.launch(**static)
    for _ in range(3):
        check(second.replay)
    check(graph.replay)


@needs_cuda
@pytest.mark.parametrize("bs", [1, 1025, 4096])
def test_fast_and_standard_launch_paths_agree(bs):
    for scenario in ("plain", "swa", "hazard"):
        kw = random_case(bs, 5, scenario)
        want = expected(kw)
        for fast in (False, True, True):  # the second fast call hits the compiled-kernel cache
            assert_same(run_triton(kw, fast=fast), want, kw)
        assert_same(run_triton(kw, num_warps=16, fast=True), want, kw)
    # a multi-program launch of CONFIG's kernel ran (key: device, "config", BLOCK, TILE, ...)
    assert any(k[1] == "config" and k[3] < k[2] for k in tp._COMPILED) or bs <= 32
    assert tp._hooks_idle(), "no launch hook is set, so the direct launcher path must be taken"


def test_fast_launch_self_check_falls_back_with_one_line_warning(monkeypatch):
    """A fast launch that raises or misplans is refused once, with one warning line, and
    FAST_LAUNCH_CHECK then keeps every launch on Triton's standard path."""
    monkeypatch.setattr(tp, "FAST_LAUNCH_CHECK", None)
    kw = tp.probe_kwargs(DEVICE)
    want = {n: v.clone() for n, v in kw.items() if n.startswith("out_")}
    python_planner.launch(**{**kw, **want})

    def raising(**_):
        raise RuntimeError("CompiledKernel.run changed its signature")

    def misplanning(**kw):
        tp.launch(**kw)
        kw["out_write_seed_slot_indices"][3] += 1

    with pytest.warns(RuntimeWarning) as caught:
        assert tp.run_self_check(DEVICE, fast=raising) is False
    assert tp.FAST_LAUNCH_CHECK is False and len(caught) == 1
    message = str(caught[0].message)
    assert "\n" not in message and "RuntimeError: CompiledKernel.run changed" in message
    assert "using Triton's standard launch" in message
    with pytest.warns(RuntimeWarning, match=r"self-check \(wrong outputs\)"):
        assert tp.self_check(tp.launch, misplanning, kw) is False
    assert tp.run_self_check(DEVICE, fast=tp.launch) is True  # agreeing paths pass, no warning
    got = {n: torch.full_like(v, -3) for n, v in want.items()}
    tp.launch(**{**kw, **got})
    assert all(torch.equal(got[n][:38], want[n][:38]) for n in ("out_write_offsets",
                                                                "out_verify_offsets_scratch"))
    assert torch.equal(got["out_write_seed_slot_indices"][:37], want["out_write_seed_slot_indices"][:37])


class _FakeCompiled:
    """Stands in for Triton's CompiledKernel on the CPU: records fast launches."""

    def __init__(self, log: list) -> None:
        self.log, self.function, self.packed_metadata = log, "fn-handle", "packed"
        self.loads = 0

    @property
    def run(self):
        self.loads += 1
        return lambda *args: self.log.append(("fast", args))


def test_fast_launch_passes_the_standard_launchs_arguments(monkeypatch):
    """The GPU launch path, driven on the CPU with stand-ins for the kernel, the compiled kernel
    and the driver: the first launch of a compile key takes the standard path, later launches (new
    request tensors, another bs of the same block) call the compiled kernel's launcher with the
    grid, the stream, its handles and then exactly the standard launch's arguments."""
    log: list = []
    compiled = _FakeCompiled(log)

    class Kernel:
        def __getitem__(self, grid):
            def standard(*args, num_warps):
                log.append(("standard", grid, args, num_warps))
                return compiled
            return standard

    class Driver:
        def get_current_stream(self, device):
            return f"stream{device}"

        def get_current_device(self):
            return 0

    monkeypatch.setattr(tp, "_GPU", True)
    monkeypatch.setattr(tp, "_design_kernel", lambda design: Kernel())
    monkeypatch.setattr(tp, "_driver", Driver())
    monkeypatch.setattr(tp, "_COMPILED", {})
    monkeypatch.setattr(tp, "FAST_LAUNCH_CHECK", True)
    monkeypatch.setattr(torch.cuda, "device", lambda device: __import__("contextlib").nullcontext())
    validate_cache.clear()
    kw = random_case(9, 3, "swa")
    steps = [dict(kw, **{n: kw[n][:k].clone() for n in INPUTS[:3]}) for k in (9, 9, 7)]
    for step in steps:
        tp.launch(**step)
    (kind, grid, standard, warps), *fast = log
    # bs 9 and 7 (block 32): the roles design, one seed program and two scan programs
    assert kind == "standard" and grid == (3,) and warps == tp.DESIGNS[32][2]
    assert [entry[0] for entry in fast] == ["fast", "fast"]
    for step, (_, args) in zip(steps[1:], fast):
        bs = step[INPUTS[0]].shape[0]
        assert args[:9] == (3, 1, 1, "stream0", "fn-handle", "packed", None, None, None)
        assert all(a is step[n] for a, n in zip(args[9:12], INPUTS[:3]))
        assert args[12:20] == standard[3:11]  # the buffer set's tensors, the same objects
        assert args[20] == bs and args[21:] == standard[12:]  # bs, then the other integers
    assert compiled.loads == 2  # the launcher handle read once per prepared launch, not per call
    monkeypatch.setattr(tp, "FAST_LAUNCH_CHECK", False)  # a failed self-check: standard only
    tp.launch(**steps[0])
    assert log[-1][0] == "standard"
    validate_cache.clear()


def test_a_caller_that_never_probed_gets_the_self_check_at_its_first_launch_not_captured(monkeypatch):
    """A server that calls ``launch`` without ``probe`` (upstream's wrapper does not probe) runs the
    fast launch's self-check once, at its first launch outside CUDA-graph capture, and launches
    through the fast path from then on; a launch under capture never runs it (it synchronises)."""
    log: list = []
    compiled = _FakeCompiled(log)

    class Kernel:
        def __getitem__(self, grid):
            def standard(*args, num_warps):
                log.append(("standard", grid))
                return compiled
            return standard

    class Driver:
        def get_current_stream(self, device):
            return "stream0"

        def get_current_device(self):
            return 0

    checks: list = []

    def self_check(*args, **kwargs):
        checks.append(args)
        tp.FAST_LAUNCH_CHECK = True
        return True

    capturing = [True]
    monkeypatch.setattr(tp, "_GPU", True)
    monkeypatch.setattr(tp, "_design_kernel", lambda design: Kernel())
    monkeypatch.setattr(tp, "_driver", Driver())
    monkeypatch.setattr(tp, "_COMPILED", {})
    monkeypatch.setattr(tp, "FAST_LAUNCH_CHECK", None)
    monkeypatch.setattr(tp, "run_self_check", self_check)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: capturing[0])
    monkeypatch.setattr(torch.cuda, "device", lambda device: __import__("contextlib").nullcontext())
    validate_cache.clear()
    kw = random_case(9, 3, "swa")
    tp.launch(**kw)  # under capture: no self-check, the standard path
    tp.launch(**kw)
    assert checks == [] and tp.FAST_LAUNCH_CHECK is None
    assert [entry[0] for entry in log] == ["standard", "standard"]
    capturing[0] = False
    tp.launch(**kw)  # the first launch not captured: the self-check, then the fast path
    tp.launch(**kw)
    assert checks == [()] and tp.FAST_LAUNCH_CHECK is True
    assert [entry[0] for entry in log] == ["standard", "standard", "fast", "fast"]
    validate_cache.clear()


@pytest.mark.parametrize(("early_poll", "epoch_load"), [(False, True), (True, True), (False, False)])
def test_lookback_flags_reach_the_default_launch(early_poll, epoch_load, monkeypatch):
    """``EARLY_POLL`` and ``EPOCH_LOAD`` set on the planner module change the default launch's
    kernel key above bs 512 (the look-back design) and the plans stay the pure-Python planner's."""
    monkeypatch.setattr(tp, "EARLY_POLL", early_poll)
    monkeypatch.setattr(tp, "EPOCH_LOAD", epoch_load)
    for i, bs in enumerate((513, 2048, 4096)):
        kw = random_case(bs, i, ("plain", "swa", "hazard")[i])
        dev = on(kw, DEVICE)
        tp.launch(**dev)
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        assert_same(on(dev, "cpu"), expected(kw), kw)
        plan, buffers = validate_cache.lookup(dev)
        key = buffers.records[plan.bs].key
        assert key[1] == "roles-lookback"
        assert key[-2:] == (early_poll, epoch_load)
