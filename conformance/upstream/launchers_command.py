"""``python -m conformance upstream-launchers RELEASE --subject NAME --out DIR``: judge a published
release's own launchers, as a subject names them, on that subject's cases, unchanged.

A subject that can be judged so defines ``upstream_launchers(import_module, names)`` ({name: a
launcher with the subject's signature} over the release's modules) and ``UPSTREAM_LAUNCHERS``
(the names). The release is laid out as ``upstream-entries`` lays it out
(:mod:`conformance.upstream.entries_tree`: the wheel's own bytes, RECORD-checked; ``--no-layout``
re-hashes a tree laid out before); then, for each launcher of ``--launcher`` (default every one),
one child process (:mod:`conformance.upstream.launchers_child`, the tree's ``site/`` first on
PYTHONPATH) imports it and judges every case with the one-call engine on ``--device`` (default
``cpu``). ``OUT/launchers-LAUNCHER.json`` holds every row with its verdict (plain data),
``OUT/launchers-LAUNCHER.md`` the page (:mod:`.launchers_report`); on another device than the
CPU, LAUNCHER is suffixed with its type (``wrapper-cuda``): a launcher may take another path there.

Every case that did not pass must be declared, with its status and reason, in
``cases/SUBJECT/divergences/sglang-RELEASE-LAUNCHER.json`` (:mod:`.entries_declared`'s format).

``--reapply DOC`` applies the manifest as it is now to a ``launchers-*.json`` judged before (on a
GPU machine, say) and writes its report to ``--out``: no layout, no judging.

Exit code: 0 when every launcher was imported from the wheel's bytes, judged every case of the
subject, and every case passed or is declared (none stale); 1 otherwise; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

from conformance.corpus.text import help_text
from conformance.corpus.subjects import SubjectError, case_folder, discover
from conformance.paths import CASES_ROOT, REPO_ROOT
from conformance.upstream import entries_declared
from conformance.upstream.entries_command import refused_out, child_env, layout, run_child
from conformance.upstream.launchers_report import render, verdict


def add_parser(sub) -> None:
    p = sub.add_parser("upstream-launchers", help="judge a release's own launchers on a subject's cases",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("release", metavar="RELEASE", help="an sglang release (0.5.23)")
    p.add_argument("--subject", required=True, help="the subject whose cases judge them")
    p.add_argument("--launcher", action="append", default=[], metavar="NAME",
                   help="one of the subject's UPSTREAM_LAUNCHERS (repeatable; default every one)")
    p.add_argument("--device", default="cpu", help="where the cases' tensors live (default cpu)")
    p.add_argument("--wheel", type=Path, default=None, help="the release's wheel on disk (no download)")
    p.add_argument("--cache", type=Path, default=None, help="wheel cache and default tree folder")
    p.add_argument("--tree", type=Path, default=None, help="where the release is laid out")
    p.add_argument("--no-layout", action="store_true", help="use the tree already in --tree")
    p.add_argument("--out", type=Path, required=True, help="where the report files go")
    p.add_argument("--timeout", type=float, default=600, help="seconds for each child")
    p.add_argument("--reapply", type=Path, default=None, metavar="DOC",
                   help="a launchers-*.json written before (on another machine): apply the "
                        "manifest as it is now and write the report to --out (no judging)")
    p.add_argument("--each-case", action="store_true",
                   help="each case in a child of its own: a device fault or a hang costs that case "
                        "only (a child that dies before its row is written makes the row crashed)")


SCRATCH_NAME = "child.json"
"""A child's answer, written into --out and removed after it (never over a kept file)."""


def tag(launcher: str, device: str = "cpu") -> str:
    """A launcher's name in its files: ``LAUNCHER`` on the CPU, ``LAUNCHER-cuda`` (the device's
    type) elsewhere: one launcher may take another path on another device."""
    kind = device.split(":")[0]
    return launcher if kind == "cpu" else f"{launcher}-{kind}"


def file_names(launcher: str, device: str = "cpu") -> tuple[str, str]:
    """(JSON, Markdown) file names of one launcher's report on ``device``."""
    return f"launchers-{tag(launcher, device)}.json", f"launchers-{tag(launcher, device)}.md"


def _child(args, tree_dir: Path, site: str, launcher: str, json_path: Path,
           extra: tuple[str, ...] = ()) -> tuple[dict, object]:
    command = [sys.executable, "-m", "conformance.upstream.launchers_child", "--subject",
               args.subject, "--launcher", launcher, "--tree", str(tree_dir), "--json",
               str(json_path), "--device", args.device, *extra]
    json_path.unlink(missing_ok=True)
    doc, code, text = run_child(command, child_env(tree_dir, site), args.timeout, json_path)
    json_path.unlink(missing_ok=True)
    doc.update(child_exit=code, tail=text[-1500:])
    return doc, code


def _each_case(args, tree_dir: Path, site: str, launcher: str, json_path: Path,
               ids: list[str]) -> dict:
    """Every case in a child of its own: the first child's steps and loaded modules, every row
    (``crashed``, with the child's exit and last output, when a child wrote none), the first
    nonzero exit as the run's."""
    merged: dict = {"cases": []}
    for case_id in ids:
        one, code = _child(args, tree_dir, site, launcher, json_path, ("--case", case_id))
        if "steps" not in merged or [s for s in one.get("steps", []) if s["status"] != "ok"]:
            merged.update(steps=one.get("steps", []), loaded=one.get("loaded", {}))
        rows = one.get("cases") or [{"id": case_id, "status": "crashed", "verdict": None}]
        for row in rows:
            if code != 0:
                row.update(child_exit=code, why=(row.get("why") or "") + f" [child exit {code}: "
                           f"{one.get('tail', '')[-300:]}]")
        merged["cases"] += rows
        if code != 0 and merged.get("child_exit", 0) == 0:
            merged.update(child_exit=code, tail=one.get("tail", ""))
    merged.setdefault("child_exit", 0)
    return merged


def good(doc: dict, case_ids: set[str]) -> bool:
    """Imported from the wheel's bytes, judged to the end, a row for every case of the subject,
    and every row passed or declared, none stale."""
    steps = {s["step"]: s["status"] for s in doc.get("steps", [])}
    rows = doc.get("cases", [])
    return (steps.get("import") == "ok" and steps.get("judge") == "ok" and doc.get("child_exit") == 0
            and not doc.get("layout_error") and case_ids <= {r["id"] for r in rows}
            and all((r["status"] == "pass" and "stale" not in r) or r.get("declared") for r in rows))


def _declare_and_write(doc: dict, subject, args, case_ids: set[str]) -> bool:
    """Apply the launcher's manifest to ``doc``, write its JSON and page to ``--out``, print the
    verdict; whether it is good."""
    launcher, device = doc["launcher"], doc.get("device", "cpu")
    folder = case_folder(subject, CASES_ROOT) / "divergences"
    manifest = entries_declared.manifest_path(args.release, folder, tag(launcher, device))
    doc.pop("manifest_error", None)
    try:
        entries_declared.apply(doc, entries_declared.load(args.release, manifest))
    except entries_declared.DeclarationError as exc:
        doc["manifest_error"] = str(exc)
    doc["manifest"] = str(manifest.relative_to(REPO_ROOT)) if manifest.is_relative_to(REPO_ROOT) \
        else str(manifest)
    doc["good"] = good(doc, case_ids) and not doc.get("manifest_error")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    json_name, md_name = file_names(launcher, device)
    (out / json_name).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    (out / md_name).write_text(render(doc) + "\n", encoding="utf-8")
    print(f"{tag(launcher, device)}: {verdict(doc)}")
    print(f"wrote {out / md_name}, {out / json_name}")
    return doc["good"]


def reapply(args, subject, case_ids: set[str]) -> int:
    """``--reapply DOC``: the manifest as it is now applied to a judged document, written to
    ``--out`` (never over DOC itself)."""
    doc = json.loads(Path(args.reapply).read_text(encoding="utf-8"))
    if (doc.get("release"), doc.get("subject")) != (args.release, args.subject):
        print(f"--reapply {args.reapply}: a document of release {doc.get('release')!r} and subject "
              f"{doc.get('subject')!r}, not {args.release!r} and {args.subject!r}", file=sys.stderr)
        return 2
    target = Path(args.out) / file_names(doc["launcher"], doc.get("device", "cpu"))[0]
    if target.resolve() == Path(args.reapply).resolve():
        print(f"--reapply {args.reapply}: --out would overwrite it; name another folder",
              file=sys.stderr)
        return 2
    if refused_out(Path(args.out), file_names(doc["launcher"], doc.get("device", "cpu"))):
        return 2
    return 0 if _declare_and_write(doc, subject, args, case_ids) else 1


def run(args) -> int:
    try:
        subject = discover()[args.subject]
    except (KeyError, SubjectError) as exc:
        print(f"--subject {args.subject}: {exc}", file=sys.stderr)
        return 2
    names = tuple(getattr(subject, "UPSTREAM_LAUNCHERS", ()))
    if not names:
        print(f"--subject {args.subject}: it names no upstream launcher (UPSTREAM_LAUNCHERS)",
              file=sys.stderr)
        return 2
    unknown = [n for n in args.launcher if n not in names]
    if unknown:
        print(f"--launcher {unknown[0]}: not one of {', '.join(names)}", file=sys.stderr)
        return 2
    order = [c["id"] for c in subject.load_cases(case_folder(subject, CASES_ROOT))]
    case_ids = set(order)
    if args.reapply is not None:
        return reapply(args, subject, case_ids)
    out = Path(args.out)
    if refused_out(out, [n for launcher in args.launcher or names
                      for n in file_names(launcher, args.device)] + [SCRATCH_NAME]):
        return 2
    out.mkdir(parents=True, exist_ok=True)
    tree_dir, tree, problem = layout(args)
    command = "python -m conformance upstream-launchers " + shlex.join(
        sys.argv[sys.argv.index("upstream-launchers") + 1:] if "upstream-launchers" in sys.argv
        else [args.release, "--subject", args.subject])
    all_good = True
    for launcher in args.launcher or names:
        doc = {"release": args.release, "subject": args.subject, "launcher": launcher,
               "device": args.device, "command": command, "steps": [], "spec": subject.SPEC}
        if tree is not None:
            doc["tree"] = asdict(tree)
        if problem:
            doc["layout_error"] = problem
        elif not args.each_case:
            doc.update(_child(args, tree_dir, tree.site, launcher, out / SCRATCH_NAME)[0])
        else:
            doc.update(_each_case(args, tree_dir, tree.site, launcher, out / SCRATCH_NAME,
                                  order))
        all_good = _declare_and_write(doc, subject, args, case_ids) and all_good
    return 0 if all_good else 1

