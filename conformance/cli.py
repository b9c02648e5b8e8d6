"""``python -m conformance``: the harness's commands besides the pytest run (planners, cases,
goldens, reports, fuzzing, the benchmark, manifests, bug-report scripts, mutants, releases).

Subcommands:
  planners [--subject S]   every built-in planner: available here?, mode, device, why not
  cases [--tag T] [--subject S]
                           every case: id, tags, entry, steps, file (a one-call subject's:
                           id, tags, pins, expects, file:line)
  record ID [ID ...] [--write]
                           goldens from the pure-Python planner, printed (or written into the
                           case file with --write); check them against the spec before trusting
  report [RESULTS] [--bench B] [--publish DIR] [--format html|markdown|text]
  report --compare OLD NEW  a run's results as a page, or what changed between two runs
  fuzz --planner P [--planner Q ...] [--n N] [--seed S] [--out DIR] [--isolate]
                           random valid plans against the pure-Python planner; divergences are
                           shrunk and written as cases (default cases/<subject>/found/,
                           needs review)
  bench [--planner P ...] [--bs 0,1,64] [--mode M] [--scenario S] [--json PATH] [--report MD]
                           the benchmark suite (pytest conformance/bench) and its table
  manifest --from RESULTS [--from ...] --planner P [--out FILE]
                           draft a known-divergence manifest from real runs, for review
  repro CASE --planner P [--out FILE]
                           a standalone script (torch + the planner only) that reproduces a case
  mutants [--list] [--mutant NAME ...] [--case ID ...] [--json PATH]
                           the corpus's mutation score: planted mutants killed per profile
  upstream RELEASE [RELEASE ...] [--wheel PATH]
                           sglang's published releases judged unchanged: results per release
                           under reports/out/upstream/RELEASE/, a matrix across them
  upstream-entries RELEASE --out DIR [--subject NAME] [--wheel PATH | --tree DIR --no-layout]
                           a release's kernel of a subject's launcher (its UPSTREAM_ENTRY)
                           built by sglang's own JIT (tvm-ffi, ninja, nvcc) and judged on
                           this GPU, or why it could not be
  upstream-launchers RELEASE --subject NAME --out DIR [--launcher NAME ...] [--wheel PATH]
                           a release's own launchers that a subject names (its
                           UPSTREAM_LAUNCHERS) judged unchanged on the subject's cases
--cases DIR / --extra-cases DIR (a case folder instead of / as well as the corpus) go before the
subcommand: ``python -m conformance --extra-cases DIR cases``.
The tests themselves run under pytest: ``pytest conformance/ [--planner NAME] [--case ID]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tabulate import tabulate

from conformance.corpus.text import help_text
from conformance import manifest_draft, repro
from conformance.robustness import fuzz_command, mutants
from conformance.bench import cli as bench_cli
from conformance.corpus.case_file import display_path
from conformance.corpus.close_match import did_you_mean
from conformance.corpus.loader import OWN_FOLDER_HINT, load_corpus
from conformance.corpus.jsonfmt import dumps
from conformance.paths import INSTALLED, PACKAGED_DATA
from conformance.reporting.command import add_report_parser
from conformance.plugin.case_folders import given as folders_given
from conformance.plugin.extra_cases import with_extra_cases
from conformance.upstream import command as upstream_command
from conformance.upstream import entries_command as upstream_entries_command
from conformance.upstream import launchers_command as upstream_launchers_command
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.corpus_subject import registry as _registry

planners = _registry.planners


def _count(n: int, noun: str) -> str:
    """``1 case``, ``2 cases``, ``0 faulty file entries``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} " + (noun[:-1] + "ies" if noun.endswith("y") else noun + "s")


def _one_call_subject(args: argparse.Namespace):
    """The one-call subject ``--subject`` names, None for the corpus engine's (the default; the
    other subjects' names go to stderr); raises SystemExit(2) for an unknown name."""
    from conformance.corpus.subjects import SubjectError, discover

    try:
        found = discover()
    except SubjectError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    one_call = sorted(n for n, m in found.items() if m.ENGINE == "one-call")
    if args.subject is None:
        corpus = ", ".join(n for n, m in found.items() if m.ENGINE == "corpus")
        if one_call:
            print(f"(subject {corpus}; also: {', '.join(one_call)}, with "
                  f"`{args.command} --subject NAME`)", file=sys.stderr)
        return None
    if args.subject not in found:
        print(f"error: --subject {args.subject}: not one of {', '.join(sorted(found))}",
              file=sys.stderr)
        raise SystemExit(2)
    return found[args.subject] if args.subject in one_call else None


def _cmd_planners(args: argparse.Namespace) -> int:
    subject = _one_call_subject(args)
    if subject is not None:
        from conformance.plugin.one_call_items import availability

        found = [(name, availability(subject, name)) for name in subject.PLANNERS]
    else:
        found = planners()
    rows = [[name, "yes" if a.available else "no", a.mode or "-", a.device, a.reason or ""]
            for name, a in found]
    print(tabulate(rows, headers=["planner", "available", "mode", "device", "reason"]))
    return 0


def _load(args: argparse.Namespace, quiet: bool = False):
    cases, errors = load_corpus(args.cases or None)
    if not quiet:
        _print_faults(errors)
    return cases, errors


def _print_faults(errors) -> None:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)


def _cmd_one_call_cases(args: argparse.Namespace, subject) -> int:
    from conformance.corpus.subjects import case_folder
    from conformance.paths import CASES_ROOT

    cases = subject.load_cases(case_folder(subject, CASES_ROOT))
    faults = [c for c in cases if "_fault" in c]
    rows = [[c["id"], ",".join(c.get("tags", ())), c.get("pins") or "",
             "error" if subject.expected_error(c) else "valid",
             f"{display_path(Path(c['_file']))}:{c['_line']}"]
            for c in cases if "_fault" not in c and (not args.tag or args.tag in c.get("tags", ()))]
    print(tabulate(rows, headers=["id", "tags", "pins", "expects", "file:line"]))
    sys.stdout.flush()
    for c in faults:
        print(f"error: {display_path(Path(c['_file']))}:{c['_line']}: {c['_fault']}", file=sys.stderr)
    print(f"\n{_count(len(rows), 'case')}, {_count(len(faults), 'faulty file entry')}")
    return 1 if faults else 0


def _cmd_cases(args: argparse.Namespace) -> int:
    subject = _one_call_subject(args)
    if subject is not None:
        return _cmd_one_call_cases(args, subject)
    cases, errors = _load(args, quiet=True)
    rows = [[c.id, ",".join(c.tags), c.entry, len(c.steps), display_path(c.path)]
            for c in cases if not args.tag or args.tag in c.tags]
    print(tabulate(rows, headers=["id", "tags", "entry", "steps", "file"]))
    sys.stdout.flush()
    _print_faults(errors)  # last, where `| tail` shows them
    print(f"\n{_count(len(rows), 'case')}, {_count(len(errors), 'faulty file entry')}")
    return 1 if errors else 0


def _cmd_record(args: argparse.Namespace) -> int:
    from conformance.engine.steps import CaseBuildError
    from conformance.record import (golden_fault, load_without_goldens, record_expectations,
                                    write_expectations)

    cases, errors = _load(args, quiet=True)
    by_id = {c.id: c for c in cases}
    faulty = [e for e in errors if e.case_id in args.ids]
    for case_id in dict.fromkeys(e.case_id for e in faulty):
        own = [e for e in faulty if e.case_id == case_id]
        if all(golden_fault(e) for e in own):  # a new case: its goldens are what record writes
            case, still = load_without_goldens(own[0])
            faulty = [e for e in faulty if e.case_id != case_id] + still
            if case is not None:
                by_id[case_id] = case
    if faulty:  # the case is in the corpus, but its file is at fault: say where, only that
        _print_faults(faulty)
        return 1
    missing = [i for i in args.ids if i not in by_id]
    if missing:
        named = ", ".join(m + did_you_mean(m, by_id) for m in missing)
        print(f"error: no such case id(s): {named}; {OWN_FOLDER_HINT} (before the "
              "subcommand)", file=sys.stderr)
        return 2
    for case_id in args.ids:
        case = by_id[case_id]
        if case.entry != "launcher":
            print(f"error: {case_id}: only launcher cases have goldens", file=sys.stderr)
            return 2
        try:
            expectations = record_expectations(case)
        except CaseBuildError as exc:
            print(f"error: {case_id}: {exc}", file=sys.stderr)
            return 1
        if args.write and INSTALLED and case.path.resolve().is_relative_to(PACKAGED_DATA):
            print(f"error: {case_id}: the corpus of an installed wheel is not edited in place; "
                  "copy the case into a folder of your own and pass it with --extra-cases",
                  file=sys.stderr)
            return 2
        if args.write:
            if write_expectations(case, expectations):
                print(f"wrote {len(expectations)} golden(s) into {display_path(case.path)} "
                      f"({case_id}), marked needs_review; check them against the spec, say how "
                      f"in golden_check and drop needs_review")
            else:
                print(f"{display_path(case.path)} ({case_id}) already holds these "
                      f"{len(expectations)} golden(s): left as it is")
        else:
            print(dumps(expectations if len(expectations) > 1 else expectations[0]))
    return 0


CASE_FOLDER_OPTIONS = ("--cases", "--extra-cases")
"""The options of ``python -m conformance`` itself that name case folders (before the command)."""


def _case_folder_after_command(argv: list[str], commands: set[str]) -> str | None:
    """The first of :data:`CASE_FOLDER_OPTIONS` given after the subcommand in ``argv`` (which
    argparse would call an unrecognized argument), or None."""
    i = 0
    while i < len(argv) and argv[i] not in commands:
        i += 2 if argv[i] in CASE_FOLDER_OPTIONS else 1  # an option and its folder
    for word in argv[i + 1:]:
        if word.split("=", 1)[0] in CASE_FOLDER_OPTIONS:
            return word.split("=", 1)[0]
    return None


def _command_option_before_command(argv: list[str], commands: set[str]) -> tuple[str, str] | None:
    """``(option, command)`` for the first option given before the subcommand in ``argv`` that
    ``python -m conformance`` itself does not take (``--subject`` in ``python -m conformance
    --subject NAME planners``, which argparse would answer with ``invalid choice: 'NAME'``), or
    None. Abbreviations of its own options (``--extra``) are its own."""
    own = (*CASE_FOLDER_OPTIONS, "--help")
    i = 0
    found = None
    while i < len(argv) and argv[i] not in commands:
        word = argv[i].split("=", 1)[0]
        if word in CASE_FOLDER_OPTIONS and "=" not in argv[i]:
            i += 2  # an option and its folder
            continue
        if found is None and word.startswith("--") and word != "--" \
                and not any(name.startswith(word) for name in own):
            found = word
        i += 1
    if found is None or i >= len(argv):
        return None
    return found, argv[i]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="python -m conformance", description=help_text(__doc__),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", action="append", type=Path, metavar="DIR",
                        help="case directory (repeatable; default: the repo's "
                             f"cases/{CORPUS_NAME}/)")
    parser.add_argument("--extra-cases", action="append", type=Path, metavar="DIR",
                        help="case directory to use as well as the corpus (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)
    subject_help = "a one-call subject (default: the corpus engine's)"
    p = sub.add_parser("planners", help="list planners")
    p.add_argument("--subject", default=None, metavar="NAME", help=subject_help)
    p.set_defaults(func=_cmd_planners)
    p = sub.add_parser("cases", help="list cases")
    p.add_argument("--tag", help="only the cases that carry this tag (hazard, swa, ...)")
    p.add_argument("--subject", default=None, metavar="NAME", help=subject_help)
    p.set_defaults(func=_cmd_cases)
    p = sub.add_parser("record", help="record goldens from the pure-Python planner")
    p.add_argument("ids", nargs="+", metavar="ID",
                   help="case id (python -m conformance cases lists them)")
    p.add_argument("--write", action="store_true", help="write into the case file")
    p.set_defaults(func=_cmd_record)
    add_report_parser(sub)
    fuzz_command.add_parser(sub)
    bench_cli.add_parser(sub)
    manifest_draft.add_parser(sub)
    repro.add_parser(sub)
    mutants.add_parser(sub)
    upstream_command.add_parser(sub)
    upstream_entries_command.add_parser(sub)
    upstream_launchers_command.add_parser(sub)
    given = list(sys.argv[1:] if argv is None else argv)
    late = _case_folder_after_command(given, set(sub.choices))
    if late:
        parser.error(f"{late} goes before the subcommand: python -m conformance {late} DIR "
                     "COMMAND ...")
    early = _command_option_before_command(given, set(sub.choices))
    if early:
        option, command = early
        parser.error(f"{option} is an option of the subcommand, not of python -m conformance: "
                     f"python -m conformance {command} {option} ... (only --cases and "
                     "--extra-cases go before the subcommand)")
    args = parser.parse_args(argv)
    args.case_folders = folders_given(args.cases, args.extra_cases)  # as given, for a command's rerun
    args.cases = with_extra_cases(args.cases, args.extra_cases)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args.func(args)
