"""One-pass planner sweep: ``python -m impls.offsets_planner.harness.sweeps.one_pass --out DIR [--dry-run]``.

On a CUDA GPU, for bs in :data:`BATCHES` and each framework (Triton, Numba CUDA): the chain floor
at every launch shape (the fastest is the floor; the table says which), the current planner and
every one-pass candidate (:mod:`impls.offsets_planner.triton_one_pass`, :mod:`impls.offsets_planner.numba_one_pass`, configs from
:func:`impls.offsets_planner.harness.sweeps.one_pass_calls.candidates`). Each is timed as the suite's
``replay`` mode does: one plan per CUDA graph, replays queued behind a sleep kernel, CUDA events
(:func:`conformance.bench.timing.graph_replay_time`): device us per plan, median and IQR of 15
samples, ratio to the floor of the same framework and bs.

Correctness, before and after timing: each candidate's six outputs are compared byte for byte
(whole tensors, poison past the defined regions included) with the current planner's on the same
inputs: the timed ``serving`` workload (:mod:`conformance.bench.workloads`, checked again after the
graph replays, which also checks the look-back workspace across replays) and two out-of-contract
draws (:func:`impls.offsets_planner.harness.sweeps.one_pass_calls.hazard_kwargs`). A candidate that differs is
``WRONG`` and never chosen; one that raises is ``FAILED`` with its error, and the exit status is
1. Nothing is skipped silently: a call not run because ``--budget-s`` ran out is ``NOT RUN``.

It prints one Markdown table and writes it to ``DIR/one_pass.md`` with the machine fingerprint.
``--dry-run``: on the CPU (Triton's interpreter, Numba's simulator), bs 1 and 64, one config per
design, one out-of-contract draw, the correctness path only, no timing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from conformance.bench import workloads
from impls.offsets_planner.harness.sweeps.one_pass_calls import (
    FRAMEWORKS,
    candidates,
    chain_floors,
    current,
    hazard_kwargs,
)
from conformance.fingerprint import fingerprint_text
from impls.offsets_planner.contract import OUTPUT_NAMES

BATCHES = (1, 8, 64, 512, 1024, 4096)
DRY_BATCHES = (1, 64)
GOAL_RATIO, GOAL_4096_US = 1.3, 3.5
"""Issue goals: replay <= 1.3x the chain floor of its framework at every bs, <= 3.5 us at 4096."""


def _copy(kw: dict) -> dict:
    """``kw`` with its own outputs (clones, poison included); inputs shared (never written: the
    corpus checks that), so the 512 MiB table is not copied per call."""
    return {k: v.clone() if k in OUTPUT_NAMES else v for k, v in kw.items()}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def outputs_of(make, kw: dict) -> dict:
    """Run ``make(kw)``'s call once on a copy of ``kw``; its six outputs, on the CPU."""
    dev = _copy(kw)
    make(dev)()
    _sync(dev[OUTPUT_NAMES[0]].device)
    return {n: dev[n].cpu() for n in OUTPUT_NAMES}


def difference(got: dict, want: dict) -> str | None:
    """The first output element that differs, as text, or None."""
    for name in OUTPUT_NAMES:
        bad = (got[name] != want[name]).nonzero().flatten()
        if bad.numel():
            i = int(bad[0])
            return (f"{name}[{i}] = {int(got[name][i])}, current planner {int(want[name][i])} "
                    f"({bad.numel()} differ)")
    return None


def workload(bs: int, device: torch.device) -> dict:
    """The suite's ``serving`` workload at bs on ``device`` (as ``python -m conformance bench``)."""
    return workloads.build(bs, workloads.spec_for("serving", device.type), device)


def measure(label, config, make, kw, reference, checks, dry_run) -> dict:
    """One row: correctness on ``checks`` (a list of (kw, reference outputs)), then timing on
    ``kw`` and a check of ``kw``'s outputs after the replays (``reference`` None: a floor, not
    checked)."""
    from conformance.bench.timing import graph_replay_time

    row = {"kernel": label, "config": config, "p50": None, "iqr": None, "check": "-"}
    try:
        if reference is not None:
            for inputs, want in checks:
                diff = difference(outputs_of(make, inputs), want)
                if diff:
                    row["check"] = f"WRONG: {diff}"
                    return row
            row["check"] = "same"
        if dry_run:
            if reference is None:
                outputs_of(make, kw)  # a floor runs too, untimed
            return row
        run = _copy(kw)
        call = make(run)
        compiled = call()  # a Triton candidate's compiled kernel: registers and spills
        if hasattr(compiled, "n_spills"):
            row["regs"] = f"{compiled.n_regs}/{compiled.n_spills}"
        stats = graph_replay_time(call)
        row["p50"], row["iqr"] = stats.median, stats.iqr
        if reference is not None:
            diff = difference({n: run[n].cpu() for n in OUTPUT_NAMES}, reference)
            if diff:
                row["check"] = f"WRONG after replay: {diff}"
    except Exception as exc:  # noqa: BLE001 - reported in the table, and the exit status is 1
        row["check"] = f"FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    return row


def sweep_one(framework: str, bs: int, device: torch.device, dry_run: bool,
              deadline: float, designs: list[str] | None = None,
              only: list[str] | None = None) -> list[dict]:
    """Every row of one (framework, bs): floors, current planner, candidates (only those of
    ``designs`` when given, and only those whose config text holds every string of ``only``);
    ratios filled."""
    kw = workload(bs, device)
    cur = current(framework)
    reference = outputs_of(cur[2], kw)
    checks = [(kw, reference)]
    for seed in (1,) if dry_run else (1, 2):  # the simulator takes ~0.3 s a launch
        hk = hazard_kwargs(bs, seed, device)
        checks.append((hk, outputs_of(cur[2], hk)))
    rows = []
    for label, config, make in chain_floors(framework, bs):
        rows.append(_timed(label, config, make, kw, None, [], dry_run, deadline))
    floor = min((r for r in rows if r["p50"] is not None), key=lambda r: r["p50"], default=None)
    for r in rows:
        r["floor"] = r is floor
    rows.append(_timed(*cur, kw, None, [], dry_run, deadline))
    for label, config, make in candidates(framework, bs, dry_run):
        if designs and label[len("one-pass "):] not in designs:
            continue
        if only and not all(text in config for text in only):
            continue
        rows.append(_timed(label, config, make, kw, reference, checks, dry_run, deadline))
    for r in rows:
        r["framework"], r["bs"] = framework, bs
        r["ratio"] = (r["p50"] / floor["p50"]) if floor and r["p50"] is not None else None
    return rows


def _timed(label, config, make, kw, reference, checks, dry_run, deadline) -> dict:
    if time.monotonic() > deadline:
        return {"kernel": label, "config": config, "p50": None, "iqr": None,
                "check": "NOT RUN (--budget-s spent)"}
    t0 = time.monotonic()
    row = measure(label, config, make, kw, reference, checks, dry_run)
    print(f"  {label:20s} {config:28s} {_us(row['p50']):>8s} {row['check'][:60]} "
          f"({time.monotonic() - t0:.1f} s)", file=sys.stderr, flush=True)
    return row


def _us(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def best_candidate(rows: list[dict]) -> dict | None:
    """The fastest timed candidate whose every check said ``same``."""
    ok = [r for r in rows if r["kernel"].startswith("one-pass") and r["check"] == "same"
          and r["p50"] is not None]
    return min(ok, key=lambda r: r["p50"], default=None)


def table(rows: list[dict]) -> str:
    from tabulate import tabulate

    body = []
    for r in rows:
        kernel = r["kernel"] + (" (the floor)" if r.get("floor") else "")
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
        body.append([r["framework"], r["bs"], kernel, r["config"], _us(r["p50"]), _us(r["iqr"]),
                     ratio, r["check"], r.get("regs", "-")])
    return tabulate(body, headers=["framework", "bs", "kernel", "config", "replay p50 us",
                                   "IQR us", "vs floor", "check", "regs/spills"],
                    tablefmt="github", disable_numparse=True)


def summary(rows: list[dict]) -> str:
    """Per framework and bs: the floor, the current planner and the best correct candidate, with
    the goal (<= 1.3x the floor; <= 3.5 us at bs 4096) met or not."""
    from tabulate import tabulate

    body = []
    for framework in FRAMEWORKS:
        for bs in sorted({r["bs"] for r in rows}):
            group = [r for r in rows if r["framework"] == framework and r["bs"] == bs]
            if not group:
                continue
            floor = next((r for r in group if r.get("floor")), None)
            cur = next(r for r in group if r["kernel"] == "current planner")
            best = best_candidate(group)
            goal = "-"
            if best and floor:
                goal = "met" if best["ratio"] <= GOAL_RATIO and (
                    bs != 4096 or best["p50"] <= GOAL_4096_US) else "NOT met"
            shape = f"{_us(floor['p50'])} ({floor['config']})" if floor else "-"
            body.append([framework, bs, shape,
                         _us(cur["p50"]), best and f"{best['kernel']} [{best['config']}]",
                         _us(best and best["p50"]),
                         "-" if not best or best.get("ratio") is None else f"{best['ratio']:.2f}x",
                         goal])
    return tabulate(body, headers=["framework", "bs", "chain floor us (shape)", "current us",
                                   "best correct candidate", "us", "vs floor", "goal"],
                    tablefmt="github", disable_numparse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__spec__.name if __spec__ else __name__}",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for one_pass.md")
    parser.add_argument("--dry-run", action="store_true",
                        help="CPU: interpreter/simulator, bs 1 and 64, correctness only")
    parser.add_argument("--bs", type=int, action="append", help="only these bs (repeatable)")
    parser.add_argument("--framework", action="append", choices=FRAMEWORKS)
    parser.add_argument("--design", action="append",
                        help="only the candidates of these designs (repeatable; the floors and "
                             "the current planner always run)")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="only the candidates whose config holds TEXT, e.g. 'num_warps 8' "
                             "(repeatable: every TEXT)")
    parser.add_argument("--json", metavar="PATH",
                        help="also write every row (kernel, config, framework, bs, p50, iqr, "
                             "ratio, check, floor) as a JSON list")
    parser.add_argument("--budget-s", type=float, default=330.0,
                        help="past this, remaining calls are NOT RUN (exit status 1)")
    args = parser.parse_args(argv)
    gpu = torch.cuda.is_available() and not args.dry_run
    if not gpu and not args.dry_run:
        print("one_pass: needs a CUDA GPU (or --dry-run on the CPU); nothing measured.")
        return 2
    device = torch.device("cuda", torch.cuda.current_device()) if gpu else torch.device("cpu")
    batches = args.bs or (DRY_BATCHES if args.dry_run else BATCHES)
    deadline = time.monotonic() + args.budget_s
    started = time.monotonic()
    rows = []
    for bs in batches:  # bs first: a spent budget still leaves both frameworks' small bs
        for framework in args.framework or FRAMEWORKS:
            print(f"{framework} bs {bs}", file=sys.stderr, flush=True)
            rows.extend(sweep_one(framework, bs, device, args.dry_run, deadline, args.design,
                                  args.only))
    mode = "dry run (CPU: correctness only, no timing)" if args.dry_run else "replay device time"
    head = "\n".join([
        "# One-pass planner sweep", "", fingerprint_text(), "",
        f"Mode: {mode}; {time.monotonic() - started:.0f} s. Replay: one plan per CUDA graph, "
        "replays behind a sleep kernel, median and IQR of 15 samples of 100 replays, us per plan; "
        "vs floor: the fastest chain-floor shape of the same framework and bs. check: every output "
        "byte against the current planner on the serving workload (also after the replays) and "
        "two out-of-contract draws. regs/spills: a Triton candidate's registers and spilled "
        "registers per thread (spills are local-memory round trips).", ""])
    best = "\n".join(["## Best correct candidate per framework and bs", "", summary(rows), ""])
    every = "\n".join(["## Every kernel and config", "", table(rows), ""])
    report = "\n".join([head, best, every])
    print("\n".join([every, head, best]))  # the summary last: what a tail of the output shows
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "one_pass.md").write_text(report)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    failed = [r for r in rows if r["check"].startswith(("FAILED", "NOT RUN"))]
    for r in failed:
        print(f"one_pass: {r['framework']} bs {r['bs']} {r['kernel']} [{r['config']}]: "
              f"{r['check']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
