"""Differential fuzzing (``python -m conformance fuzz``): random valid plans on each planner, compared
with the pure-Python planner; every divergence shrunk and written as a new case file.

For each plan of :func:`conformance.robustness.random_plans.random_plan` the golden is recorded from
the pure-Python planner in a separate process that never imports a planner under test
(:mod:`conformance.robustness.golden_process`, which calls
:func:`conformance.engine.reference.record_expectations`), and the case is run on every planner
with the harness's own :func:`conformance.engine.runner.run_case`, so "diverges" means exactly
what a failing test means: any output byte (guard zones and stale tails included) differs, an input changed, the two
poisoned runs disagree, or the planner raised (:mod:`conformance.robustness.plan_divergence`), or,
isolated, it wrote, died or changed its process after the plan's last call (written unshrunk:
shrinking would lose it). A divergence is shrunk
(:func:`conformance.robustness.shrink.shrink`) and written under ``<out>`` with
``"needs_review": true`` and ``"source": {"kind": "fuzz", ...}`` naming the seed, never replacing
a file already there (:mod:`conformance.robustness.found_cases`); the path and the pytest command
that reruns it are printed. Plans stream: ``--n`` can be as large as time allows. The run ends
with one summary line (plans, divergences per planner, seconds), the figure committed under
``reports/gpu/``. The subcommand's arguments and exit status: :mod:`conformance.robustness.fuzz_command`.
"""

from __future__ import annotations

import copy
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance.corpus.case_file import display_path
from conformance.corpus.corpus_subject import FOUND_CASES_DIR
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import hazards as _hazards
from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.case_model import make_case
from conformance.engine.runner import cases_dir_arg
from conformance.engine.runner import rerun_command as runner_rerun
from conformance.robustness.found_cases import Placed, found_id, place
from conformance.robustness.golden_process import golden_process
from conformance.robustness.fuzz_jobs import checked
from conformance.robustness.fuzz_jobs import targets as _targets
from conformance.robustness.plan_divergence import LATE, divergence, end_workers, with_golden
from conformance.robustness.probe_sandbox import use_for_probes
from conformance.robustness.progress import Progress
from conformance.robustness.random_plans import random_plan
from conformance.robustness.shrink import shrink

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
availability = _registry.availability
HAZARD_TAG = _hazards.HAZARD_TAG

DEFAULT_OUT = FOUND_CASES_DIR
"""Where found cases are written unless ``--out`` says otherwise."""


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
    first_line = lines[0] if lines and lines[0].startswith(("crash:", "timeout:", "error:",
                                                            LATE)) else \
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
    placed: list[Placed] = field(default_factory=list)
    """Every placement, with the digest of what was written (checked after the run)."""
    seconds: float = 0.0

    def summary(self, seed: int) -> str:
        """One line, e.g. ``fuzz seed 1: 10000 plans; divergences: triton (gpu) 0, ...; 95.1 s``."""
        per = ", ".join(f"{p} ({self.modes[p]}) {n}" for p, n in self.divergences.items())
        return f"fuzz seed {seed}: {self.plans} plans; divergences: {per}; {self.seconds:.1f} s"


def fuzz(planners: list[str], n: int, seed: int, out: Path = DEFAULT_OUT, max_found: int = 3,
         shrink_budget: int = 3000, progress: bool = True, log=print, isolate: bool = False,
         timeout: float = 60.0, jobs: int = 1) -> FuzzResult:
    """Run ``n`` plans of ``seed`` on each planner (over ``jobs`` processes); shrink (in this
    process) and write up to ``max_found`` divergent cases per planner under ``out``;
    ``isolate`` / ``timeout`` as in :func:`divergence`. A planner's divergences stop being
    shrunk (they are still counted) once it has ``max_found`` distinct cases, or once
    ``max_found`` shrinks in a row gave a plan already found: one bug's divergences shrink to
    the same few plans, and a shrink costs hundreds of plan runs.

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
    repeats = {name: 0 for name in targets}  # shrinks in a row that gave a plan already found
    start = time.monotonic()
    counted: set[tuple[int, str]] = set()  # a plan's late failure may follow its own

    def handle(index: int, failures: dict[str, str]) -> None:
        for name, failure in failures.items():
            if (index, name) in counted:
                continue
            counted.add((index, name))
            result.divergences[name] += 1
            if len(seen[name]) >= max_found or repeats[name] >= max_found:
                continue
            target = targets[name]

            def fails(candidate: dict, target=target) -> bool:
                return divergence(with_golden(candidate)[0], target, isolate,
                                  timeout) is not None

            if failure.startswith(LATE):  # not seen in a call: shrinking would lose it
                small, steps = random_plan(seed, index), []
            else:
                small, steps = shrink(random_plan(seed, index), fails, budget=shrink_budget)
            if small["inputs"] in seen[name]:
                repeats[name] += 1
                if repeats[name] == max_found:
                    log(f"divergence: {name}: {max_found} shrinks in a row gave a plan "
                        f"already found; its later divergences are counted, not shrunk")
                continue
            repeats[name] = 0
            seen[name].append(copy.deepcopy(small["inputs"]))
            last = failure if failure.startswith(LATE) else \
                divergence(with_golden(small)[0], target, isolate, timeout) or failure
            placed = place(found_case(small, name, seed, index, steps, last), out)
            (result.written if placed.new else result.kept).append(placed.path)
            result.placed.append(placed)
            where = (f"written to {display_path(placed.path)}" if placed.new else
                     f"the same plan is already in {display_path(placed.path)} "
                     f"(left as it is, not written again)")
            log(f"divergence: {name} on plan {index} of seed {seed}, shrunk to bs "
                f"{len(small['inputs'][REQUEST_INPUT_NAMES[0]])}: {where}\n"
                f"  rerun: {rerun_command(placed.path.stem, name, out)}"
                + (" --isolate" if last.startswith(("crash:", "timeout:", LATE)) else ""))

    with Progress(n, f"fuzz seed {seed}", enabled=progress) as bar:
        for chunk in checked(tuple(planners), n, seed, jobs, isolate, timeout):
            before = result.plans
            for index, failures in chunk:
                handle(index, failures)
                result.plans = max(result.plans, index + 1)
            bar.update(result.plans - before, note=" ".join(f"{p}:{c}" for p, c in
                                                            result.divergences.items()))
        for name, owner, text in end_workers():  # the last plan's, after the linger
            handle(owner, {name: text})
    result.seconds = time.monotonic() - start
    return result
