"""``python -m conformance mutants``: the corpus's mutation score.

Runs the corpus (``pytest conformance/``) on every planted mutant of a family as an external
planner and reports, per profile (``--profile contract`` / ``--profile project``, spec section 8),
which mutants it kills. A family is a module (default ``tests.planted.mutants``) with

* ``MUTANTS``: ``{"module:attr": None | reason}``, the mutants relative to the family's package;
  a reason declares the mutant *equivalent under contract* (it differs only where a project rule
  decides, so no contract case can kill it);
* ``CONTROL``: the same planner with no bug, which must pass every case (else no kill means
  anything);
* ``planner_name(key)``: the ``--planner`` name of a key.

Which mutants a run kills, and the table of the score: :mod:`conformance.robustness.mutant_score`
(a mutant is **killed** under a profile by one result of a failing status; statuses are read from
the run's results file, ``reports/results.schema.json``).

Speed: pytest sessions of at most ``--batch`` mutants (default :data:`BATCH`) per profile, each
mutant a repeated ``--planner`` beside the control (which must pass in every session); each
mutant's cases run in its own worker process, as every external planner's do
(:mod:`conformance.robustness.isolation`). The sessions pass ``--planner-maxfail 1``
(:mod:`conformance.plugin.planner_maxfail`): one failing result kills a mutant, and its later
cases are skipped, not judged (some die on their first case, others after 130-180 of 197; the
control, the survivors and the equivalent mutants under contract run every case), and
``--runxfail --no-manifests`` (:data:`UNDECLARED`: a case folder's ``xfail`` or manifest that
names a mutant never decides its kill). Measured on
2 cores without a GPU: 8 mutants and the control took 155 s in pytest with every case run and
47 s with this option; the whole family (62 planners) about 13 minutes alone (23 minutes in CI
beside the other slow tests before this option). The project profile judges a superset of the
contract's pins (``conformance/plugin/profiles.py``), so a kill under contract is a kill under
project: the project run holds only the contract survivors, the equivalent mutants and the
control, unless ``--full``.

Exit status: 0 when every non-equivalent mutant is killed under contract, no equivalent mutant is
killed under contract (a wrong declaration) and every equivalent one is killed under project; 1
otherwise; 2 when a run did not finish, the control failed or a name is unknown.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.corpus.entries import LOAD
from conformance.arg_types import positive_int
from conformance.paths import REPO_ROOT, evidence_fault
from conformance.robustness.mutant_score import (  # noqa: F401 (this command's names)
    KILLING, PROFILE_NAMES, MutantsError, Score, Verdict, check_control, check_run, judge_results,
    render)
from conformance.robustness.progress import Progress

DEFAULT_FAMILY = "tests.planted.mutants"
BATCH = 16
"""Mutants per pytest session by default: every external planner's worker starts at collection
and lives to the session's end (about 200 MiB each beside torch's shared pages: the 62 planners
of ``tests.planted.mutants`` in one session held 13.7 GiB on a 24 GiB machine)."""
POLL_SECONDS = 1.0
UNDECLARED = ("--runxfail", "--no-manifests")
"""Every session judges the family on the cases alone: a case's ``xfail`` (pytest's
``--runxfail``) and a known-divergence manifest (``--no-manifests``) that names a mutant would
otherwise decide its kill: a mutant that passes a case declared failing for it reads ``xpass``
(a kill), one that fails it ``xfail`` or ``declared`` (no kill), whatever the corpus caught."""


def load_family(module_name: str) -> tuple[dict[str, str | None], str, object]:
    """(MUTANTS, CONTROL, planner_name) of a family module (see the module docstring)."""
    try:
        family = importlib.import_module(module_name)
        return dict(family.MUTANTS), family.CONTROL, family.planner_name
    except (ImportError, AttributeError) as exc:
        raise MutantsError(f"cannot load the mutant family {module_name!r}: {exc}") from None


def run_profile(profile: str, planners: list[str], args, out_dir: Path, progress: bool,
                part: str = "") -> dict:
    """One pytest session of the corpus on ``planners`` under ``profile``; its results document
    (``results-PROFILE[-PART].json`` in ``out_dir``, beside the session's log).

    Raises:
        MutantsError: pytest did not finish (see :func:`check_run`).
    """
    suffix = f"{profile}-{part}" if part else profile
    results = out_dir / f"results-{suffix}.json"
    log = out_dir / f"pytest-{suffix}.log"
    cmd = [sys.executable, "-m", "pytest", str(REPO_ROOT / "conformance"), "-q",
           "-p", "no:cacheprovider", "--profile", profile, "--results", str(results),
           "--planner-maxfail", "1", *UNDECLARED]
    for name in planners:
        cmd += ["--planner", name]
    for case in args.case or []:
        cmd += ["--case", case]
    for directory in args.cases or []:
        cmd += ["--cases", str(Path(directory).resolve())]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    with open(log, "wb") as sink:
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=sink, stderr=subprocess.STDOUT,
                                env=env)
        _watch(proc, results, f"mutants --profile {profile}" + (f", batch {part}" if part else ""),
               progress)
    doc = _read(results)
    try:
        check_run(doc, proc.returncode, profile)
    except MutantsError as exc:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise MutantsError("\n".join([str(exc), *("  " + ln for ln in tail)])) from None
    check_loaded(doc, profile)
    return doc


def check_loaded(doc: dict, profile: str) -> None:
    """Raise :class:`MutantsError` when the run has a load fault (a result in the ``load``
    column: a ``--case`` id that names no case, a case file that does not load): a score over
    fewer cases than asked would pass for the whole one."""
    faults = [r for r in doc.get("results", []) if r.get("planner") == LOAD]
    if faults:
        said = [f"  {r['id']}: {((r.get('message') or '').strip().splitlines() or [''])[0]}"
                for r in faults]
        raise MutantsError("\n".join([f"the {profile} run did not load the cases as asked "
                                       f"(`python -m conformance cases` lists them):", *said]))


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # not written yet, or being replaced


def _watch(proc: subprocess.Popen, results: Path, label: str, enabled: bool) -> None:
    """Wait for ``proc``, drawing progress on stderr from the results file as it grows."""
    bar, start = None, time.monotonic()
    while proc.poll() is None:
        time.sleep(POLL_SECONDS)
        doc = _read(results) if enabled else None
        if not doc or not doc.get("collected"):
            continue
        if bar is None:
            bar = Progress(doc["collected"], label)
            bar.start = start  # the rate counts from pytest's start
        done = len(doc.get("results", []))
        if done > bar.done:
            bar.update(done - bar.done, note=f"{time.monotonic() - start:.0f}s")
    if bar is not None:
        bar.__exit__(None, None, None)


def score_family(args) -> Score:
    """Run the profiles on the family (narrowed by ``--mutant`` / ``--case``) and score it."""
    reasons, control, planner_name = load_family(args.family)
    if args.mutant:
        unknown = [m for m in args.mutant if m not in reasons]
        if unknown:
            raise MutantsError(f"unknown mutant(s): {', '.join(unknown)} (`mutants --list` names them)")
        reasons = {k: reasons[k] for k in args.mutant}
    names = {key: planner_name(key) for key in reasons}
    verdicts: dict[str, dict[str, Verdict]] = {}
    with tempfile.TemporaryDirectory(prefix="conformance-mutants-") as tmp:
        out_dir = Path(args.keep) if args.keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        for profile in PROFILE_NAMES:
            keys = list(reasons)
            if profile != "contract" and not args.full:  # a contract kill is a project kill
                keys = [k for k in keys if not verdicts["contract"][k].killed or reasons[k]]
            if not keys:  # every mutant killed under contract: nothing left to run
                verdicts[profile] = {k: Verdict(killed=True, inferred=True) for k in reasons}
                continue
            batches = [keys[i:i + args.batch] for i in range(0, len(keys), args.batch)]
            print(f"mutants: --profile {profile}: {len(keys)} mutant(s), "
                  f"{len(batches)} pytest session(s) of at most {args.batch} and the control",
                  file=sys.stderr)
            by_name: dict[str, Verdict] = {}
            for number, batch in enumerate(batches, 1):
                planners = [planner_name(control)] + [names[k] for k in batch]
                part = f"{number}-of-{len(batches)}" if len(batches) > 1 else ""
                judged = judge_results(run_profile(profile, planners, args, out_dir,
                                                   not args.no_progress, part), planners)
                check_control(judged.pop(planners[0]), profile)  # in every session
                by_name.update(judged)
            verdicts[profile] = {}
            for key in reasons:
                if key in keys:
                    verdicts[profile][key] = by_name[names[key]]
                else:
                    verdicts[profile][key] = Verdict(killed=True, inferred=True)
    return Score(reasons, verdicts)


def list_family(module_name: str) -> str:
    """One line per mutant of the family: its name, its bug (the first line of its docstring) and,
    for an equivalent one, why; the control last."""
    reasons, control, _ = load_family(module_name)
    package = module_name
    lines = []
    for name in [*reasons, control]:
        module, _, attr = name.partition(":")
        try:
            doc = getattr(importlib.import_module(f"{package}.{module}"), attr).__doc__ or ""
        except (ImportError, AttributeError) as exc:
            raise MutantsError(f"mutant {name!r} of {module_name} cannot be loaded: {exc}") from None
        bug = (doc.strip().splitlines() or ["(no docstring)"])[0]
        note = " (the control)" if name == control else (
            f" ({reasons[name]})" if reasons[name] else "")
        lines.append(f"{name:<40} {bug}{note}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    fault = evidence_fault("--json", Path(args.json)) if args.json else None
    if fault:  # before the run, not after an hour of it
        print(f"error: {fault}", file=sys.stderr)
        return 2
    try:
        if args.list:
            print(list_family(args.family))
            return 0
        score = score_family(args)
    except MutantsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render(score))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(score.to_json(), indent=1) + "\n")
    return 1 if score.failed() else 0


def add_parser(sub) -> None:
    """Register the ``mutants`` subcommand on :mod:`conformance.cli`'s subparsers."""
    p = sub.add_parser("mutants", help="the corpus's mutation score on planted mutants")
    p.add_argument("--family", default=DEFAULT_FAMILY, metavar="MODULE",
                   help=f"module with MUTANTS, CONTROL and planner_name (default {DEFAULT_FAMILY})")
    p.add_argument("--mutant", action="append", default=[], metavar="NAME",
                   help="run only this mutant, as MUTANTS names it (repeatable)")
    p.add_argument("--case", action="append", default=[], metavar="ID",
                   help="run only this case id (repeatable; passed to pytest)")
    p.add_argument("--json", type=Path, metavar="PATH", help="write the table as JSON")
    p.add_argument("--full", action="store_true",
                   help="run every mutant under project too (not only the contract survivors)")
    p.add_argument("--batch", type=positive_int, default=BATCH, metavar="N",
                   help=f"mutants per pytest session, each with the control (default {BATCH}: "
                        "each mutant's worker imports torch and lives to its session's end)")
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="keep each session's results file and pytest log in DIR")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--list", action="store_true",
                   help="print each mutant's name (what --mutant takes) and its bug, run nothing")
    p.set_defaults(func=main)
