"""A results file as an HTML page, Markdown or text; or what changed between two runs.

  report [RESULTS] [--bench BENCH_JSON] [--out PATH] [--publish DIR] [--format html|markdown|text]
         [--max-failures-per-group N]
  report --compare OLD NEW [--format html|markdown|text] [--out PATH] [--fail-on-regression]

RESULTS defaults to ``reports/out/results.json`` (written by every ``pytest conformance/`` run).
HTML goes to ``--out`` (default ``reports/report.html``, or ``reports/compare.html``; with
``--publish`` only there unless ``--out`` is given); Markdown and text go to standard output unless
``--out`` is given.

Every report shows each failure group (a planner's failures with the same first difference) with
its count, and the full report of at most N failures of each (``--max-failures-per-group``; 0:
every one), saying how many it left out: one bug that fails 80 cases would otherwise print 80
reports in Markdown, past the 65,536 characters of a GitHub comment. Without the option, Markdown
and text show 3 of each group and HTML (the page and ``--publish``) every one, since the page's
matrix links each cell to its failure's report and keeps the reports folded. The results file
keeps them all.

Exit status: 0 when the report is written; 1 when it is written but the run is incomplete
(interrupted, killed, stopped early: the report's first line says so), for --compare when either
side is incomplete (and with --fail-on-regression when there is any regression, when no planner
was compared, or when a planner only NEW ran has items not passing), and with
--strict also when the results are stale (another commit, a planner's source changed since the
run, or a recorded source that cannot be checked now: its module found neither in the run's
folders nor here, its lookup refused), an external planner has no source digest (a change to it
could not be seen), or a benchmark's figures are withheld (the bench ran other code than the run
judged, the run judged the planner wrong, or judged it on less than the whole corpus, or a
declaration the corpus does not make excused its failure); 2 for unusable input or output
(one-line error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.corpus.text import help_text, terminal_text
from conformance.paths import DEFAULT_COMPARE_HTML, DEFAULT_REPORT_HTML, DEFAULT_RESULTS, evidence_fault
from conformance.reporting.failure_details import DEFAULT_LIMIT, OPTION
from conformance.reporting.publish import PublishError, publish
from conformance.reporting.report_files import GENERATOR, LAST_LINES, is_report_file
from conformance.reporting.results_format import ResultsError, load_results


def add_report_parser(sub) -> None:
    """Register ``report`` on the CLI's subparsers (this module: its arguments and dispatch)."""
    p = sub.add_parser("report", help="results file -> HTML page, Markdown or text; --compare",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="?", type=Path, default=DEFAULT_RESULTS, metavar="RESULTS",
                   help="results file or --publish folder (default: reports/out/results.json)")
    p.add_argument("--bench", type=Path, metavar="BENCH_JSON",
                   help="pytest-benchmark JSON: adds the benchmark table and plots")
    p.add_argument("--out", type=Path, metavar="PATH", help="where to write the report")
    p.add_argument("--publish", type=Path, metavar="DIR",
                   help="also write DIR/index.html and DIR/results.json (and bench.json)")
    p.add_argument("--format", choices=("html", "markdown", "text"), default="html",
                   help="html (default: a page written to --out, reports/report.html), or "
                        "markdown / text (standard output unless --out is given)")
    p.add_argument(OPTION, type=_limit, default=None, metavar="N",
                   help=f"the full report of at most N failures of each failure group (same "
                        f"planner, same first difference), the others counted (0: every one; "
                        f"default: {DEFAULT_LIMIT} in Markdown and text, every one in HTML, where "
                        f"each matrix cell links to its report); also for --publish, not for "
                        f"--compare")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"),
                   help="compare two runs: results files, benchmark files or --publish folders")
    p.add_argument("--fail-on-regression", action="store_true",
                   help="with --compare: exit 1 when there are regressions (newly failing or "
                        "disappeared items), when no planner was compared, or when a planner "
                        "only NEW ran has items not passing, for a CI gate")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when the results are stale (another commit, a planner's "
                        "source changed since the run or not verifiable now), an external "
                        "planner has no source digest, or benchmark figures are withheld, as for "
                        "an incomplete run")
    p.set_defaults(func=run_report)


def _per_group(args: argparse.Namespace, form: str) -> int:
    """The full reports a failure group gets in a report of format ``form``: the option's N when
    given, else every one (0) in HTML and :data:`DEFAULT_LIMIT` in Markdown and text."""
    if args.max_failures_per_group is not None:
        return args.max_failures_per_group
    return 0 if form == "html" else DEFAULT_LIMIT


def _limit(text: str) -> int:
    """``--max-failures-per-group``'s value: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a whole number, 0 (every failure) or more")
    return value


class OutputError(OSError):
    """``--out`` (or ``--publish``) names a place the report cannot be written to."""


def _emit(text: str, out: Path | None, default: Path | None, kind: str = "html") -> None:
    target = out or default
    if target is None:
        sys.stdout.write(text)
        return
    if target.is_dir():
        raise OutputError(f"--out {target}: is a folder; name a file (or use --publish DIR)")
    fault = evidence_fault("--out", target)
    if fault:
        raise OutputError(fault)
    if target.exists() and not is_report_file(target):
        raise OutputError(f"--out {target}: exists and is not a report this command wrote (no "
                          f"{GENERATOR!r} line): a file you keep is never replaced; name a new "
                          "file or remove it")
    if kind == "markdown":
        text = text.rstrip("\n") + f"\n\n{LAST_LINES[0]}\n"
    elif kind == "text":
        text = text.rstrip("\n") + f"\n\n{LAST_LINES[1]}\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    except OSError as exc:
        raise OutputError(f"--out {target}: cannot write: {exc.strerror or exc}") from exc
    print(f"wrote {target}")


def _own_input(args: argparse.Namespace) -> str | None:
    """Why this command would write over one of its own inputs (``--out`` or a ``--publish``
    file being the results or benchmark file it reads), or None."""
    inputs = [p for p in (*(args.compare or ()), None if args.compare else args.results,
                          args.bench) if p is not None]
    if args.results is not None and not args.compare and args.results.is_dir():
        inputs += [args.results / "results.json", args.results / "bench.json"]
    targets = [("--out", args.out)] if args.out else []
    if args.publish and not args.compare:
        targets += [("--publish", args.publish / n) for n in ("index.html", "results.json",
                                                              "bench.json")]
    for option, target in targets:
        for given in inputs:
            if target.exists() and given.exists() and target.resolve() == given.resolve():
                return (f"{option} {target}: is the input {given}; a report never writes over "
                        "its own input")
    return None


def run_report(args: argparse.Namespace) -> int:
    """Run ``report``; returns the exit code (see the module docstring)."""
    from conformance.reporting import compare, compare_render, compare_verdict, report, report_lines
    from conformance.reporting.bench_figures import BenchError
    from conformance.reporting.failure_details import with_limit

    clash = _own_input(args)
    if clash:
        print(f"error: {clash}", file=sys.stderr)
        return 2
    try:
        if args.compare:
            model = compare.compare(*args.compare)
            if args.format == "html":
                _emit(compare_render.render_html(model), args.out, DEFAULT_COMPARE_HTML)
            else:
                fmt = "github" if args.format == "markdown" else "simple"
                _emit(compare_render.render_markdown(model, fmt), args.out, None, args.format)
            failed = compare_verdict.gate(model) if args.fail_on_regression else []
            if failed:  # also on stderr: the comparison may be going to a file
                print(f"--fail-on-regression: {'; '.join(failed)}", file=sys.stderr)
            return 1 if model["incomplete"] or failed else 0
        if args.results.is_dir():  # a --publish folder: its results.json (and bench.json)
            folder, args.results = args.results, args.results / "results.json"
            if args.bench is None and (folder / "bench.json").exists():
                args.bench = folder / "bench.json"
        doc = load_results(args.results)
        model = report.build(doc, args.bench, max_per_group=_per_group(args, args.format))
        models = {args.format: model}
        if args.publish and args.format != "html":  # the page's own limit, on the same model
            models["html"] = with_limit(model, _per_group(args, "html"))
        _write_report(models, args)
    except (ResultsError, BenchError, FileNotFoundError, OutputError, compare.KindsError,
            PublishError) as exc:
        print(f"error: {terminal_text(str(exc))}", file=sys.stderr)
        return 2
    warning = report_lines.warning(model)
    if warning:  # also on stderr: Markdown and text may be going to a file
        print(f"warning: {terminal_text(warning)}", file=sys.stderr)  # the file's text: escaped
    held = (model.get("bench") or {}).get("withheld")
    return 1 if model["incomplete"] or (args.strict and (model["stale"] or model["undigested"]
                                                         or held or model["profile_fault"])) \
        else 0


def _write_report(models: dict[str, dict], args: argparse.Namespace) -> None:
    """Write the report of ``models[args.format]`` where ``args`` says, and with ``--publish``
    the page of ``models["html"]``."""
    from conformance.reporting import report_render

    model = models[args.format]
    if args.format == "text":
        _emit(report_render.render_text(model), args.out, None, "text")
    elif args.format == "markdown":
        _emit(report_render.render_markdown(model), args.out, None, "markdown")
    elif args.out or not args.publish:
        _emit(report_render.render_html(model), args.out, DEFAULT_REPORT_HTML)
    if args.publish:
        if args.publish.exists() and not args.publish.is_dir():
            raise OutputError(f"--publish {args.publish}: is a file; name a folder")
        html = report_render.render_html(models["html"])
        for path in publish(args.publish, args.results, html, args.bench):
            print(f"published {path}")
