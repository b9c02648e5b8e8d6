"""``python -m conformance manifest``: draft a known-divergence manifest from real runs.

  manifest --from RESULTS [--from RESULTS ...] --planner P [--out FILE]

Every result of planner P (a name or fnmatch pattern) whose observed outcome is ``fail``, ``crash``
or ``oob`` becomes one divergence of its case, with the statuses seen across the results files
(a CPU run and a sanitizer run may see ``crash`` and ``oob`` for the same case). The spec section
and reason come from the case: the wrapper (section 4 item 0), the section-6 rows its values reach,
else ``REVIEW:`` and the section it breaks, for a person to decide (upstream bug, harness bug).
Results the harness or the case caused (``error``, ``timeout``, ``xpass``) are listed on standard
error and not drafted. The draft goes to standard output, or to ``--out``, which must not exist
yet (a reviewed manifest is never overwritten). Review it before committing it.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import shlex
import sys
from pathlib import Path

from conformance.corpus.text import help_text
from conformance.paths import new_file_fault, write_new
from conformance.corpus.jsonfmt import dumps
from conformance.corpus.manifest import DECLARABLE
from conformance.corpus.loader import load_corpus
from conformance.corpus.corpus_subject import section6 as _section6
from conformance.reporting.results_format import PSEUDO_PLANNERS, ResultsError, load_results

BY_KEY = _section6.BY_KEY
flat_read_outside_table = _section6.flat_read_outside_table

UBIQUITOUS = ("write-offsets-past-bs",)
"""Section-6 rows nearly every case reaches; they explain a divergence only when alone."""
NOT_DIVERGENCES = ("error", "timeout", "xpass")


def add_parser(sub) -> None:
    """Register ``manifest`` on the CLI's subparsers."""
    p = sub.add_parser("manifest", help="draft a known-divergence manifest from results files",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from", dest="sources", action="append", type=Path, required=True,
                   metavar="RESULTS", help="results file of a run (repeatable)")
    p.add_argument("--planner", required=True, help="planner name or fnmatch pattern")
    p.add_argument("--out", type=Path, metavar="FILE", help="write the draft here (new file)")
    p.set_defaults(func=run)


def _reason(result: dict) -> tuple[str, str]:
    """(spec section, reason) of one divergent result, from what its case pins and reaches."""
    if result.get("pins") == "wrapper":
        return "4", ("upstream checks spec §4 item 0 in its whole-plan wrapper (plan/api.py), "
                     "not in the launcher")
    rows = [k for k in result.get("out_of_contract") or () if k in BY_KEY]
    rows = [k for k in rows if k not in UBIQUITOUS] or rows
    if rows:
        return "6", "; ".join(f"{BY_KEY[k].situation}: upstream's kernel {BY_KEY[k].upstream}, "
                              f"this project {BY_KEY[k].project}" for k in rows)
    section = "4" if result.get("error_ids") else "5"
    return section, (f"REVIEW: differs from spec section {section}: an upstream bug or a harness "
                     f"bug?")


def draft(docs: list[tuple[Path, dict]], pattern: str, argv: list[str],
          outside: set[str] = frozenset()) -> tuple[dict, list[str]]:
    """The manifest drafted from results ``docs`` for planners matching ``pattern``.

    ``outside`` holds the ids of the cases on which a kernel reading as spec section 6 says
    upstream's does reads outside the table (:func:`flat_read_outside_table`): what it returns
    there changes from run to run, so their divergence declares every outcome of such a read
    (``fail`` or ``oob`` for a value, ``crash`` or ``oob`` for a crash), and is drafted even where
    the case's pin already calls a value difference ``differs``. Its ``sources`` are the source
    digests the runs recorded for those planners, their files' and their local imports': the
    manifest applies to that code only.

    Returns:
        (manifest document, warnings about results not drafted).
    """
    by_case: dict[str, dict] = {}
    warnings, sources = [], []
    for path, doc in docs:
        planners = {n: p.get("source") for n, p in doc["fingerprint"]["planners"].items()
                    if fnmatch.fnmatchcase(n, pattern)}
        sources.append({"results": str(path), "run_date": doc["fingerprint"]["date"],
                        "harness_commit": doc["fingerprint"]["commit"],
                        "gpu": doc["fingerprint"]["gpu"], "args": shlex.join(doc["args"]),
                        "planner_source": planners})
        for r in doc["results"]:
            if r["planner"] in PSEUDO_PLANNERS or not fnmatch.fnmatchcase(r["planner"], pattern):
                continue
            observed = r.get("observed") or r["status"]
            if r["status"] in NOT_DIVERGENCES or observed in NOT_DIVERGENCES:
                warnings.append(f"not drafted: {r['id']} is {observed} (a harness or case "
                                f"fault, not a divergence): {r['rerun']}")
                continue
            if observed not in DECLARABLE or (r["status"] in ("differs", "not-wrapper")
                                              and r["case"] not in outside):
                continue
            entry = by_case.get(r["case"])
            if entry is None:
                section, reason = _reason(r)
                entry = by_case[r["case"]] = {"case": r["case"], "section": section,
                                              "reason": reason, "status": []}
            seen = {observed}
            if r["case"] in outside:
                seen |= {"oob", "crash" if observed == "crash" else "fail"}
                if "run to run" not in entry["reason"]:
                    entry["reason"] += ("; the read lands outside the table, so the outcome "
                                        "(a stray value, a guard-zone fill, a crash) changes "
                                        "from run to run")
            entry["status"] += sorted(seen - set(entry["status"]))
    divergences = []
    for entry in by_case.values():
        statuses = sorted(entry["status"], key=DECLARABLE.index)
        entry["status"] = statuses[0] if len(statuses) == 1 else statuses
        divergences.append(entry)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shas = sorted({f.get("sha256") for run in sources for src in run["planner_source"].values()
                   for f in [src or {}, *((src or {}).get("imports") or [])]} - {None})
    manifest = {"planner": pattern,
                **({"sources": shas} if shas else {}),
                "description": f"Known divergences of {pattern}, drafted from "
                               f"{len(docs)} run(s); review every reason before trusting it.",
                "provenance": {"command": shlex.join(["python", "-m", "conformance", *argv]),
                               "drafted": now, "runs": sources},
                "divergences": divergences}
    return manifest, warnings


def run(args: argparse.Namespace) -> int:
    docs = []
    for path in args.sources:
        try:
            docs.append((path, load_results(path)))
        except ResultsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    fault = new_file_fault("--out", args.out) if args.out is not None else None
    if fault:  # a reviewed manifest is never overwritten
        print(f"error: {fault}", file=sys.stderr)
        return 2
    cases, _ = load_corpus(args.cases or None)
    outside = {c.id for c in cases if flat_read_outside_table(c)}
    manifest, warnings = draft(docs, args.planner, args.argv, outside)
    for warning in warnings:
        print(warning, file=sys.stderr)
    if not manifest["divergences"] and not warnings:
        print(f"note: no divergent result of planner {args.planner!r} in "
              f"{', '.join(map(str, args.sources))}", file=sys.stderr)
    text = dumps(manifest) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        try:
            write_new(args.out, text)
        except FileExistsError:
            print(f"error: --out {args.out}: appeared while drafting; not overwritten",
                  file=sys.stderr)
            return 2
        print(f"wrote {len(manifest['divergences'])} divergence(s) to {args.out}; review each "
              f"reason (REVIEW: marks those to decide)", file=sys.stderr)
    return 0
