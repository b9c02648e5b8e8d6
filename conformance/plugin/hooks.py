"""The pytest front end: one test per (case, planner), selection options and the summary table.

Loaded by the repository's root ``conftest.py``, and in an installed wheel by its ``pytest11`` entry
point (``pytest --pyargs conformance``). ``pytest conformance/`` collects, from
``conformance/test_corpus.py``, one item per (case, planner) named ``case-id[planner]``:

* ``--planner NAME`` (repeatable): built-in name or ``module.path:callable``; default every
  built-in planner, the unavailable ones skipped with their reason.
* ``--case ID`` (repeatable): exact case ids; ``-k`` works as usual.
* ``--cases DIR`` (repeatable): folders of the corpus subject's case files; default the repository's
  ``cases/<subject>/``.
* ``--extra-cases DIR`` (repeatable): case directories run as well (:mod:`.extra_cases`).

Cases with ``"entry": "validator"`` / ``"allocate"`` exercise the shared validator / allocator and
run once, as ``case-id[validator]`` / ``case-id[allocator]``. A faulty case file fails as one item
``<file>[load]`` naming the file and JSON path; every other case still runs. Works under
``pytest -n auto`` (pytest-xdist): collection is deterministic and the summary is tallied from
reports on the controller. The items themselves are :mod:`conformance.plugin.corpus_items`.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from conformance.plugin import gpu_pinning  # noqa: F401 - first: pins an xdist worker's GPU before CUDA use
from conformance.corpus.subjects import SubjectError

try:  # which corpus subject this process runs is chosen at its import: a refusal is a usage error
    import conformance.corpus.corpus_subject  # noqa: F401
except SubjectError as _exc:
    raise pytest.UsageError(f"conformance: {_exc}") from None
from conformance.plugin.results_path import claim_results_file
from conformance.plugin.results_writer import ResultsWriter, add_results_options
from conformance.corpus.entries import planner_name_error
from conformance.engine.inputs import new_poison_seed, poison_seed, set_poison_seed
from conformance.engine.rerun import CORPUS_COMMAND, POISON_SEED_VARIABLE, RUN_SETTINGS
from conformance.plugin.corpus_items import CorpusFile, warn_deselected
from conformance.plugin.tally import Summary
from conformance.paths import REPO_ROOT
from impls.planner_path import judge_path_fault
from conformance.plugin import one_call_items as subjects
from conformance.robustness.in_process import install_interrupt_flag
from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.corpus_subject import registry as _registry

availability = _registry.availability
builtin_names = _registry.builtin_names
probe_all = _registry.probe_all

pytest_plugins = [
    # first: subjects imports it, and a plugin module imported before pytest registers it is not
    # assertion-rewritten (a PytestAssertRewriteWarning in every run)
    "conformance.plugin.extra_cases",  # --extra-cases: a repository's own cases with the corpus
    "conformance.plugin.subjects",  # --subject, --subject-module, the one-call subjects' items
    "conformance.plugin.isolation_options",  # --(no-)isolate, --isolate-timeout, --sandbox, --sanitize
    "conformance.plugin.planner_maxfail",  # --planner-maxfail: a planner's later cases skipped
    "conformance.plugin.profiles",  # --profile, --manifest: pins and known divergences
    "conformance.bench.plugin",  # conformance/bench: opt-in benchmarks, --bench-*
]
ANCHOR = "test_corpus.py"


def pytest_addoption(parser: pytest.Parser, pluginmanager) -> None:
    group = parser.getgroup("conformance", "kernel conformance")
    group.addoption("--planner", action="append", default=[], metavar="NAME",
                    help="planner to run: a built-in name (python -m conformance planners "
                         "lists them: python, triton, numba-cuda, triton-bound, ...) or "
                         "module.path:callable (repeatable; default: every built-in planner)")
    group.addoption("--case", action="append", default=[], metavar="ID",
                    help="run only this case id (repeatable)")
    group.addoption("--cases", action="append", default=[], metavar="DIR", type=Path,
                    help="directory of case files (repeatable; default: the repo's "
                         f"cases/{CORPUS_NAME}/)")
    group.addoption("--poison-seed", type=_seed, default=None, metavar="N",
                    help="draw the poison and guard fills from seed N (default: "
                         f"${POISON_SEED_VARIABLE}, else a fresh seed from os.urandom; recorded "
                         "in the results and in every rerun command)")
    add_results_options(group)
    config = pluginmanager.get_plugin("pytestconfig")
    if config is not None:  # before any option is checked: see claim_results_file
        claim_results_file(config)


def _seed(text: str) -> int:
    """argparse type of ``--poison-seed``: an integer >= 0."""
    import argparse

    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be >= 0")
    return value


def _use_poison_seed(config: pytest.Config) -> None:
    """This process's poison seed: ``--poison-seed``, else the controller's under pytest-xdist
    (one seed per run), else :data:`POISON_SEED_VARIABLE` (a rerun's), else a fresh one; recorded
    for rerun commands. The variable is removed from the environment, which the isolation worker
    and the availability probe would inherit."""
    seed = config.getoption("poison_seed")
    if seed is None and hasattr(config, "workerinput"):
        seed = config.workerinput.get("conformance_poison_seed")
    given = os.environ.pop(POISON_SEED_VARIABLE, None)
    if seed is None and given is not None:
        try:
            seed = _seed(given)
        except Exception as exc:  # noqa: BLE001 - argparse's error, said as a usage error
            raise pytest.UsageError(f"${POISON_SEED_VARIABLE}: {exc}") from None
    seed = new_poison_seed() if seed is None else seed
    set_poison_seed(seed)
    RUN_SETTINGS[POISON_SEED_VARIABLE] = str(seed)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist: every worker draws its fills from the controller's seed."""
    node.workerinput["conformance_poison_seed"] = poison_seed()


def pytest_configure(config: pytest.Config) -> None:
    _use_poison_seed(config)
    timeout = config.getoption("isolate_timeout")
    # the fix repeats the user's own command (its cases, results, options), less PYTHONPATH
    pytest_words = CORPUS_COMMAND[:CORPUS_COMMAND.index("pytest") + 1]  # python -P -m pytest
    command = shlex.join([*pytest_words, *map(str, config.invocation_params.args)])
    for name in config.getoption("planner"):  # before any of its code runs, in the probe or here
        fault = judge_path_fault(name, (str(REPO_ROOT),), command, whole=True) \
            if ":" in name else None
        if fault:
            raise pytest.UsageError(fault)
    probe_all(config.getoption("planner"), timeout)  # external planners: in children, at once
    SIGNATURE_NOTES.clear()  # this session's planners only
    one_call = subjects.one_call_planner_names(config) - set(builtin_names())
    for name in config.getoption("planner"):
        if name in one_call:  # a one-call subject's own planner (plugin.one_call_items)
            continue
        fault = planner_name_error(name)  # before anything is imported by that name
        if fault:
            raise pytest.UsageError(fault)
        a = availability(name, timeout)
        if not a.available and not a.fails and (":" in name or name not in builtin_names()):
            raise pytest.UsageError(a.reason)
        if a.signature:  # printed in the report header, before any case runs
            SIGNATURE_NOTES.append(f"planner {name}: its signature {', '.join(a.signature)} "
                                   "(spec section 3: the harness passes every argument by keyword "
                                   "and nothing else), so every call will raise TypeError")
    install_interrupt_flag()  # a planner's KeyboardInterrupt fails its case; Ctrl-C stops the run
    config.pluginmanager.register(Summary(), "conformance-summary")
    config.pluginmanager.register(ResultsWriter(config), "conformance-results")


SIGNATURE_NOTES: list[str] = []
"""This run's notes on external planners whose signature makes every call fail."""


def pytest_report_header(config) -> list[str]:
    return list(SIGNATURE_NOTES)


def pytest_pycollect_makemodule(module_path: Path, parent):
    if module_path.name == ANCHOR and module_path.parent == Path(__file__).parent.parent:
        return CorpusFile.from_parent(parent, path=module_path)
    return None


def pytest_deselected(items) -> None:
    """A case file fault that ``-k`` or ``-m`` deselected is warned of, never hidden
    (:func:`conformance.plugin.corpus_items.warn_deselected`)."""
    warn_deselected(items)
