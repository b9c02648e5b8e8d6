"""Where a run's results file goes, and when a run may write one: the default path, the paths a
run must never replace (a case folder, a file that is not a results file), the early claim that
empties the previous run's file before any option is checked, and whether a run collects the
corpus at all. The writer is :mod:`conformance.plugin.results_writer`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from conformance.corpus.case_file import display_path
from conformance.corpus.corpus_subject import registry as _registry
from conformance.fingerprint import run_fingerprint
from conformance.paths import CASES_ROOT, INSTALLED, committed_evidence, PACKAGE_DIR, REPO_ROOT, RESULTS_RELPATH
from conformance.reporting.results_format import FORMAT, VERSION, write_json_atomic

DEFAULT_PATH = RESULTS_RELPATH
"""Relative to the rootdir (the repository) in a checkout; from an installed wheel, relative to the
directory pytest was started in (:func:`default_results_path`)."""


def default_results_path(config: pytest.Config) -> Path:
    """:data:`DEFAULT_PATH` under the rootdir in a checkout; from an installed wheel under the
    directory pytest was started in (``pytest --pyargs conformance`` in another repository)."""
    return (config.invocation_params.dir if INSTALLED else config.rootpath) / DEFAULT_PATH


def _arg_path(config: pytest.Config, arg: str) -> Path:
    """The file or folder a command-line argument names; under ``--pyargs`` a module name is
    looked up as pytest does (``conformance`` is the package's folder)."""
    if config.getoption("pyargs", False):
        try:
            spec = find_spec(arg)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            origin = Path(spec.origin)
            return origin.parent if origin.name == "__init__.py" else origin
    return (config.invocation_params.dir / arg).resolve()


def not_a_results_path(path: Path, cases: list[Path]) -> str | None:
    """Why the run must not write its results to ``path``, or None: a path inside committed
    evidence (:func:`conformance.paths.committed_evidence`) or a case folder
    (``cases``, default every subject's folder: the repository's ``cases/``), or an existing file
    that is not a results file (a case file, a report, anything a user keeps): never replaced."""
    resolved = path.resolve()
    if committed_evidence(path):
        return (f"is inside the committed evidence folder {committed_evidence(path)}/: a run "
                "never writes there (name a path under reports/out/)")
    for folder in cases or [CASES_ROOT]:
        if resolved.is_relative_to(folder.resolve()):
            return f"is inside the case folder {display_path(folder)}: a run never writes there"
    if path.is_dir():
        return "is a folder; name a results file"
    if not path.exists():
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError as exc:
        return f"cannot be read ({exc.strerror}); a run replaces only a results file"
    if re.search(r'"format"\s*:\s*"%s"' % re.escape(FORMAT), head) is None:
        return ("exists and is not a conformance results file; a run replaces only a results "
                "file (remove it, or name another path)")
    return None


def claim_results_file(config: pytest.Config) -> None:
    """Before any option is checked (from the plugin's ``pytest_addoption``): replace the previous
    run's results file with an empty, incomplete one when this run targets the corpus, so that a
    run stopped by a usage error (a ``--planner`` typo, ``--isolate-timeout 0``, ``--sanitize`` on
    a machine without CUDA) never leaves the previous run's file to be reported as this one's.

    ``--results`` and the paths are read from the command line directly (pytest has not parsed it
    yet); a path :func:`not_a_results_path` refuses is left alone (the writer then refuses it
    with a usage error), and so is everything on a pytest-xdist worker, with ``--collect-only``,
    ``--help`` or ``--version``."""
    args = [str(a) for a in config.invocation_params.args]
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--results", type=Path)
    early.add_argument("--cases", action="append", type=Path, default=[])
    for flag in ("--collect-only", "--co", "--help", "-h", "--version", "-V"):
        early.add_argument(flag, action="store_true", dest=flag.strip("-").replace("-", "_"))
    try:
        known, rest = early.parse_known_args(args)
    except SystemExit:  # a malformed --results: pytest's own parse will say so
        return
    quiet = any(getattr(known, f, False) for f in ("collect_only", "co", "help", "h",
                                                     "version", "V"))
    if quiet or "PYTEST_XDIST_WORKER" in os.environ:
        return
    here = config.invocation_params.dir
    anchor = (REPO_ROOT / "conformance" / "test_corpus.py").resolve()
    # the path arguments: words that name something on disk (an option's value seldom does)
    paths = [p for p in ((here / a.split("::", 1)[0]).resolve() for a in rest
                         if not a.startswith("-")) if p.exists()]
    if paths and not any(p == anchor or p in anchor.parents for p in paths):
        return
    if not paths and INSTALLED and not ("--pyargs" in args and any(
            w == "conformance" or w.startswith("conformance.") for w in rest)):
        return  # an installed plugin in another repository's own test run: no corpus collected
    path = known.results if known.results is not None else default_results_path(config)
    path = path if path.is_absolute() else here / path
    if not_a_results_path(path, [c if c.is_absolute() else here / c for c in known.cases]):
        return
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    try:
        write_json_atomic(path, {"format": FORMAT, "version": VERSION, "complete": False,
                                 "exitstatus": None, "started": now, "updated": now,
                                 "args": args, "collected": None,
                                 "fingerprint": run_fingerprint([], _registry.availability,
                                                                   _registry.source_digest), "results": []})
    except OSError:  # the writer says so at the end of the run, if the run gets that far
        pass


def targets_corpus(config: pytest.Config) -> bool:
    """Whether this pytest run collects the corpus: one of its path arguments (or, without any,
    the rootdir) is ``conformance/test_corpus.py`` or a folder above it."""
    anchor = (PACKAGE_DIR / "test_corpus.py").resolve()
    args = [a.split("::", 1)[0] for a in config.args] or [str(config.rootpath)]
    for arg in args:
        path = _arg_path(config, arg)
        if path == anchor or path in anchor.parents:
            return True
    return False


def is_corpus_item(nodeid: str) -> bool:
    """Whether the pytest node id ``nodeid`` is an item of the corpus (``test_corpus.py``)."""
    return nodeid.split("::", 1)[0].endswith("test_corpus.py")
