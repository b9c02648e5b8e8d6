"""``python -m conformance upstream RELEASE [RELEASE ...]``: judge sglang's published releases.

Each release's wheel is fetched with pip into the user's cache (``--cache``, default
``$XDG_CACHE_HOME/planner-conformance`` or ``~/.cache/planner-conformance``; reused next time) or
taken from ``--wheel PATH``; its offsets launcher is loaded from the wheel's own bytes
(:mod:`conformance.upstream.release_tree`) and the corpus runs on it
(:mod:`conformance.upstream.run_release`), writing ``OUT/RELEASE/`` (default
``reports/out/upstream/``, generated output). With more than one release, ``OUT/matrix.md``
compares them. Files of an earlier run outside ``reports/out/`` (the committed evidence under
``reports/upstream/``, say) are never written over: the command refuses before fetching anything.

Exit code: 0 when every release judged ends with 0 failures, 1 when one does not or cannot be
judged (the reason is printed and, with several releases, in the matrix), 2 for bad arguments or
files it would write over.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path

from conformance.corpus.text import help_text
from conformance.paths import GENERATED_ROOT, kept_files
from conformance.upstream.matrix import MATRIX_NAME, write_matrix
from conformance.upstream.run_release import OUT_NAMES, prepare, reuse, run_corpus

DEFAULT_OUT = GENERATED_ROOT / "upstream"


def default_cache() -> Path:
    """The user's cache folder for wheels and laid-out releases."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "planner-conformance"


def add_parser(sub) -> None:
    p = sub.add_parser("upstream", help="judge sglang's published releases, unchanged",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("releases", nargs="+", metavar="RELEASE", help="an sglang release (0.5.23)")
    p.add_argument("--wheel", type=Path, action="append", default=[], metavar="PATH",
                   help="a wheel on disk (its release must be one named); no download for it")
    p.add_argument("--cache", type=Path, default=None, help="cache folder for wheels and laid-out releases "
                   "(default: $XDG_CACHE_HOME/planner-conformance or ~/.cache/planner-conformance)")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT,
                   help="where RELEASE/ and matrix.md go (default: reports/out/upstream; files "
                        "outside reports/out/ are never written over)")
    p.add_argument("--pytest-args", default="", metavar="ARGS",
                   help="more pytest options, one string: --pytest-args='--sanitize memcheck'")
    p.add_argument("--no-run", action="store_true",
                   help="run no corpus: rebuild matrix.md from the results already under --out")
    p.set_defaults(func=run_upstream)


def run_upstream(args: argparse.Namespace) -> int:
    cache = args.cache or default_cache()
    wheels = {}
    for path in args.wheel:
        wheels[path.name.split("-")[1] if path.name.count("-") >= 4 else path.name] = path
    unknown = sorted(set(wheels) - set(args.releases))
    if unknown:
        print(f"error: --wheel for release(s) not named: {', '.join(unknown)}")
        return 2
    targets = [] if args.no_run else [args.out / r / n for r in args.releases for n in OUT_NAMES]
    kept = kept_files(targets + ([args.out / MATRIX_NAME] if len(args.releases) > 1 else []))
    if kept:
        print(f"error: --out {args.out}: would write over {', '.join(map(str, kept))}; files "
              f"outside reports/out/ are never replaced: name another --out (the default, "
              f"{DEFAULT_OUT}, is generated output) and compare")
        return 2
    runs = []
    for release in args.releases:
        run = prepare(release, cache, wheels.get(release))
        if run.problem is not None:
            print(f"sglang {release}: not judged: {run.problem}")
        else:
            print(f"sglang {release}: {len(run.tree.files)} wheel file(s) loaded unchanged; "
                  f"stand-in(s): {', '.join(run.tree.stand_ins) or 'none'}")
            if args.no_run:
                reuse(run, args.out / release)
            else:
                run_corpus(run, args.out / release, shlex.split(args.pytest_args))
        runs.append(run)
    if len(runs) > 1:
        page = write_matrix(runs, args.out)
        print(f"wrote {page}")
    return 0 if all(r.problem is None and r.returncode == 0 for r in runs) else 1
