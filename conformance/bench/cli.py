"""``python -m conformance bench``: the benchmark suite in one command (a pytest run underneath).

  bench [--planner P ...] [--bs 0,1,64] [--mode M ...] [--scenario S ...] [--workload W ...]
        [--rounds N] [--repeat N] [--json PATH] [--report PATH] [-- PYTEST_ARGS...]

runs ``pytest conformance/bench`` with those options (``--bench-*``, ``--benchmark-json``) and
prints the table at the end. ``--repeat N`` runs the whole measurement N times in this one
invocation and judges each serving goal on the median of the N repeats, their range beside it. Without ``--json`` the pytest-benchmark JSON goes to
``reports/out/bench.json``; ``python -m conformance report --bench PATH`` reads it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from conformance.corpus.text import help_text
from conformance.paths import BENCH_DIR, DEFAULT_BENCH_JSON, OUTPUT_ROOT

DEFAULT_JSON = DEFAULT_BENCH_JSON
COLUMNS = "min,median,iqr,rounds,iterations"
"""pytest-benchmark's own per-group tables, kept short: the suite's table follows them."""


def add_parser(sub) -> None:
    """Register ``bench`` on the CLI's subparsers."""
    p = sub.add_parser("bench", help="run the benchmark suite (pytest conformance/bench)",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--planner", action="append", default=[], metavar="NAME",
                   help="planner (repeatable; default every built-in)")
    p.add_argument("--bs", metavar="LIST", help="batch sizes, comma-separated")
    p.add_argument("--mode", action="append", default=[], help="eager, validate, launch, replay")
    p.add_argument("--scenario", action="append", default=[],
                   help="reused, fresh, varying-bs (default all)")
    p.add_argument("--workload", action="append", default=[], help="serving (default), decode")
    p.add_argument("--rounds", type=int, help="rounds per benchmark")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run the whole measurement N times and judge each goal on the median of "
                        "the N repeats, their range beside it (default 1: a goal judged on one "
                        "run is noisy; 3 is the least a compare by repeats can call a move on)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, metavar="PATH",
                   help=f"pytest-benchmark JSON (default {DEFAULT_JSON.relative_to(OUTPUT_ROOT)})")
    p.add_argument("--report", type=Path, metavar="PATH", help="also write the table as Markdown")
    p.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    p.set_defaults(func=run_bench)


def pytest_args(args: argparse.Namespace) -> list[str]:
    """The pytest command line ``bench`` runs (without the leading ``pytest``). pytest marks the
    installed distribution's modules for assertion rewriting (it has a pytest plugin), and this
    process imported them before ``pytest.main``: the warning that they cannot be rewritten says
    nothing about the run, so it is not shown."""
    out = [str(BENCH_DIR), "-q", "-p", "no:cacheprovider",
           "-W", "ignore::pytest.PytestAssertRewriteWarning",
           f"--benchmark-json={args.json}", f"--benchmark-columns={COLUMNS}",
           "--benchmark-sort=name"]
    out += [f"--planner={p}" for p in args.planner]
    out += [f"--bench-mode={m}" for m in args.mode]
    out += [f"--bench-scenario={s}" for s in args.scenario]
    out += [f"--bench-workload={w}" for w in args.workload]
    if args.bs:
        out.append(f"--bench-bs={args.bs}")
    if args.rounds:
        out.append(f"--bench-rounds={args.rounds}")
    if getattr(args, "repeat", 1) != 1:
        out.append(f"--bench-repeat={args.repeat}")
    if args.report:
        out.append(f"--bench-report={args.report}")
    return out + list(args.pytest_args)


def run_bench(args: argparse.Namespace) -> int:
    import pytest

    from conformance.paths import evidence_fault

    for option, path in (("--json", args.json), ("--report", args.report)):
        fault = evidence_fault(option, path) if path is not None else None
        if fault:
            print(f"error: {fault}", file=sys.stderr)
            return 2
    args.json.parent.mkdir(parents=True, exist_ok=True)
    code = int(pytest.main(pytest_args(args)))
    if code == 0:
        follow = shlex.join(["python", "-m", "conformance", "report", "--bench", str(args.json)])
        print(f"benchmark JSON: {shlex.quote(str(args.json))} ({follow})")
    return code
