"""``python -m conformance repro CASE --planner P [--out FILE]``: one standalone Python file that
reproduces a case on a planner, the thing to paste into an upstream bug report.

The file imports torch and the planner's module only (no harness). It builds the case's inputs as
the harness does (conformance/engine/inputs.py): the table and the LUT inside guard zones of a
garbage fill, per-request inputs followed by active garbage lanes, outputs inside guard zones filled
with a poison pattern; runs every step twice on two poisons over the same buffers; and checks the
expected error (type and exact message), every input allocation unchanged, and every element of
every output allocation: the defined regions of spec section 5 and everything else, which must
keep its previous contents. It prints each difference and exits 1, or prints ``PASS`` and exits 0.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import pprint
import os
import shlex
import sys
from pathlib import Path

import torch

from conformance.corpus.text import help_text
from conformance.corpus.arrays import evaluate
from conformance.corpus.entries import planner_name_error
from conformance.corpus.jsonfmt import dumps
from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import Case
from conformance.corpus.close_match import did_you_mean
from conformance.corpus.loader import load_corpus
from conformance import repro_checks
from conformance.engine.inputs import (GUARD, OUTPUT_DTYPES, POISONS, SCALAR_DEFAULTS,
                                       TABLE_GUARD_GARBAGE, TAIL, TAIL_GARBAGE, build_tables,
                                       output_lengths)
from conformance.corpus.corpus_subject import contract as _contract
from impls.source_file import PLANNER_PATH_ENV
from conformance.paths import new_file_fault, write_new
from conformance.engine.rerun import RUN_ENVIRONMENT, shell_command
from conformance.corpus.corpus_subject import registry as _registry

ARGUMENTS = _contract.ARGUMENTS
DEVICE_REFERENCE = _contract.DEVICE_REFERENCE
LUT_NAME = _contract.LUT_NAME
OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
TABLE_NAME = _contract.TABLE_NAME
UnknownPlanner = _registry.UnknownPlanner
get_planner = _registry.get_planner

MAIN = '''

if __name__ == "__main__":
    CONFIG = {k: globals()[k] for k in ("GUARD", "TAIL", "TAIL_GARBAGE", "TABLE_FILL", "LUT_FILL",
                                        "POISONS", "OUTPUT_LENGTHS", "OUTPUT_DTYPES",
                                        "NAMES")}
    found = run_repro(planner, DEVICE, STEPS, make_table, make_lut, CONFIG)
    for line in found:
        print(line)
    print(f"{'FAIL' if found else 'PASS'}: {CASE} on {PLANNER} ({DEVICE})")
    sys.exit(1 if found else 0)
'''


NAMES = {
    "bs_from": REQUEST_INPUT_NAMES[0], "table": TABLE_NAME, "lut": LUT_NAME,
    "scalars": SCALAR_NAMES, "one_element": SCALAR_OUTPUT_NAMES,
    "seeds": next(a.name for a in ARGUMENTS
                  if a.role == "output" and a.length == "[write_req_capacity]"),
    "device_reference": DEVICE_REFERENCE,
}
"""The launcher's argument names, by their part in :func:`conformance.repro_checks.run_repro`
(from the contract table); each script carries them as its ``NAMES``."""


def checks_source() -> str:
    """The source of :mod:`conformance.repro_checks` without its docstring and imports (the script
    has its own)."""
    source = inspect.getsource(repro_checks)
    body = ast.parse(source).body
    first = next(n for n in body[1:] if not isinstance(n, (ast.Import, ast.ImportFrom))).lineno
    return "\n".join(source.splitlines()[first - 1:])


def planner_import(name: str) -> tuple[str, str]:
    """(module, attribute) that imports planner ``name``: ``module.path:callable`` as given, a
    built-in through its launcher; both dotted Python identifiers (they are written into the
    script's import line). Raises UnknownPlanner (a name of another form), PlannerUnavailable."""
    fault = planner_name_error(name)
    if fault:
        raise UnknownPlanner(fault)
    if ":" in name:
        module, _, attr = name.partition(":")
        return module, attr
    launch = get_planner(name)
    fault = planner_name_error(f"{launch.__module__}:{launch.__qualname__}")
    if fault:
        raise UnknownPlanner(fault)
    return launch.__module__, launch.__qualname__


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tensor_expr(t: torch.Tensor) -> str:
    """A short Python expression that builds ``t``: an arange when it is one, else its values."""
    dtype = f"torch.{_dtype_name(t.dtype)}"
    shape = tuple(t.shape)
    flat = t.flatten().tolist()
    if flat and flat == list(range(flat[0], flat[0] + len(flat))):
        return f"torch.arange({flat[0]}, {flat[0] + len(flat)}, dtype={dtype}).reshape({shape})"
    return f"torch.tensor({dumps(flat, 1)}, dtype={dtype}).reshape({shape})"


def _expect(step) -> dict:
    if step.error is not None:
        return {"error": step.error}
    return {name: (step.expect[name] if not isinstance(step.expect[name], (list, dict))
                   else evaluate(step.expect[name])) for name in OUTPUT_NAMES}


def render(case: Case, planner: str, command: str, note: str = "") -> str:
    """The repro file's text for ``case`` on ``planner``."""
    module, attr = planner_import(planner)
    table, lut = build_tables(case, torch.device("cpu"))
    steps = [{"requests": {n: evaluate(s.inputs.get(n, [])) for n in TAIL_GARBAGE},
              **{n: s.inputs.get(n, default) for n, default in SCALAR_DEFAULTS.items()},
              "req_to_token_set": s.inputs.get("req_to_token_set", []),
              "lut_set": s.inputs.get("lut_set", []), "overrides": s.overrides,
              "expect": _expect(s)} for s in case.steps]
    # Every text the case file, the command line or the planner supplies is data: one JSON string
    # in a Python string literal (repr), read back with json.loads, never source text or a
    # docstring of its own (a description holding '"""' or "\\N{bogus}" stays a string).
    about = {"case": case.id, "planner": f"{module}:{attr}", "description": case.description,
             "note": note, "case_file": case.location, "source": case.source,
             "written_by": command}
    doc = ('"""Repro of one conformance case on one planner: ABOUT below says which, what\n'
           "the case is and the rule it checks.\n\n"
           "Standalone: needs torch and the planner's module only, imported as any module is:\n"
           "run it with the planner's folder on PYTHONPATH (PYTHONPATH=FOLDER python THIS_FILE).\n"
           "Exit 0 and PASS when the planner meets the case; exit 1 and every difference\n"
           "printed when it does not; exit 2 when the planner cannot be imported.\n"
           '"""\n')
    poisons = [{_dtype_name(k): v for k, v in POISONS[run].items()} for run in POISONS]
    dtypes = {name: _dtype_name(d) for name, d in OUTPUT_DTYPES.items()}
    data = "\n".join([
        f"ABOUT = json.loads({json.dumps(about, ensure_ascii=True)!r})",
        'CASE, PLANNER = ABOUT["case"], ABOUT["planner"]',
        f"GUARD, TAIL = {GUARD}, {TAIL}",
        f"TAIL_GARBAGE = {TAIL_GARBAGE!r}",
        f"TABLE_FILL = {TABLE_GUARD_GARBAGE[torch.int32]}  # guard zones around req_to_token",
        f"LUT_FILL = {TABLE_GUARD_GARBAGE[torch.int64]}  # guard zones around the LUT",
        f"POISONS = {poisons!r}",
        f"OUTPUT_LENGTHS = {output_lengths(case)!r}",
        f"OUTPUT_DTYPES = {{n: getattr(torch, d) for n, d in {dtypes!r}.items()}}",
        f"NAMES = {NAMES!r}  # the launcher's argument names, by their part in run_repro",
        "",
        "",
        "def make_table():",
        f"    return {_tensor_expr(table.clone())}",
        "",
        "",
        "def make_lut():",
        f"    return {'None' if lut is None else _tensor_expr(lut.clone())}",
        "",
        "",
        f"STEPS = {pprint.pformat(steps, width=100, compact=True, sort_dicts=False)}",
    ])
    head = ("import json\nimport os\nimport sys\n\nimport torch\n\n"
            "DEVICE = os.environ.get(\"REPRO_DEVICE\") or (\"cuda\" if torch.cuda.is_available() "
            "else \"cpu\")\n"
            "if DEVICE == \"cpu\":  # no GPU: Triton's interpreter, Numba's CUDA simulator\n"
            "    os.environ.setdefault(\"TRITON_INTERPRET\", \"1\")\n"
            "    os.environ.setdefault(\"NUMBA_ENABLE_CUDASIM\", \"1\")\n"
            "try:\n"
            f"    from {module} import {attr.split('.')[0]} as planner  # noqa: E402\n"
            "except ImportError as exc:  # no verdict: say so, and how to get the module\n"
            "    print(f\"cannot import the planner's module: {exc}; run this file with the \"\n"
            "          \"planner's folder on PYTHONPATH (PYTHONPATH=FOLDER python THIS_FILE)\",\n"
            "          file=sys.stderr)\n"
            "    sys.exit(2)\n")
    if "." in attr:
        head += f"planner = planner.{attr.split('.', 1)[1]}\n"
    return "\n".join([doc, head, data, "", checks_source(), MAIN])


def add_parser(sub) -> None:
    """Register ``repro`` on the CLI's subparsers."""
    p = sub.add_parser("repro", help="write a standalone script that reproduces a case",
                       description=help_text(__doc__),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case", metavar="CASE", help="case id")
    p.add_argument("--planner", required=True, help="built-in name or module.path:callable")
    p.add_argument("--out", type=Path, metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--note", default="", help="a line for the docstring (the spec section broken)")
    p.set_defaults(func=run)


def rerun_command(args: argparse.Namespace) -> str:
    """The ``python -m conformance ... repro`` command that writes this script again, for its
    ``ABOUT["written_by"]``: the case folders as the command line gave them (``--cases DIR`` and
    ``--extra-cases DIR``, in that order, before the subcommand: ``args.case_folders`` of
    :func:`conformance.cli.main`), so that a case of an ``--extra-cases`` folder is found beside
    the corpus again; without ``case_folders``, the folded ``args.cases`` as ``--cases``."""
    folders = getattr(args, "case_folders", None)
    if folders is None:
        folders = [("--cases", d) for d in args.cases or []]
    return shlex.join(["python", "-m", "conformance",
                       *[a for option, d in folders for a in (option, display_path(d))],
                       "repro", args.case, "--planner", args.planner,
                       *(["--note", args.note] if args.note else [])])


def run(args: argparse.Namespace) -> int:
    fault = planner_name_error(args.planner)
    if fault:
        print(f"error: {fault}", file=sys.stderr)
        return 2
    cases, errors = load_corpus(args.cases or None)
    by_id = {c.id: c for c in cases}
    if args.case not in by_id:
        print(f"error: no case has id {args.case!r}{did_you_mean(args.case, by_id)}"
              + (f" ({len(errors)} case file fault(s))" if errors else "")
              + "; a case in a folder of your own: python -m conformance --extra-cases DIR repro "
              "CASE --planner P (the folder options go before the subcommand)", file=sys.stderr)
        return 2
    case = by_id[args.case]
    if case.entry != "launcher":
        print(f"error: {args.case} is a {case.entry} case: only launcher cases call a planner",
              file=sys.stderr)
        return 2
    command = rerun_command(args)
    try:
        text = render(case, args.planner, command, args.note)
    except (UnknownPlanner, RuntimeError) as exc:
        print(f"error: planner {args.planner!r}: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
    else:
        fault = new_file_fault("--out", args.out)
        if fault is None:
            try:
                write_new(args.out, text)
            except FileExistsError:
                fault = f"--out {args.out}: appeared meanwhile; not overwritten"
        if fault:
            print(f"error: {fault}", file=sys.stderr)
            return 2
        # the script imports the planner itself (it is a bug report, not a verdict): its folders
        # on the script's PYTHONPATH
        path = [p for p in (RUN_ENVIRONMENT.get("PYTHONPATH"),
                            RUN_ENVIRONMENT.get(PLANNER_PATH_ENV)) if p]
        env = {"PYTHONPATH": os.pathsep.join(path)} if path else {}
        command = shell_command(["python", str(args.out)], env)
        if not path and ":" in args.planner:  # an external planner whose folder this run was not told
            command = f"PYTHONPATH=FOLDER {command} (FOLDER: the folder that holds " \
                      f"{args.planner.partition(':')[0].split('.')[0]}, unless it is installed)"
        print(f"wrote {args.out}: run it with {command}", file=sys.stderr)
    return 0
