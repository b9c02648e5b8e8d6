"""Benchmark of the Triton planner on a CUDA GPU; prints one table of ratios to an empty kernel.

    PYTHONPATH=. python -m impls.offsets_planner.harness.sweeps.triton_sweep [--out reports/gpu/triton-bench.md] [--keep-cache]

Through the planner's public entries only (``launch``, ``plan_launch``, ``validate_arguments``,
``launch_validated``), timed with :mod:`conformance.bench.timing` on
:mod:`conformance.bench.workloads` batches: device time per plan (CUDA-graph replay) and the eager
call (validation + launch, host wall time) against an empty Triton kernel of the same run, and
validation alone. The serving goals are judged by the suite (``python -m conformance bench``).
Also: first-call compile time per block (a fresh ``TRITON_CACHE_DIR`` unless ``--keep-cache``),
and a (tile, num_warps) sweep per block (device time per plan in a 20-launch graph), from which
``impls.offsets_planner.triton_planner.CONFIG`` is chosen. Times are medians (us) of 15 samples; IQR in the
markdown report. Inputs: decode-like batches (extend 1, prefixes up to 8k, a 2^22-entry LUT with
W = 4096 for ``swa``), rows a random permutation, every input random (never zeros).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

if __name__ == "__main__" and "--keep-cache" not in sys.argv:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-triton-cache-")

import torch  # noqa: E402

from conformance.bench import timing as gt
from conformance.fingerprint import fingerprint_text  # noqa: E402

from conformance.bench import workloads  # noqa: E402
from conformance.bench.floor_modules import empty_triton_kernel  # noqa: E402

try:
    import triton
except ImportError:  # main() says a GPU with Triton is needed
    triton = None

BATCHES = (1, 64, 512, 4096)


def make_kwargs(bs: int, scenario: str, seed: int = 0) -> dict:
    """Launcher kwargs on CUDA for a decode-like batch (``plain``: no LUT, W = 0; ``swa``: a
    2^22-entry LUT, W = 4096): rows 1..bs, prefixes up to 8k, extend 1, no padding rows
    (:func:`conformance.bench.workloads.build`)."""
    swa = scenario == "swa"
    spec = workloads.Spec(table=(max(bs, 1) + 1, 8192), lut_len=(1 << 22) if swa else 0,
                          window=4096 if swa else 0, padding_every=0, seed=seed)
    return workloads.build(bs, spec, "cuda")


def compile_times(tp) -> list[list]:
    """First call (compile + load + launch) per (block, LUT), seconds."""
    rows = []
    for bs in BATCHES:
        for scenario in ("plain", "swa"):
            kw = make_kwargs(bs, scenario)
            t0 = time.perf_counter()
            tp.launch(**kw)
            torch.cuda.synchronize()
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            tp.launch(**kw)
            torch.cuda.synchronize()
            rows.append([bs, tp.block_for(bs), scenario, f"{first:.3f}",
                         f"{(time.perf_counter() - t0) * 1e6:.0f} us"])
    return rows


SWEEP = {32: ((32, 1), (32, 2)), 128: ((128, 2), (128, 4), (64, 2)),
         512: ((512, 8), (512, 16), (128, 4), (256, 8)),
         2048: ((2048, 16), (128, 4), (256, 8), (512, 16)),
         4096: ((4096, 16), (4096, 32), (128, 4), (256, 8), (512, 16))}
"""Candidates (TILE, num_warps) per block; TILE == block is one program."""


def config_sweep(tp) -> tuple[list[list], dict[int, tuple[int, int]]]:
    """Device us per plan (20 launches per graph) for each block and (tile, num_warps), bs = block."""
    rows, best = [], {}
    for block, candidates in SWEEP.items():
        kw = make_kwargs(block, "swa")
        times = {}
        for tile, warps in candidates:
            try:
                stats = gt.graph_replay_time(
                    lambda: tp.plan_launch(num_warps=warps, tile=tile, **kw),
                    calls_per_graph=20, replays=20)
            except Exception as exc:  # a configuration this Triton rejects: report, keep going
                rows.append([block, tile, warps, f"failed: {type(exc).__name__}", "-"])
                continue
            times[(tile, warps)] = stats
            rows.append([block, tile, warps, f"{stats.median:.2f}", f"{stats.iqr:.2f}"])
        fastest = min(s.median for s in times.values())
        best[block] = next(c for c in candidates
                           if c in times and times[c].median <= fastest + 0.05)
    return rows, best


def eager_breakdown(tp, empty_launch) -> list[list]:
    """Host us of each part of an eager call at bs = 64 (swa), medians."""
    from impls.offsets_planner.contract import REQUEST_INPUT_NAMES

    kw = make_kwargs(64, "swa", seed=2)
    tp.launch(**kw)
    validated = tp.validate_arguments(kw)
    request = [kw[n] for n in REQUEST_INPUT_NAMES]
    parts = [
        ("launch() total", lambda: tp.launch(**kw), True),
        ("validate_arguments (memo hit)", lambda: tp.validate_arguments(kw), False),
        ("launch_validated after validation", lambda: tp.launch_validated(validated, *request),
         True),
        ("standard launch (plan_launch fast=False)", lambda: tp.plan_launch(fast=False, **kw), True),
        ("empty kernel via JITFunction.run", empty_launch, True),
    ]
    return [[name, f"{gt.host_time(fn, sync=sync).median:.2f}"] for name, fn, sync in parts]


def main_table(tp, empty_launch) -> tuple[list[list], list[list]]:
    from impls.offsets_planner.validate import validate_launch

    empty1 = gt.graph_replay_time(empty_launch)
    empty20 = gt.graph_replay_time(empty_launch, calls_per_graph=20, replays=20)
    empty_eager = gt.host_time(empty_launch)
    rows, detail = [], []
    for scenario in ("plain", "swa"):
        for bs in BATCHES:
            kw = make_kwargs(bs, scenario, seed=1)
            r1 = gt.graph_replay_time(lambda: tp.launch(**kw))
            r20 = gt.graph_replay_time(lambda: tp.launch(**kw), calls_per_graph=20, replays=20)
            eager = gt.host_time(lambda: tp.launch(**kw))
            eager_std = gt.host_time(lambda: tp.plan_launch(fast=False, **kw))
            val = gt.host_time(lambda: tp.validate_arguments(kw), sync=False)
            val_full = gt.host_time(lambda: validate_launch(**kw), sync=False)
            rows.append([bs, scenario, f"{r1.median:.2f}", f"{r1.median / empty1.median:.2f}x",
                         f"{r20.median:.2f}", f"{r20.median / empty20.median:.2f}x",
                         f"{eager.median:.1f}", f"{eager.median / empty_eager.median:.2f}x",
                         f"{val.median:.2f}"])
            detail.append([bs, scenario, *map(gt.describe, (r1, r20, eager, eager_std, val,
                                                            val_full))])
    detail.append(["-", "empty kernel", *map(gt.describe, (empty1, empty20, empty_eager)),
                   "-", "-", "-"])
    return rows, detail


def _md(headers: list[str], rows: list[list]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="github")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the report (markdown) here")
    parser.add_argument("--keep-cache", action="store_true", help="reuse Triton's kernel cache")
    parser.add_argument("--skip-sweep", action="store_true", help="skip the num_warps sweep")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available() or triton is None:
        print("bench_triton: needs a CUDA GPU (compiled Triton); nothing measured.")
        return 2
    from impls.offsets_planner import triton_planner as tp
    from impls.offsets_planner import validate_cache

    marker = torch.zeros(1, device="cuda")
    empty_kernel = empty_triton_kernel()
    t0 = time.perf_counter()
    empty_kernel[(1,)](marker, BLOCK=32)
    torch.cuda.synchronize()
    empty_compile = time.perf_counter() - t0
    fp = fingerprint_text()
    print(f"# Triton planner benchmark\n\n{fp}\n")

    compiles = compile_times(tp)
    sweep, best = ([], {}) if args.skip_sweep else config_sweep(tp)
    tp.CONFIG.update(best)  # the main table runs with the sweep's choice
    validate_cache.clear()  # launches prepared with the old CONFIG go with their buffer sets
    rows, detail = main_table(tp, lambda: empty_kernel[(1,)](marker, BLOCK=32))
    breakdown = eager_breakdown(tp, lambda: empty_kernel[(1,)](marker, BLOCK=32))

    main_headers = ["bs", "scenario", "replay us", "vs empty", "20/graph us", "vs empty",
                    "eager us", "vs empty eager", "validate us"]
    out = [f"# Triton planner benchmark\n\n{fp}\n",
           f"CONFIG in use, block -> (tile, num_warps), after the sweep: {tp.CONFIG}.\n",
           "## Ratios to an empty Triton kernel of the same run (medians)\n",
           _md(main_headers, rows), "",
           "replay us: one plan per CUDA graph, replays queued behind a sleep kernel (device time); "
           "20/graph: 20 plans per graph, per plan. eager: launch() host wall time per call "
           "(validation memo hit + cached compiled-kernel launch), synchronised per 500 calls. "
           "validate: the memoised shared validator alone.\n",
           "## Spread (median, min, IQR)\n",
           _md(["bs", "scenario", "replay", "20/graph", "eager", "eager via JITFunction.run",
                "validate (memo hit)", "validate (full)"], detail), "",
           "## Eager call, part by part (bs 64, swa; host us, median)\n",
           _md(["part", "us"], breakdown), "",
           f"## First call (compile + load + launch), fresh cache\n\nempty kernel: {empty_compile:.3f} s\n",
           _md(["bs", "block", "scenario", "first call s", "second call"], compiles), ""]
    if sweep:
        out += ["## (tile, num_warps) sweep (us per plan, 20 per graph, bs = block, swa)\n",
                _md(["block", "tile", "num_warps", "p50 us", "IQR us"], sweep), "",
                f"Chosen (first listed within 0.05 us of the fastest): {best}\n"]
    report = "\n".join(out)
    print(report)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
