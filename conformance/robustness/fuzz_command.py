"""The ``python -m conformance fuzz`` subcommand: its arguments (registered on
:mod:`conformance.cli`'s subparsers) and its exit status; the run itself is
:func:`conformance.robustness.fuzz.fuzz`.

Exit status: 0 with no divergence, 1 with any, 2 when a planner cannot run here, the golden
process failed, ``--out`` is no place for evidence, a found case could not be written, or one it
wrote was changed or removed before it exited (``error: ...`` on stderr).

The process makes itself non-dumpable first (as pytest does for a corpus run,
docs/robustness.md): without the sandbox a planner's worker of the same user could otherwise
``ptrace`` it or open ``/proc/<pid>/mem``, and its judge and counts with it. The found cases it
wrote are checked once every worker and stray process of the run is gone
(:func:`conformance.robustness.found_cases.changed_since`): a planner that rewrote one during the
run (tests/test_hostile23.py) cannot pass for a run whose evidence stands.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.corpus.corpus_subject import NAME
from conformance.corpus.corpus_subject import registry as _registry
from conformance.arg_types import positive_int, positive_seconds
from conformance.paths import evidence_fault
from conformance.robustness import sandbox, strays
from conformance.robustness.found_cases import FoundCaseError, changed_since
from conformance.robustness.fuzz import DEFAULT_OUT, fuzz
from conformance.robustness.golden_process import GoldenError
from conformance.robustness.plan_divergence import end_workers

PlannerUnavailable = _registry.PlannerUnavailable
UnknownPlanner = _registry.UnknownPlanner


def main(args) -> int:
    """``python -m conformance fuzz`` (arguments parsed by :mod:`conformance.cli`).

    Returns:
        0 with no divergence, 1 with any, 2 when a planner cannot run here, the golden
        process failed, or a found case could not be written or was changed (one-line error
        each).
    """
    fault = evidence_fault("--out", args.out)
    if fault:  # before the run, not after it
        print(f"error: {fault}", file=sys.stderr)
        return 2
    sandbox.non_dumpable()  # before the golden process and any planner's process start
    was_reaper = sandbox.is_child_subreaper()
    strays.adopt()  # a planner's orphans become this process's children (strays.py)
    before = frozenset(sandbox.children())  # the caller's own (fuzz called in-process)
    try:
        result = fuzz(args.planner, args.n, args.seed, out=args.out, max_found=args.max_found,
                      progress=not args.no_progress, isolate=args.isolate,
                      timeout=args.isolate_timeout, jobs=args.jobs)
    except (UnknownPlanner, PlannerUnavailable, GoldenError, FoundCaseError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:  # no daemon of a probe or worker outlives the run to touch its found cases
        end_workers()  # their late records are fuzz()'s own, taken before on its way out
        strays.kill_strays(spare=before)
        strays.release(was_reaper)
    print(result.summary(args.seed))
    changed = changed_since(result.placed)  # every planner's process is gone by now
    for line in changed:
        print(f"error: a found case this run wrote was changed or removed before it ended "
              f"(by the planner under test?): {line}", file=sys.stderr)
    if changed:
        return 2
    return 1 if any(result.divergences.values()) else 0


def add_parser(sub) -> None:
    """Register the ``fuzz`` subcommand on :mod:`conformance.cli`'s subparsers."""
    p = sub.add_parser("fuzz", help="differential fuzzing against the pure-Python planner")
    p.add_argument("--planner", action="append", required=True, metavar="NAME",
                   help="planner to fuzz: built-in name or module.path:callable (repeatable)")
    p.add_argument("--n", type=positive_int, default=1000,
                   help="plans to run, streamed (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the plans (default 0)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help=f"where found cases are written (default cases/{NAME}/found in a "
                        "checkout, cases/found from an installed wheel)")
    p.add_argument("--max-found", type=int, default=3,
                   help="most cases shrunk and written per planner; shrinking a planner's "
                        "divergences also stops after this many shrinks in a row gave a plan "
                        "already found (default 3)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="J",
                   help="processes that run plans (default 1; shrinking stays in this one)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--isolate", action="store_true",
                   help="run each plan in a child process: a crash or hang is a divergence")
    p.add_argument("--isolate-timeout", type=positive_seconds, default=60.0, metavar="S",
                   help="seconds a plan may run with --isolate (default 60)")
    p.set_defaults(func=main)
