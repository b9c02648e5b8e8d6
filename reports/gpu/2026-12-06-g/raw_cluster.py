"""Is a thread-block cluster the lever at bs 4096? The whole plan in raw CUDA C++ (NVRTC), its two
scans' carries through distributed shared memory (DSMEM) of a cluster, against the chain floor in
raw CUDA, the frameworks' chain floors and both current planners, replayed in turn
(``../2026-12-04-b/replay_rounds.py``).

Triton 3.6 refuses a multi-CTA scan and Numba cannot launch a cluster (``../2026-12-06-f/``), so
this asks the hardware first: if a raw cluster plan is not within ~1.1x of the raw chain floor,
no framework's cluster plan will be.

Kernels (``SOURCE``): ``plan_R{r}_C{c}``: one thread per ``r`` consecutive rows, ``c`` CTAs per
cluster (``c`` = 1: no cluster, one CTA must hold every row); per thread the three request loads,
then the table entry, then the LUT entry (the seed: spec section 5, in-contract guards only), the
two scans (verify lengths, write lengths) by warp shuffles, the warp totals through shared memory,
then the cluster's preceding CTAs' totals read through DSMEM between two cluster barriers (the
second: no CTA leaves while another still reads its shared memory). ``chain``: the chain floor, one
thread per row, no scan.

Every plan row is checked byte for byte against the pure-Python planner (all six outputs) on the
serving workload at bs 1, 64, 512, 4096 before and after its replays. ``nocarry_*`` (bs 4096): the
plan without the carries between CTAs (offsets wrong past the first CTA, not checked), launched as
clusters of 8 or as plain CTAs: what the launch shape costs without the DSMEM exchange; with each
warp's scan only (no barrier) or no scan at all (every output still written): what the CTA's scan
costs. ``--only-4096``: bs 4096 alone.

    python reports/gpu/2026-12-06-g/raw_cluster.py          # from the repository root, on a GPU
    python reports/gpu/2026-12-06-g/raw_cluster.py --compile-only   # NVRTC only (any machine)
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = r"""
typedef long long i64;

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a; }
__device__ __forceinline__ i64 remote_load(const i64* p, unsigned rank) {
  unsigned a = smem_addr(p), r; i64 v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
  asm volatile("ld.shared::cluster.s64 %0, [%1];" : "=l"(v) : "r"(r) : "memory");
  return v; }

__device__ __forceinline__ i64 seed_of(i64 row, i64 p, i64 wl, const int* table, i64 stride0,
                                       i64 rows, i64 cols, const i64* lut, i64 lut_len) {
  i64 slot = -1;
  if (row > 0 && row < rows && p > 0 && wl > 0 && cols > 0) {
    slot = table[row * stride0 + (p - 1 < cols - 1 ? p - 1 : cols - 1)];
    if (lut_len > 0 && slot >= 0) slot = lut[slot < lut_len - 1 ? slot : lut_len - 1];
  }
  return slot; }

template <int R, int C, int SCAN = 2>  // SCAN 2: the CTA's scan; 1: each warp's only; 0: none
__device__ __forceinline__ void plan_body(
    const i64* __restrict__ rpi, const i64* __restrict__ prefix, const i64* __restrict__ extend,
    const int* __restrict__ table, const i64* __restrict__ lut, i64* __restrict__ vo,
    i64* __restrict__ wo, i64* __restrict__ seeds, int* __restrict__ num_valid,
    int* __restrict__ enable, int* __restrict__ num_reqs, i64 bs, i64 stride0, i64 rows, i64 cols, i64 lut_len, i64 window, i64 capacity) {
  __shared__ i64 warp_v[32], warp_w[32], block_tot[2];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const i64 base = ((i64)blockIdx.x * blockDim.x + threadIdx.x) * R;
  i64 vl[R], wl[R], sd[R], sv = 0, sw = 0;
#pragma unroll
  for (int k = 0; k < R; ++k) {
    i64 i = base + k, row = 0, p = 0, e = 0;
    if (i < bs) { row = rpi[i]; p = prefix[i]; e = extend[i]; }
    bool act = row != 0;
    i64 ws = window > 0 ? (p - window > 0 ? p - window : 0) : 0;
    vl[k] = act ? (p - ws > 0 ? p - ws : 0) : 0;
    wl[k] = act ? (e > 0 ? e : 0) : 0;
    sd[k] = act ? seed_of(row, p, wl[k], table, stride0, rows, cols, lut, lut_len) : -1;
    sv += vl[k]; sw += wl[k];
  }
  i64 iv = sv, iw = sw;  // inclusive warp scan of the thread sums
  if (SCAN >= 1) {
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    i64 tv = __shfl_up_sync(0xffffffffu, iv, d), tw = __shfl_up_sync(0xffffffffu, iw, d);
    if (lane >= d) { iv += tv; iw += tw; }
  }
  }
  if (SCAN == 2) {
  if (lane == 31) { warp_v[warp] = iv; warp_w[warp] = iw; }
  __syncthreads();
  if (warp == 0) {
    i64 xv = lane < nwarps ? warp_v[lane] : 0, xw = lane < nwarps ? warp_w[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      i64 tv = __shfl_up_sync(0xffffffffu, xv, d), tw = __shfl_up_sync(0xffffffffu, xw, d);
      if (lane >= d) { xv += tv; xw += tw; }
    }
    if (lane < nwarps) { warp_v[lane] = xv; warp_w[lane] = xw; }
    if (lane == 31) { block_tot[0] = xv; block_tot[1] = xw; }
  }
  __syncthreads();
  }
  i64 cv = (SCAN == 2 && warp > 0 ? warp_v[warp - 1] : 0) + iv - sv;  // exclusive, in the CTA
  i64 cw = (SCAN == 2 && warp > 0 ? warp_w[warp - 1] : 0) + iw - sw;
  i64 tv_all = SCAN == 2 ? block_tot[0] : iv, tw_all = SCAN == 2 ? block_tot[1] : iw;
  if (C > 1) {
    cluster_arrive();
    cluster_wait();
    const unsigned me = cluster_rank();
    i64 pv = 0, pw = 0, av = 0, aw = 0;
    for (unsigned r = 0; r < C; ++r) {  // every thread reads the (few) totals: no second sync
      i64 rv = remote_load(&block_tot[0], r), rw = remote_load(&block_tot[1], r);
      if (r < me) { pv += rv; pw += rw; }
      av += rv; aw += rw;
    }
    cv += pv; cw += pw; tv_all = av; tw_all = aw;
    cluster_arrive();  // this CTA's reads are done; wait before leaving (others may still read)
  }
#pragma unroll
  for (int k = 0; k < R; ++k) {
    i64 i = base + k;
    if (i < bs) { vo[i] = cv; wo[i] = cw; seeds[i] = sd[k]; }  // the seeds last: their loads
                                                               // overlap the scan
    cv += vl[k]; cw += wl[k];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {  // totals: the cluster's sums (C > 1) or the CTA's
    vo[bs] = tv_all; wo[bs] = tw_all;
    i64 nv = tv_all < capacity ? tv_all : capacity;
    num_valid[0] = (int)nv; enable[0] = tv_all > capacity ? 0 : 1; num_reqs[0] = (int)bs;
  }
  if (C > 1) cluster_wait();
}

#define PLAN(R, C, ATTR) extern "C" __global__ void ATTR plan_R##R##_C##C( \
    const i64* rpi, const i64* prefix, const i64* extend, const int* table, const i64* lut, \
    i64* vo, i64* wo, i64* seeds, int* nv, int* en, int* nr, i64 bs, i64 stride0, i64 rows, \
    i64 cols, i64 lut_len, i64 window, i64 capacity) { \
  plan_body<R, C>(rpi, prefix, extend, table, lut, vo, wo, seeds, nv, en, nr, bs, stride0, rows, \
                  cols, lut_len, window, capacity); }

PLAN(1, 1, )
PLAN(4, 1, )
PLAN(8, 1, )
PLAN(1, 2, __cluster_dims__(2, 1, 1))
PLAN(1, 4, __cluster_dims__(4, 1, 1))
PLAN(1, 8, __cluster_dims__(8, 1, 1))
PLAN(2, 2, __cluster_dims__(2, 1, 1))
PLAN(2, 4, __cluster_dims__(4, 1, 1))

// No carries (wrong offsets past the first CTA): what the launch shape alone costs.
#define NOCARRY(NAME, ATTR, SCAN) extern "C" __global__ void ATTR NAME( \
    const i64* rpi, const i64* prefix, const i64* extend, const int* table, const i64* lut, \
    i64* vo, i64* wo, i64* seeds, int* nv, int* en, int* nr, i64 bs, i64 stride0, i64 rows, \
    i64 cols, i64 lut_len, i64 window, i64 capacity) { \
  plan_body<1, 1, SCAN>(rpi, prefix, extend, table, lut, vo, wo, seeds, nv, en, nr, bs, stride0, \
                        rows, cols, lut_len, window, capacity); }
NOCARRY(nocarry_cluster8, __cluster_dims__(8, 1, 1), 2)
NOCARRY(nocarry_plain, , 2)
// Less of the scan: each warp's only (no barrier), or none (every output still written).
NOCARRY(nocarry_warp_only, , 1)
NOCARRY(nocarry_no_scan, , 0)

extern "C" __global__ void chain(const i64* rpi, const i64* prefix, const i64* extend,
    const int* table, const i64* lut, i64* out, i64 bs, i64 stride0, i64 rows, i64 cols,
    i64 lut_len) {
  i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < bs) {
    i64 row = rpi[i], p = prefix[i], e = extend[i];
    out[i] = seed_of(row, p, e, table, stride0, rows, cols, lut, lut_len);
  }
}
"""
KERNELS = ["plan_R1_C1", "plan_R4_C1", "plan_R8_C1", "plan_R1_C2", "plan_R1_C4", "plan_R1_C8",
           "plan_R2_C2", "plan_R2_C4", "nocarry_cluster8", "nocarry_plain", "nocarry_warp_only",
           "nocarry_no_scan", "chain"]
ARCH = "sm_90"


def compile_cubin() -> bytes:
    """The cubin of ``SOURCE`` for ``ARCH``: NVRTC (cuda.bindings), else ``nvcc -cubin``.
    Raises RuntimeError with the compiler's log."""
    try:
        from cuda.bindings import nvrtc

        err, prog = nvrtc.nvrtcCreateProgram(SOURCE.encode(), b"raw_cluster.cu", 0, [], [])
        opts = [f"--gpu-architecture={ARCH}".encode(), b"-std=c++17"]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        if res != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"nvrtc: {res}: {log.decode(errors='replace')}")
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = b" " * size
        nvrtc.nvrtcGetCUBIN(prog, cubin)
        print(f"compiled with NVRTC {nvrtc.nvrtcVersion()[1:]} for {ARCH}: {size} bytes")
        return cubin
    except (ImportError, OSError, RuntimeError) as exc:
        nvcc = shutil.which("nvcc") or next((p for p in ("/usr/local/cuda/bin/nvcc",)
                                             if os.path.exists(p)), None)
        if not nvcc:
            raise RuntimeError(f"no NVRTC ({exc}) and no nvcc") from exc
        print(f"NVRTC failed ({str(exc)[:300]}); nvcc: {nvcc}")
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "k.cu"), os.path.join(d, "k.cubin")
            open(src, "w").write(SOURCE)
            subprocess.run([nvcc, "-cubin", f"-arch={ARCH}", "-O3", "-std=c++17", "-o", out, src],
                           check=True)
            return open(out, "rb").read()


class Module:
    """The cubin loaded into the current (torch's primary) context; ``launch`` on torch's stream
    (capturable)."""

    def __init__(self, cubin: bytes):
        from cuda.bindings import driver

        self.d = driver
        (err,) = driver.cuInit(0)
        err, self.mod = driver.cuModuleLoadData(cubin)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuModuleLoadData: {err}")
        self.fn = {}
        for name in KERNELS:
            err, f = driver.cuModuleGetFunction(self.mod, name.encode())
            if err != driver.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"cuModuleGetFunction {name}: {err}")
            self.fn[name] = f

    def launch(self, name, grid, block, args):
        import torch

        stream = self.d.CUstream(torch.cuda.current_stream().cuda_stream)
        vals = tuple(a.data_ptr() if hasattr(a, "data_ptr") else int(a) for a in args)
        types = tuple(ctypes.c_void_p if hasattr(a, "data_ptr") else ctypes.c_longlong
                      for a in args)
        (err,) = self.d.cuLaunchKernel(self.fn[name], grid, 1, 1, block, 1, 1, 0, stream,
                                       (vals, types), 0)
        if err != self.d.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel {name} grid {grid} block {block}: {err}")


def plan_call(mod, name, threads, rows_per_thread, cluster):
    """A make(kw) for ``replay_rounds``: the raw plan kernel ``name`` over ``kw``."""
    from impls.offsets_planner.contract import OUTPUT_NAMES
    from impls.offsets_planner.harness.sweeps.one_pass_calls import _chain_args

    def make(kw):
        rpi, prefix, extend, table, lut, _seeds, lut_len = _chain_args(kw)
        bs = int(rpi.shape[0])
        ctas = max(1, -(-bs // (threads * rows_per_thread)))
        ctas = -(-ctas // cluster) * cluster
        window = max(0, int(kw["swa_window_size"]))
        args = (rpi, prefix, extend, table, lut, *(kw[n] for n in OUTPUT_NAMES), bs,
                table.stride(0), table.shape[0], table.shape[1], lut_len, window,
                int(kw["verify_capacity"]))
        return lambda: mod.launch(name, ctas, threads, args)
    return make


def chain_call(mod, threads):
    """A make(kw): the raw chain floor (``chain``), ``threads`` a CTA."""
    from impls.offsets_planner.harness.sweeps.one_pass_calls import _chain_args

    def make(kw):
        rpi, prefix, extend, table, lut, seeds, lut_len = _chain_args(kw)
        bs = int(rpi.shape[0])
        args = (rpi, prefix, extend, table, lut, seeds, bs, table.stride(0), table.shape[0],
                table.shape[1], lut_len)
        return lambda: mod.launch("chain", max(1, -(-bs // threads)), threads, args)
    return make


def rows_for(mod, bs):
    """The raw rows at ``bs``: the raw chain floor, then every plan shape that fits."""
    rows = [("raw", "floor raw chain 256", chain_call(mod, 256)),
            ("raw", "floor raw chain 128", chain_call(mod, 128))]
    shapes = [("plan_R1_C1", 1024, 1, 1), ("plan_R4_C1", 1024, 4, 1), ("plan_R8_C1", 512, 8, 1),
              ("plan_R1_C8", 512, 1, 8), ("plan_R1_C4", 1024, 1, 4), ("plan_R2_C4", 512, 2, 4),
              ("plan_R2_C2", 1024, 2, 2), ("plan_R1_C2", 1024, 1, 2)]
    if bs == 4096:
        shapes += [("nocarry_cluster8", 512, 1, 8), ("nocarry_plain", 512, 1, 8),
                   ("nocarry_plain", 256, 1, 16), ("nocarry_warp_only", 256, 1, 16),
                   ("nocarry_no_scan", 256, 1, 16)]
    for name, threads, r, c in shapes:
        if threads * r * c < bs or (c > 1 and threads * r * (c // 2) >= bs):
            continue  # one cluster (or one CTA) must cover bs, and every CTA of it hold rows
        rows.append(("raw", f"{name} {threads} threads", plan_call(mod, name, threads, r, c)))
    return rows


if __name__ == "__main__":
    ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    sys.path.insert(0, ROOT)
    import torch  # first: torch imported after NVRTC 13 fails to parse its own op schemas

    cubin = compile_cubin()
    if "--compile-only" in sys.argv:
        sys.exit(0)

    from impls.offsets_planner import triton_planner  # noqa: F401  (first: the mode)
    from impls.offsets_planner.contract import OUTPUT_NAMES
    from impls.offsets_planner.harness.sweeps import one_pass
    from impls.offsets_planner.python_planner import launch as python_launch

    sys.path.insert(0, os.path.join(ROOT, "reports", "gpu", "2026-12-04-b"))
    import replay_rounds

    dev = torch.device("cuda", 0)
    torch.zeros(1, device=dev)
    mod = Module(cubin)
    bad = 0
    for bs in ((4096,) if "--only-4096" in sys.argv else (1, 64, 512, 4096)):
        kw = one_pass.workload(bs, dev)
        cpu = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in one_pass._copy(kw).items()}
        python_launch(**cpu)
        want = {n: cpu[n] for n in OUTPUT_NAMES}
        rows = replay_rounds.floors_and_current() + rows_for(mod, bs)
        calls, labels = [], []
        for fw, label, make in rows:
            out = one_pass._copy(kw)
            call = make(out)
            call()
            torch.cuda.synchronize()
            if label.startswith("plan"):  # the nocarry rows are wrong by design: not checked
                diff = one_pass.difference({n: out[n].cpu() for n in OUTPUT_NAMES}, want)
                print(f"bs {bs} {label}: {'outputs right' if not diff else 'DIFFERS ' + diff}")
                bad += bool(diff)
            calls.append((out, call, label))
            labels.append(f"{fw:10s} {label}")
        graphs = [replay_rounds.graph_of(call) for _, call, _ in calls]
        samples = replay_rounds.interleaved(graphs)
        for (out, _, label), lab, s in zip(calls, labels, samples):
            if label.startswith("plan"):
                diff = one_pass.difference({n: out[n].cpu() for n in OUTPUT_NAMES}, want)
                bad += bool(diff)
                lab += "" if not diff else f"  DIFFERS after replays: {diff}"
            print(f"bs {bs:5d} {lab:48s} median {s[len(s) // 2]:.2f} us  min {s[0]:.2f}  "
                  f"max {s[-1]:.2f}")
    print(f"rows whose outputs differ: {bad}")
    sys.exit(1 if bad else 0)
