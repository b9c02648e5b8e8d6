"""The child process of ``upstream-launchers``: import one of a release's launchers that a subject
names, from a laid-out tree, and judge it on every case of the subject with the one-call engine.

Run by :mod:`conformance.upstream.launchers_command` with the tree's ``site/`` first on PYTHONPATH
(``python -m conformance.upstream.launchers_child --subject NAME --launcher NAME --tree DIR --json
PATH --device cpu``), so that a crash or a hang costs this process, never the report. The JSON file
is rewritten after every case: a killed child still leaves the rows it finished.

Steps, in order: ``import`` (the subject's ``upstream_launchers(import_module, (NAME,))``, then
every ``sglang`` module now loaded re-hashed against the tree's RECORD SHA-256: a file that is
not the wheel's bytes stops the run) and ``judge`` (every case of the subject's folder, a row each:
:func:`conformance.upstream.entries_judge.judge_case`; then every module loaded by then, those a
launcher imports only when called included, re-hashed again: one that differs fails the step). Nothing here names a subject.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.upstream.launchers_child")
    parser.add_argument("--subject", required=True)
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--case", action="append", default=[], help="judge only these case ids")
    args = parser.parse_args(argv)
    from conformance.corpus.subjects import case_folder, discover
    from conformance.paths import CASES_ROOT
    from conformance.upstream.entries_child import loaded_files, not_wheel_bytes
    from conformance.upstream.entries_judge import judge_case
    from conformance.upstream.entries_tree import load_tree
    from conformance.upstream.entry_subject import tree_facts

    doc = {"subject": args.subject, "launcher": args.launcher, "device": args.device, "steps": []}

    def step(name, status, started, **detail):
        doc["steps"].append({"step": name, "status": status,
                             "seconds": round(time.monotonic() - started, 2), **detail})
        write()

    def write():
        args.json.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")

    t = time.monotonic()
    try:
        subject = discover()[args.subject]
        tree, facts = load_tree(args.tree), tree_facts(subject)
        launch = subject.upstream_launchers(importlib.import_module, (args.launcher,))[args.launcher]
        doc["loaded"] = loaded_files(tree, facts)
    except Exception as exc:  # noqa: BLE001 - every failure to import is the step's data
        step("import", "failed", t, error=f"{type(exc).__name__}: {exc}")
        return 1
    bad = not_wheel_bytes(doc["loaded"])
    step("import", "failed" if bad else "ok", t, error=f"not the wheel's bytes: {bad}" if bad else None)
    if bad:
        return 1
    t = time.monotonic()
    cases = subject.load_cases(case_folder(subject, CASES_ROOT))
    doc["cases"] = []
    for case in cases:
        if args.case and case["id"] not in args.case:
            continue
        doc["cases"].append(judge_case(launch, case, args.device, subject=subject))
        write()
    doc["loaded"] = loaded_files(tree, facts)  # modules a launcher imports only when called, too
    bad = not_wheel_bytes(doc["loaded"])
    step("judge", "failed" if bad else "ok", t, cases=len(doc["cases"]),
         error=f"not the wheel's bytes: {bad}" if bad else None)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
