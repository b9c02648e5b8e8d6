"""Differential fuzzing (``python -m conformance fuzz``): random valid plans on each planner, compared
with the pure-Python planner; every divergence shrunk and written as a new case file.

For each plan of :func:`conformance.robustness.random_plans.random_plan` the golden is recorded from
the pure-Python planner in a separate process that never imports a planner under test
(:mod:`conformance.robustness.golden_process`, which calls
:func:`conformance.engine.reference.record_expectations`), and the case is run on every planner
with the harness's own :func:`conformance.engine.runner.run_case`, so "diverges" means exactly
what a failing test means: any output byte (guard zones and stale tails included) differs, an input changed, the two
poisoned runs disagree, or the planner raised. A divergence is shrunk
(:func:`conformance.robustness.shrink.shrink`) and written under ``<out>`` with
``"needs_review": true`` and ``"source": {"kind": "fuzz", ...}`` naming the seed, never replacing
a file already there (:mod:`conformance.robustness.found_cases`); the path and the pytest command
that reruns it are printed. Plans stream: ``--n`` can be as large as time allows. The run ends
with one summary line (plans, divergences per planner, seconds), the figure committed under
``reports/gpu/``.
"""

from __future__ import annotations

import argparse
import collections
import copy
import functools
import multiprocessing
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from conformance.paths import evidence_fault
from conformance.robustness.probe_sandbox import use_for_probes
from conformance.corpus.case_file import display_path
from conformance.corpus.loader import Case, make_case
from conformance.corpus.corpus_subject import hazards as _hazards
from conformance.corpus.corpus_subject import FOUND_CASES_DIR, NAME
from conformance.robustness.found_cases import FoundCaseError, found_id, place
from conformance.robustness.random_plans import random_plan
from conformance.robustness.progress import Progress
from conformance.robustness.golden_process import GoldenError, golden_process
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from conformance.engine.runner import cases_dir_arg
from conformance.engine.runner import rerun_command as runner_rerun
from conformance.engine.verdict import FAILING, PROFILES, status_of
from conformance.robustness.shrink import shrink
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import registry as _registry

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
PlannerUnavailable = _registry.PlannerUnavailable
UnknownPlanner = _registry.UnknownPlanner
availability = _registry.availability
builtin_names = _registry.builtin_names
get_planner = _registry.get_planner
HAZARD_TAG = _hazards.HAZARD_TAG

DEFAULT_OUT = FOUND_CASES_DIR
_SCRATCH = Path("<fuzz>")


def with_golden(raw: dict) -> tuple[Case, dict]:
    """(the case, the case dict with ``expect``) for a plan without one: the golden is the
    pure-Python planner's output (or the documented error it raises), recorded in the golden
    process (:func:`conformance.robustness.golden_process.golden_process`), out of the planners'
    reach.

    Raises:
        GoldenError: the golden process died or could not record the plan.
    """
    raw = {**raw, "expect": golden_process().expectations(raw)[0]}
    return make_case(raw, _SCRATCH, "$"), raw


def divergence(case: Case, target: Target, isolate: bool = False,
               timeout: float = 60.0) -> str | None:
    """The harness's failure text for ``case`` on ``target``, or None when it conforms.

    With ``isolate`` the case runs in :mod:`conformance.robustness.isolation`'s worker process: a segfault, a
    CUDA error or a hang (``timeout`` seconds) is a divergence whose text starts ``crash:`` /
    ``timeout:`` and ends with the child's last lines of output.
    """
    if isolate or target.launch is None:  # an external planner runs in a worker, always
        from conformance.robustness.isolated_case import case_request, judge_observed
        from conformance.robustness.isolation import shared_pool

        answer = shared_pool().get(target.name).run(
            case_request(case, target.name, str(target.device)), timeout)
        if answer["status"] == "observed" and not answer.get("state_changed"):
            try:
                judge_observed(case, target.name, answer)
            except ConformanceFailure as exc:
                return _failing(exc, target.name)
            return None
        return "\n".join(x for x in (f"{answer['status']}: {answer.get('reason', '')}",
                                      answer.get("text", ""), answer.get("tail", "")) if x)
    try:
        run_case(case, target)
    except ConformanceFailure as exc:
        return _failing(exc, target.name)
    return None


def _failing(exc: ConformanceFailure, planner: str) -> str | None:
    """The failure text of ``exc``, or None when every difference is one that a rule the planner
    is not judged on decides (``differs`` / ``not-wrapper``: spec section 8; built-in planners
    are judged on every rule, an external one on the contract, as ``pytest conformance/``)."""
    judged = PROFILES["all"] if planner in builtin_names() else PROFILES["contract"]
    if exc.verdict is not None and status_of(exc.verdict, judged)[0] not in FAILING:
        return None
    return str(exc)


def make_target(name: str) -> Target:
    """A :class:`Target` for planner ``name`` on its device.

    Raises:
        UnknownPlanner, PlannerUnavailable: with a one-line message.
    """
    a = availability(name)
    if ":" in name:  # never imported here: its cases run in the isolation worker
        if not a.available:
            raise UnknownPlanner(a.reason)
        return Target(name, None, resolve_device(a.device))
    launch = get_planner(name)
    return Target(name, launch, resolve_device(a.device))


def rerun_command(case_id: str, planner: str, out: Path) -> str:
    """The pytest command that runs the found case on ``planner`` (with ``--cases`` when ``out``
    is outside the default corpus)."""
    return runner_rerun(case_id, planner, cases_dir_arg(out))


def found_case(raw: dict, planner: str, seed: int, index: int, steps: list[str],
               failure: str) -> dict:
    """The case file of the shrunk plan ``raw`` (golden recorded again) that ``planner``
    failed with ``failure``: ``needs_review``, tagged ``fuzz`` and ``found``."""
    _, raw = with_golden(raw)
    shrunk = ", ".join(f"{name} x{steps.count(name)}" for name in dict.fromkeys(steps)) or "none"
    lines = failure.splitlines()
    first_line = lines[0] if lines and lines[0].startswith(("crash:", "timeout:", "error:")) else \
        next((ln.strip() for ln in lines[2:]
              if ln.strip() and not ln.strip().startswith(("run ", "step "))), "")
    inputs = raw["inputs"]
    tags = ["fuzz", "found"] + (["swa"] if inputs.get(SWA_WINDOW_NAME, 0) > 0 else []) \
        + (["lut"] if inputs.get("lut") else [])
    command = shlex.join(["python", "-m", "conformance", "fuzz", "--planner", planner,
                          "--seed", str(seed)])
    doc = {
        "id": found_id(planner, raw),
        "description": f"Found by fuzzing planner {planner} (seed {seed}, plan {index}); "
                       f"shrunk by: {shrunk}. It failed with: {first_line}",
        "tags": tags,
        "source": {"kind": "fuzz", "ref": f"{command}: plan {index}, shrunk"},
        "golden_check": raw["golden_check"],
        "needs_review": True,
        "inputs": raw["inputs"],
        "expect": raw["expect"],
    }
    if make_case(doc, Path(f"{doc['id']}.json"), "$").out_of_contract:  # spec §6: the loader's rule
        doc["tags"].append(HAZARD_TAG)
    return doc


@dataclass
class FuzzResult:
    """Outcome of :func:`fuzz`: plans run, divergences per planner, files written, seconds."""

    plans: int
    divergences: dict[str, int]
    modes: dict[str, str]
    written: list[Path] = field(default_factory=list)
    """Found cases written by this run."""
    kept: list[Path] = field(default_factory=list)
    """Found cases already there with the same plan: left as they are, not written again."""
    seconds: float = 0.0

    def summary(self, seed: int) -> str:
        """One line, e.g. ``fuzz seed 1: 10000 plans; divergences: triton (gpu) 0, ...; 95.1 s``."""
        per = ", ".join(f"{p} ({self.modes[p]}) {n}" for p, n in self.divergences.items())
        return f"fuzz seed {seed}: {self.plans} plans; divergences: {per}; {self.seconds:.1f} s"


CHUNK = 25
"""Plans per task when ``jobs`` > 1."""


@functools.cache
def _targets(planners: tuple[str, ...]) -> list[Target]:
    return [make_target(name) for name in planners]


def check_plans(planners: tuple[str, ...], seed: int, indices: list[int], isolate: bool = False,
                timeout: float = 60.0) -> list[tuple[int, dict[str, str]]]:
    """Run plans ``indices`` of ``seed`` on every planner (in this process).

    Returns:
        [(plan index, {planner: failure text} for the planners that diverged)], in index order.
    """
    out = []
    for index in indices:
        case, _ = with_golden(random_plan(seed, index))
        failures = {}
        for target in _targets(planners):
            failure = divergence(case, target, isolate, timeout)
            if failure is not None:
                failures[target.name] = failure
        out.append((index, failures))
    return out


def _check_task(args: tuple) -> list[tuple[int, dict[str, str]]]:
    return check_plans(*args)


def _tasks(planners: tuple[str, ...], n: int, seed: int, isolate: bool,
           timeout: float) -> Iterator[tuple]:
    for start in range(0, n, CHUNK):
        yield planners, seed, list(range(start, min(start + CHUNK, n))), isolate, timeout


def checked(planners: tuple[str, ...], n: int, seed: int, jobs: int, isolate: bool,
            timeout: float) -> Iterator[list[tuple[int, dict[str, str]]]]:
    """:func:`check_plans` over plans 0..n-1 in chunks of :data:`CHUNK`, in order, streamed:
    memory does not grow with ``n``. ``jobs`` > 1 spreads the chunks over that many ``spawn``
    processes (CUDA cannot be used in a forked child), with at most ``2 * jobs`` in flight."""
    tasks = _tasks(planners, n, seed, isolate, timeout)
    if jobs <= 1:
        yield from map(_check_task, tasks)
        return
    with multiprocessing.get_context("spawn").Pool(jobs, initializer=use_for_probes) as pool:
        pending: collections.deque = collections.deque()
        for task in tasks:
            pending.append(pool.apply_async(_check_task, (task,)))
            if len(pending) >= 2 * jobs:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def fuzz(planners: list[str], n: int, seed: int, out: Path = DEFAULT_OUT, max_found: int = 3,
         shrink_budget: int = 3000, progress: bool = True, log=print, isolate: bool = False,
         timeout: float = 60.0, jobs: int = 1) -> FuzzResult:
    """Run ``n`` plans of ``seed`` on each planner (over ``jobs`` processes); shrink (in this
    process) and write up to ``max_found`` divergent cases per planner under ``out``;
    ``isolate`` / ``timeout`` as in :func:`divergence`.

    Raises:
        ValueError: ``n`` < 1.
        UnknownPlanner, PlannerUnavailable: a planner that cannot run here (before any plan runs).
        GoldenError: the golden process failed.
        FoundCaseError: a found case did not load back (a harness bug; nothing left on disk).
    """
    if n < 1:
        raise ValueError(f"fuzz: n must be at least 1, got {n}")
    golden_process()  # started before any planner under test is imported
    use_for_probes()  # the planners' modules first run in the isolation workers' sandbox
    targets = {t.name: t for t in _targets(tuple(planners))}
    result = FuzzResult(0, {name: 0 for name in targets},
                        {name: availability(name).mode or "?" for name in targets})
    seen: dict[str, list[dict]] = {name: [] for name in targets}
    start = time.monotonic()
    with Progress(n, f"fuzz seed {seed}", enabled=progress) as bar:
        for chunk in checked(tuple(planners), n, seed, jobs, isolate, timeout):
            for index, failures in chunk:
                for name, failure in failures.items():
                    result.divergences[name] += 1
                    if len(seen[name]) >= max_found:
                        continue
                    target = targets[name]

                    def fails(candidate: dict, target=target) -> bool:
                        return divergence(with_golden(candidate)[0], target, isolate,
                                          timeout) is not None

                    small, steps = shrink(random_plan(seed, index), fails, budget=shrink_budget)
                    if small["inputs"] in seen[name]:
                        continue
                    seen[name].append(copy.deepcopy(small["inputs"]))
                    last = divergence(with_golden(small)[0], target, isolate, timeout) or failure
                    placed = place(found_case(small, name, seed, index, steps, last), out)
                    (result.written if placed.new else result.kept).append(placed.path)
                    where = (f"written to {display_path(placed.path)}" if placed.new else
                             f"the same plan is already in {display_path(placed.path)} "
                             f"(left as it is, not written again)")
                    log(f"divergence: {name} on plan {index} of seed {seed}, shrunk to bs "
                        f"{len(small['inputs'][REQUEST_INPUT_NAMES[0]])}: {where}\n"
                        f"  rerun: {rerun_command(placed.path.stem, name, out)}"
                        + (" --isolate" if last.startswith(("crash:", "timeout:")) else ""))
                result.plans += 1
            bar.update(len(chunk), note=" ".join(f"{p}:{c}" for p, c in
                                                 result.divergences.items()))
    result.seconds = time.monotonic() - start
    return result


def main(args) -> int:
    """``python -m conformance fuzz`` (arguments parsed by :mod:`conformance.cli`).

    Returns:
        0 with no divergence, 1 with any, 2 when a planner cannot run here, the golden
        process failed, or a found case could not be written (one-line error).
    """
    fault = evidence_fault("--out", args.out)
    if fault:  # before the run, not after it
        print(f"error: {fault}", file=sys.stderr)
        return 2
    try:
        result = fuzz(args.planner, args.n, args.seed, out=args.out, max_found=args.max_found,
                      progress=not args.no_progress, isolate=args.isolate,
                      timeout=args.isolate_timeout, jobs=args.jobs)
    except (UnknownPlanner, PlannerUnavailable, GoldenError, FoundCaseError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.summary(args.seed))
    return 1 if any(result.divergences.values()) else 0


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
                   help="most cases shrunk and written per planner (default 3)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="J",
                   help="processes that run plans (default 1; shrinking stays in this one)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--isolate", action="store_true",
                   help="run each plan in a child process: a crash or hang is a divergence")
    p.add_argument("--isolate-timeout", type=float, default=60.0, metavar="S",
                   help="seconds a plan may run with --isolate (default 60)")
    p.set_defaults(func=main)
