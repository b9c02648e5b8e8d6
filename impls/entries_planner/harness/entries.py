"""Entries planner sweep: ``python -m impls.entries_planner.harness.entries --out DIR [--budget-s N] [--device cuda]``.

For bs in :data:`GPU_BATCHES` and each workload variant (:mod:`impls.entries_planner.harness.entries_workload`:
``full``, ``swa-lut``, ``pool``), every entries planner (``triton``, ``numba-cuda``, and
``python`` at bs 1 and 8 only; ``--planner`` names others, ``module:callable`` included):

* eager: the launch call's host wall time, p50 and IQR (us);
* replay: device time per plan, one plan per CUDA graph captured on another step's inputs and
  refilled in place with this step's, as a server does (:mod:`conformance.bench.timing`);
* floors per framework: an empty kernel (eager and replay, :mod:`conformance.bench.floors`) and
  the gather floor (:mod:`conformance.bench.gather_floor`) at each launch shape, the fastest kept;
  each planner's figure is divided by its framework's floors;
* the whole step: our offsets planner (:mod:`impls.offsets_planner.triton_planner` / :mod:`impls.offsets_planner.numba_cuda_planner`)
  then our entries planner of the same framework, replayed as one graph, against upstream's offsets
  launcher (``--upstream-offsets``, importable when its release is laid out on PYTHONPATH by
  :mod:`conformance.upstream`) then the same entries planner; and upstream's entries launcher
  (``--upstream-entries MODULE:CALLABLE``, nothing by default) behind upstream's offsets;
* the whole plan in one call, as a server makes it (``docs/spec/canary-plan.md`` section 3: the
  wrapper's checks, a fresh scratch, the offsets then the entries stage), eager and replay: our
  pipelines (``--flat-plan``, default ``triton`` and ``numba-cuda`` of :mod:`impls.canary_plan`)
  against upstream's wrapper ``launch_canary_plan_kernels`` (``upstream-wrapper``: importable when
  sglang's release is laid out on PYTHONPATH, its CUDA entries kernel built by its own JIT).

No figure is published before the correctness gate (:mod:`impls.entries_planner.harness.entries_calls`)
found every output element equal to the Python planner's on the same inputs; a planner that
differs gets ``not published: outputs differ at ...`` instead. Without CUDA (``--device cpu``, the
default there) the planners run under Triton's interpreter and Numba's simulator on tiny sizes
(bs 1 and 8), eager only, and replay rows say ``not available without CUDA``.

Writes ``DIR/entries-bench.md`` (the machine fingerprint first, tables by tabulate) and
``DIR/entries-bench.json`` (every row, ratios included). Exit status 1 when a figure was refused
or the budget ran out before every row, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from impls.entries_planner.harness.entries_rows import (BUDGET_SPENT, _plan_or_absent, flat_rows,
                                                       floor_rows, gather_rows, planner_rows)

GPU_BATCHES = (1, 8, 64, 512, 4096)
CPU_BATCHES = (1, 8)
PYTHON_BS = (1, 8)
"""The pure-Python planner is timed at these bs only (it reads the whole table on the host)."""
DEFAULT_PLANNERS = ("triton", "numba-cuda", "python")
DEFAULT_FLAT = ("triton", "numba-cuda", "upstream-wrapper")
"""The whole-plan launchers timed by default: our two compiled pipelines and upstream's wrapper."""
LEGEND = (
    "Every figure is the median (p50) over samples, with its IQR, us. Eager: host wall time of "
    "one launch call (validation and launch; not synchronised, so device work is not included; "
    "batches of {calls} calls, {repeats} samples after {warmup} warm-up calls; the Python planner "
    "{py} calls). Replay: one plan per CUDA graph, captured on another step's inputs, then the "
    "inputs refilled in place with this step's, 100 replays queued behind a sleep kernel, 15 "
    "samples, CUDA events (device us per plan). vs empty: over the empty kernel of the planner's "
    "framework in the same mode; vs gather floor: over the fastest launch shape of the gather "
    "floor of the same framework, step and T (a `module:callable` planner: the faster framework's "
    "floors). Gate: before a figure is published, every element of the four outputs (the written "
    "region [0, T) and the poisoned tail) equals the Python entries planner's on the same inputs, "
    "and again after the timed calls or the replays; a whole step also checks the offsets "
    "planner's six outputs against the Python offsets planner's (a whole plan in one call: its "
    "five plan fields, the scratch being the launcher's own). A whole plan in one call: eager, "
    "the host wall time of the call (the wrapper's checks, its scratch allocation, two launches); "
    "replay, the call captured in one CUDA graph as above.")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path, help="folder for entries-bench.md / .json")
    p.add_argument("--budget-s", type=float, default=200.0,
                   help="past this, remaining rows are 'not measured' (exit status 1)")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None,
                   help="default: cuda when available, else cpu (interpreter / simulator)")
    p.add_argument("--bs", type=int, action="append", help="only these bs (repeatable)")
    p.add_argument("--variant", action="append", help="only these variants (repeatable)")
    p.add_argument("--planner", action="append", metavar="SPEC",
                   help="entries planners: python, triton, numba-cuda or module:callable "
                        f"(repeatable; default {', '.join(DEFAULT_PLANNERS)})")
    p.add_argument("--no-plan", action="store_true", help="skip the whole-step rows")
    p.add_argument("--upstream-offsets", default=None, metavar="MODULE:CALLABLE",
                   help="upstream's offsets launcher (default: sglang's, when importable)")
    p.add_argument("--upstream-entries", default=None, metavar="MODULE:CALLABLE",
                   help="upstream's entries launcher (not measured when not given)")
    p.add_argument("--flat-plan", action="append", metavar="SPEC",
                   help="whole-plan launchers: a built-in pipeline or upstream-wrapper / "
                        f"upstream-reference (repeatable; default {', '.join(DEFAULT_FLAT)})")
    p.add_argument("--no-flat-plan", action="store_true", help="skip the whole-plan-call rows")
    return p


def _choose_device(asked: str | None) -> str:
    """``cuda`` or ``cpu``; for ``cpu``, Triton's interpreter and Numba's simulator are chosen
    here, before any planner is imported."""
    import torch

    device = asked or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    return device


def _pairs(planners: list[str], args) -> list[tuple]:
    from impls.entries_planner.harness.entries_calls import BUILTIN_OFFSETS, UPSTREAM_OFFSETS

    upstream = args.upstream_offsets or UPSTREAM_OFFSETS
    pairs = []
    for spec in planners:
        if spec in BUILTIN_OFFSETS:
            pairs.append((spec, f"{spec} (ours)", spec, spec, False))
            pairs.append((upstream, "upstream's", spec, spec, True))
    pairs.append((upstream, "upstream's", args.upstream_entries or "", "upstream's", True))
    return pairs


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    device_name = _choose_device(args.device)
    import torch

    if device_name == "cuda" and not torch.cuda.is_available():
        print("entries sweep: --device cuda needs a CUDA GPU; nothing measured.")
        return 2
    from impls.entries_planner.harness import entries_workload as ew
    from impls.entries_planner.harness import entries_calls as calls
    from impls.entries_planner.harness.entries_report import add_ratios, write
    from conformance.fingerprint import fingerprint, fingerprint_text

    gpu = device_name == "cuda"
    device = torch.device("cuda", torch.cuda.current_device()) if gpu else torch.device("cpu")
    batches = args.bs or (GPU_BATCHES if gpu else CPU_BATCHES)
    variants = args.variant or list(ew.VARIANTS)
    planners = args.planner or list(DEFAULT_PLANNERS)
    if args.upstream_entries:
        planners.append(args.upstream_entries)
    started = time.monotonic()
    deadline = started + args.budget_s
    counts = calls.EAGER_COUNTS[device.type]
    head = {"fingerprint": fingerprint_text(), "fingerprint_fields": fingerprint(),
            "mode": ("GPU (compiled Triton, Numba CUDA)" if gpu else
                     "CPU (Triton interpreter, Numba simulator; tiny sizes, no replay)"),
            "workload": workload_text(ew.profile_for(device)),
            "legend": LEGEND.format(py=calls.PYTHON_COUNTS["repeats"], **counts)}

    def publish(complete: bool):
        """(Re)write both files: a run killed part way still leaves every step it finished."""
        add_ratios(rows)
        return write(args.out, rows, dict(head, complete=complete,
                                          seconds=time.monotonic() - started))

    rows = floor_rows(device, gpu, deadline)
    for bs in batches:  # bs first: a spent budget still leaves every variant's small bs
        for variant in variants:
            print(f"{variant} bs {bs}", file=sys.stderr, flush=True)
            w = ew.add_reference(ew.build(bs, variant, device, seed=0))
            previous = ew.build(bs, variant, device, seed=1)
            rows.append({"kind": "workload", **w.facts})
            rows += gather_rows(w, gpu, deadline)
            for spec in planners:
                if spec == "python" and bs not in PYTHON_BS:
                    continue
                label = ("python (bs 1 and 8 only)" if spec == "python" else
                         "upstream's" if spec == args.upstream_entries else spec)
                rows += planner_rows(spec, label, w, previous, deadline)
            if not args.no_plan:
                rows += _plan_or_absent(_pairs(planners, args), w, previous, deadline)
            if not args.no_flat_plan:
                rows += flat_rows(args.flat_plan or list(DEFAULT_FLAT), w, previous, deadline)
            publish(complete=False)
    md, js = publish(complete=True)
    print(md.read_text())
    refused = [r for r in rows if str(r.get("status", "")).startswith("not published")
               or r.get("status") == BUDGET_SPENT]
    for r in refused:
        print(f"entries sweep: {r['kind']} {r.get('variant')} bs {r.get('bs')} "
              f"{r.get('label') or r.get('entries_label') or r.get('framework')}: {r['status']}",
              file=sys.stderr)
    return 1 if refused else 0


def workload_text(p) -> str:
    from impls.entries_planner.harness import entries_workload as ew

    return (f"{ew.DESCRIPTION}\n\nSizes here: req_to_token "
            f"{p.rows} x {p.cols} int32, prefixes log-uniform in [{p.prefix_lo}, {p.prefix_hi}] "
            f"(one live request in eight in [1, {p.prefix_lo})), KV pool and verify capacity "
            f"{p.kv_pool_tokens} tokens, swa-lut window {p.window} and LUT {p.lut_len} entries, "
            f"pool {p.rows} x {p.cols} int32 tokens of a {p.vocab}-token vocabulary.")


if __name__ == "__main__":
    sys.exit(main())
