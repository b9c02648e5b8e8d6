"""Run the corpus on one published release's launcher and write ``OUT/RELEASE/`` (default
``reports/out/upstream/RELEASE/``).

The corpus runs in a pytest child process, ``pytest conformance/ --planner MODULE:launch_plan_offsets_kernel
--isolate`` with the release's laid-out folder (:mod:`conformance.upstream.release_tree`) first on
PYTHONPATH; without CUDA the harness puts Triton under its interpreter (``TRITON_INTERPRET=1``).
Then ``python -m conformance report`` writes the Markdown summary and the HTML page beside the
results. :class:`ReleaseRun` is what the matrix needs of it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from impls.source_file import PLANNER_PATH_ENV
from conformance.paths import REPO_ROOT
from conformance.upstream.release_tree import ReleaseLayoutError, ReleaseTree, build_tree, verify_tree
from conformance.upstream.wheel import FetchError, RecordError, fetch_wheel, open_wheel

RESULTS_NAME, SUMMARY_NAME, REPORT_NAME, RUN_NAME = "results.json", "summary.md", "report.html", "run.txt"
OUT_NAMES = (RESULTS_NAME, SUMMARY_NAME, REPORT_NAME, RUN_NAME)
"""The files written under ``OUT/RELEASE/``."""


@dataclass
class ReleaseRun:
    """One release's outcome: judged (``results`` is the results file, ``returncode`` pytest's exit
    code) or not (``problem`` says why: no wheel, no offsets kernel, another signature)."""

    release: str
    problem: str | None = None
    tree: ReleaseTree | None = None
    results: Path | None = None
    returncode: int | None = None
    commands: list[str] = field(default_factory=list)


def release_env(tree: ReleaseTree) -> dict[str, str]:
    """The environment a run of ``tree``'s launcher needs: its folder as the planner folder
    (``$CONFORMANCE_PLANNER_PATH``: the children that import the release find it, the judge's own
    import path never holds it, :mod:`impls.planner_path`), this checkout on PYTHONPATH (before
    anything already there)."""
    path = [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), PLANNER_PATH_ENV: str(tree.site)}


def prepare(release: str, cache: Path, wheel: Path | None = None) -> ReleaseRun:
    """Fetch (or take ``wheel``), check and lay out ``release``; a problem is reported, not raised."""
    try:
        path = Path(wheel) if wheel is not None else fetch_wheel(release, cache / "wheels")
        opened = open_wheel(path)
        if opened.release != release:
            return ReleaseRun(release, problem=f"{path.name} is release {opened.release}, not {release}")
        tree = build_tree(opened, cache / "sglang" / release)
        verify_tree(tree)
    except (FetchError, RecordError, ReleaseLayoutError, OSError) as exc:
        return ReleaseRun(release, problem=str(exc))
    return ReleaseRun(release, tree=tree)


def _shown(command: list[str], tree: ReleaseTree) -> str:
    """``command`` as a shell line, paths under the home folder written ``~``."""
    site = str(tree.site).replace(os.path.expanduser("~"), "~", 1)
    root = str(REPO_ROOT) + os.sep
    words = ["python" if c == sys.executable else c[len(root):] if c.startswith(root) else c
             for c in command]
    return f"{PLANNER_PATH_ENV}={site} PYTHONPATH=$PWD " + " ".join(shlex.quote(w) for w in words)


def run_corpus(run: ReleaseRun, out_dir: Path, pytest_args: list[str] = (),
               echo=print) -> ReleaseRun:
    """Run the corpus on ``run.tree``'s launcher, write results, summary and HTML into ``out_dir``."""
    tree = run.tree
    out_dir.mkdir(parents=True, exist_ok=True)
    results = out_dir / RESULTS_NAME
    env = release_env(tree)
    pytest = [sys.executable, "-m", "pytest", "conformance/", "--planner", tree.planner, "--isolate",
              "-q", "-p", "no:cacheprovider", "--results", str(results), *pytest_args]
    echo(f"sglang {tree.release}: {_shown(pytest, tree)}")
    done = subprocess.run(pytest, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    run.commands.append(_shown(pytest, tree))
    report = [sys.executable, "-m", "conformance", "report", str(results)]
    for extra, name in ((["--format", "markdown"], SUMMARY_NAME), ([], REPORT_NAME)):
        command = report + extra + ["--out", str(out_dir / name)]
        subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        run.commands.append(_shown(command, tree))
    tail = done.stdout.splitlines()
    summary_at = next((i for i, ln in enumerate(tail) if "conformance summary" in ln), max(0, len(tail) - 40))
    (out_dir / RUN_NAME).write_text(
        f"sglang {tree.release} from {tree.site.parent.name}: wheel files loaded unchanged "
        f"(RECORD-checked): {', '.join(sorted(tree.files))}\n"
        f"stand-ins: {', '.join(tree.stand_ins) or 'none'}\n"
        f"synthetic empty parent packages: {', '.join(tree.synthetic_packages)}\n\n"
        + "\n".join(f"$ {c}" for c in run.commands) + f"\n\nexit code {done.returncode}\n"
        + "\n".join(tail[summary_at:]) + "\n")
    run.results, run.returncode = results, done.returncode
    echo("\n".join(tail[-3:]))
    return run


def reuse(run: ReleaseRun, out_dir: Path) -> ReleaseRun:
    """Take the results a previous run left in ``out_dir`` (``--no-run``); its exit status is the
    run's. A missing or unreadable file is the release's problem."""
    import json
    results = out_dir / RESULTS_NAME
    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        run.problem = f"--no-run: no results at {results} ({type(exc).__name__})"
        return run
    run.results, run.returncode = results, doc.get("exitstatus")
    return run
