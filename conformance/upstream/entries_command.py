"""``python -m conformance upstream-entries RELEASE``: build sglang's own kernel of a subject's
upstream launcher from a published wheel with sglang's own JIT machinery, and judge it on this
machine's GPU on the subject's cases; or record exactly which step could not run and why.

The subject is ``--subject NAME``, by default the one subject module that defines
``UPSTREAM_ENTRY`` (:mod:`conformance.upstream.entry_subject` lists what it gives: the launcher, its
layout, its build, its hazard pins, its random batches). Nothing here names a subject.

1. Lay out (:mod:`conformance.upstream.entries_tree`): from ``--wheel PATH`` or the wheel pip
   fetches into the cache, into ``--tree DIR`` (default ``CACHE/sglang/RELEASE-TREE_NAME``); with
   ``--no-layout``, the tree already in ``--tree`` (one carried to a machine without the wheel)
   is used after every file is re-hashed against the RECORD SHA-256 it was copied with;
   ``--layout-only`` stops after laying out (a tree to carry to a machine without the wheel).
2. One child process (:mod:`conformance.upstream.entries_child`, ``site/`` first on PYTHONPATH,
   sglang's build cache ``SGLANG_JIT_CACHE_DIR`` under the tree unless set): import, toolchain,
   the builds (one per ``BUILD_VARIANTS``), and on a CUDA device the subject's cases
   (``cases/NAME/``) that reach no hazard plus ``--random N`` random batches.
3. Each hazard case (the subject's ``HAZARD_PINS``: upstream reads outside a tensor or traps) in a
   child of its own, only once everything built on a GPU.
4. ``OUT/entries-build.json`` (everything), ``OUT/entries-build.md`` (:mod:`.entries_report`) and
   ``OUT/entries-child.log`` (the children's output).

Every judged case that did not pass must be declared, with its status and reason, in
``cases/NAME/divergences/sglang-RELEASE.json`` (:mod:`.entries_declared`).
``--reapply DOC`` reads an ``entries-build.json`` written before (on a GPU machine), applies the
manifest as it is now and writes the report again: no build, no judging.

Exit code: 0 when every variant built, every judged case passed or is declared (no declaration stale) and
every random batch is equal; 1 otherwise (not built included); 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from conformance.corpus.text import help_text
from conformance.corpus.subjects import SubjectError
from conformance.paths import REPO_ROOT, kept_files
from conformance.upstream.command import default_cache
from conformance.upstream import entries_declared
from conformance.upstream.entries_report import render
from conformance.upstream.entries_tree import (EntriesLayoutError, build_entries_tree, check_tree,
                                               load_tree)
from conformance.upstream.entry_subject import entry_subject, tree_facts
from conformance.upstream.wheel import FetchError, RecordError, fetch_wheel, open_wheel

JSON_NAME, MD_NAME, LOG_NAME = "entries-build.json", "entries-build.md", "entries-child.log"
SCRATCH_NAMES = ("child-main.json", "child-case.json")
"""The children's answers, written into --out and removed at the end (never over a kept file)."""


def add_parser(sub) -> None:
    p = sub.add_parser("upstream-entries", help="build and judge a release's kernel of a subject's "
                       "upstream launcher (UPSTREAM_ENTRY)",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="RELEASE", help="an sglang release (0.5.23)")
    p.add_argument("--subject", default=None, metavar="NAME",
                   help="the subject whose upstream launcher is judged on its cases (default: the "
                        "one subject that defines UPSTREAM_ENTRY)")
    p.add_argument("--wheel", type=Path, default=None, help="the release's wheel on disk (no download)")
    p.add_argument("--cache", type=Path, default=None, help="wheel cache and default tree folder")
    p.add_argument("--tree", type=Path, default=None, help="where the release is laid out")
    p.add_argument("--no-layout", action="store_true", help="use the tree already in --tree")
    p.add_argument("--out", type=Path, required=True, help="where the report files go")
    p.add_argument("--random", type=int, default=60, help="random batches to judge (default 60)")
    p.add_argument("--compile-for", default=None, metavar="MAJOR.MINOR",
                   help="also compile (never launch) for this target, e.g. 9.0 with no GPU here")
    p.add_argument("--layout-only", action="store_true",
                   help="lay the tree out (and check it) and stop: for carrying it elsewhere")
    p.add_argument("--reapply", type=Path, default=None, metavar="DOC",
                   help="an entries-build.json written before: apply the divergence manifest as "
                        "it is now and write the report to --out (no build, no judging)")
    p.add_argument("--timeout", type=float, default=360, help="seconds for the main child")
    p.add_argument("--case-timeout", type=float, default=60, help="seconds for each hazard child")


def child_env(tree_dir: Path, site: str) -> dict[str, str]:
    """The environment of a child that imports a laid-out release: ``site`` first on PYTHONPATH,
    then this checkout; sglang's JIT cache under the tree unless ``SGLANG_JIT_CACHE_DIR`` is set."""
    path = [site, str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONUNBUFFERED": "1"}
    env.setdefault("SGLANG_JIT_CACHE_DIR", str(tree_dir / "jit-cache"))
    return env


def run_child(command: list[str], env: dict[str, str], timeout: float,
              json_path: Path) -> tuple[dict, int | str, str]:
    """Run ``command`` from the repository root: (the JSON document it left in ``json_path``, or
    ``{"steps": []}`` when none can be read; its exit code, or ``killed after N s``; its stdout
    and stderr)."""
    try:
        done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
        code, text = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code = f"killed after {timeout:.0f} s"
        text = "".join(x.decode() if isinstance(x, bytes) else (x or "") for x in (exc.stdout, exc.stderr))
    try:
        doc = json.loads(json_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = {"steps": []}
    return doc, code, text


def _child(args, tree_dir, site, json_path, extra, timeout, log) -> tuple[dict, int | str]:
    command = [sys.executable, "-m", "conformance.upstream.entries_child", "--subject",
               args.subject, "--tree", str(tree_dir), "--json", str(json_path),
               *extra]
    log.write(f"$ {shlex.join(command)}\n")
    doc, code, text = run_child(command, child_env(tree_dir, site), timeout, json_path)
    log.write(text + f"\n[exit {code}]\n\n")
    log.flush()
    doc["tail"] = text[-1500:]
    return doc, code


def layout(args) -> tuple[Path, object | None, str | None]:
    """(tree folder, EntriesTree or None, problem or None), laid out as ``args.subject``'s
    upstream tree says (:func:`conformance.upstream.entry_subject.tree_facts`)."""
    facts = tree_facts(getattr(args, "subject", None))
    cache = args.cache or default_cache()
    tree_dir = args.tree or cache / "sglang" / f"{args.release}-{facts.TREE_NAME}"
    try:
        if args.no_layout:
            tree = load_tree(tree_dir)
            if tree.release != args.release:
                return tree_dir, None, f"{tree_dir} holds release {tree.release}, not {args.release}"
            bad = check_tree(tree)
            return tree_dir, tree, (f"files differ from RECORD: {', '.join(bad)}" if bad else None)
        path = args.wheel or fetch_wheel(args.release, cache / "wheels")
        wheel = open_wheel(path)
        if wheel.release != args.release:
            return tree_dir, None, f"{Path(path).name} is release {wheel.release}, not {args.release}"
        return tree_dir, build_entries_tree(wheel, tree_dir, facts), None
    except (FetchError, RecordError, EntriesLayoutError, OSError, ValueError) as exc:
        return tree_dir, None, f"{type(exc).__name__}: {exc}"


def refused_out(out: Path, names) -> bool:
    """Whether writing ``names`` into ``out`` would replace files outside ``reports/out/``
    (:func:`conformance.paths.kept_files`: committed evidence is never written over); says so."""
    kept = kept_files(out / n for n in names)
    if kept:
        print(f"--out {out}: would write over {', '.join(map(str, kept))}; files outside "
              f"reports/out/ are never replaced: name a new folder", file=sys.stderr)
    return bool(kept)


def reapply(args, subject) -> int:
    """``--reapply DOC``: the manifest applied to a judged document, the report written again."""
    out = Path(args.out)
    target = out / JSON_NAME
    if target.resolve() == Path(args.reapply).resolve():
        print(f"--reapply {args.reapply}: --out would overwrite it; name another folder",
              file=sys.stderr)
        return 2
    doc = json.loads(Path(args.reapply).read_text(encoding="utf-8"))
    if doc.get("release") != args.release:
        print(f"--reapply {args.reapply}: a document of release {doc.get('release')!r}, not "
              f"{args.release!r}", file=sys.stderr)
        return 2
    entries_declared.apply(doc, entries_declared.load(args.release, subject=subject))
    if refused_out(out, (JSON_NAME, MD_NAME)):
        return 2
    out.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / MD_NAME).write_text(render(doc, subject) + "\n")
    print(render(doc, subject).split("\n\n")[1])
    print(f"wrote {out / MD_NAME}, {target}")
    return 0 if entries_declared.good(doc, subject) else 1


def run(args) -> int:
    try:
        subject = entry_subject(args.subject)
    except SubjectError as exc:
        print(exc, file=sys.stderr)
        return 2
    args.subject = subject.NAME
    if args.reapply is not None:
        return reapply(args, subject)
    out = Path(args.out)
    if not args.layout_only and refused_out(out, (JSON_NAME, MD_NAME, LOG_NAME, *SCRATCH_NAMES)):
        return 2
    out.mkdir(parents=True, exist_ok=True)
    doc = {"release": args.release, "command": "python -m conformance upstream-entries "
           + shlex.join(sys.argv[sys.argv.index("upstream-entries") + 1:] if "upstream-entries" in sys.argv
                        else sys.argv[1:])}
    tree_dir, tree, problem = layout(args)
    if tree is not None:
        doc["tree"] = asdict(tree)
    if problem:
        doc["layout_error"] = problem
    if args.layout_only:
        print(problem or f"laid out sglang {args.release} in {tree_dir} ({len(tree.files)} wheel files)")
        return 1 if problem else 0

    def flush():  # after every child: a run killed from outside still leaves its report
        (out / JSON_NAME).write_text(json.dumps(doc, indent=1, default=str) + "\n")
        (out / MD_NAME).write_text(render(doc, subject) + "\n")

    flush()
    with open(out / LOG_NAME, "w", encoding="utf-8") as log:
        if tree is not None and not problem:
            extra = ["--random", str(args.random)] + (["--compile-for", args.compile_for]
                                                       if args.compile_for else [])
            child, code = _child(args, tree_dir, tree.site, out / "child-main.json", extra,
                                 args.timeout, log)
            doc.update({k: v for k, v in child.items() if k != "tail"}, child_exit=code)
            flush()
            built = [s for s in doc["steps"] if s["step"].startswith("build ")]
            judged = any(s["step"] == "judge" and s["status"] == "ok" for s in doc["steps"])
            variants = len(subject.UPSTREAM_ENTRY.BUILD_VARIANTS)
            if judged and len(built) == variants and all(s["status"] == "ok" for s in built):
                doc["hazards"] = []
                from conformance.upstream.entries_judge import hazard_cases

                for case in hazard_cases(subject=subject):
                    one, code = _child(args, tree_dir, tree.site, out / "child-case.json",
                                       ["--case", case["id"]], args.case_timeout, log)
                    row = (one.get("cases") or [{"id": case["id"], "pins": case.get("pins"),
                                                 "status": "crashed"}])[0]
                    row.update(child_exit=code, child_tail=one["tail"][-300:] if code else "",
                               note="spec section 6: upstream's kernel reads outside a tensor or "
                                    "traps here; the values are what it returned")
                    doc["hazards"].append(row)
                    flush()
    for scratch in SCRATCH_NAMES:
        (out / scratch).unlink(missing_ok=True)
    entries_declared.apply(doc, entries_declared.load(args.release, subject=subject))
    flush()
    print(render(doc, subject).split("\n\n")[1])
    print(f"wrote {out / MD_NAME}, {out / JSON_NAME}, {out / LOG_NAME}")
    return 0 if entries_declared.good(doc, subject) else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.entries_command",
                                     description=help_text(__doc__),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
