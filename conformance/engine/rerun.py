"""The command that reruns one case on one planner, and the ``--cases`` directory it needs.

Every command here is safe to paste into a POSIX shell: each word goes through :func:`shlex.quote`
(``shlex.join``), and environment assignments are ``NAME=`` followed by the quoted value.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from importlib.machinery import PathFinder
from pathlib import Path

from conformance.corpus.entries import SHARED_PLANNERS
from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import Case
from conformance.paths import FROM_ELSEWHERE, REPO_ROOT, RESULTS_RELPATH
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.corpus.corpus_subject import ENV as CORPUS_SUBJECT_ENV
from impls.source_file import PLANNER_PATH_ENV, planner_folders

IMPORT_FIRST_ENV = "CONFORMANCE_IMPORT_FIRST"
"""Modules (comma-separated) the isolation worker imports before it reads any state, beside the
kernel frameworks (:mod:`conformance.robustness.first_import`): a library of a planner whose
import sets a variable or registers an ``atexit`` handler, vouched for by whoever runs it."""
RERUN_ENVIRONMENT = ("PYTHONPATH", PLANNER_PATH_ENV, "TRITON_INTERPRET", "NUMBA_ENABLE_CUDASIM",
                     CORPUS_SUBJECT_ENV, IMPORT_FIRST_ENV)
"""Variables a rerun carries when the run had them: where an external planner's module is found,
the Triton interpreter / Numba CUDA simulator switches, the corpus subject the run chose
(:data:`conformance.corpus.corpus_subject.ENV`, where a checkout holds several) and the
libraries the worker imports first (:data:`IMPORT_FIRST_ENV`: a report shows what was vouched
for)."""
RUN_ENVIRONMENT = {name: os.environ[name] for name in RERUN_ENVIRONMENT if name in os.environ}
if PLANNER_PATH_ENV in RUN_ENVIRONMENT:  # absolute: a report or rerun elsewhere finds the same
    RUN_ENVIRONMENT[PLANNER_PATH_ENV] = os.pathsep.join(planner_folders())
"""Those of :data:`RERUN_ENVIRONMENT` this process started with (taken when the harness is
imported, before any planner sets its own; the planner folders made absolute)."""
POISON_SEED_VARIABLE = "CONFORMANCE_POISON_SEED"
"""The variable a rerun sets to the run's poison seed (read, then removed from the environment, by
the pytest plugin, so that no child it starts inherits it; ``--poison-seed`` wins over it)."""
RUN_SETTINGS: dict[str, str] = {}
"""Assignments every rerun of this run carries (:data:`POISON_SEED_VARIABLE`: the fills the run
drew), set by the pytest plugin at configure time; added when a command carries the run's
environment."""
RUN_OPTIONS: list[str] = []
"""Options every rerun of this run carries (its isolation options that differ from their
defaults: ``--isolate-timeout``, ``--isolate-linger``, ``--sandbox``, ``--sanitize``, so that a
timeout or an access error is rerun under the same limits), set by the pytest plugin at configure
time; added when a command carries the run's environment."""
RERUN_RESULTS = RESULTS_RELPATH.parent / "rerun-{case}.json"
"""Where a rerun writes its results file, so it never replaces the full run's."""
CORPUS_COMMAND = ["python", "-P", "-m", "pytest", "--pyargs", "conformance"] if FROM_ELSEWHERE \
    else ["pytest", "conformance/"]
"""The pytest command that runs the corpus: from the checkout's root, or (an installed wheel, an
editable install run from another folder) from any folder (``-P``: that folder, which may hold
the planner, stays off pytest's own path; the planner is found through
``$CONFORMANCE_PLANNER_PATH``, which the rerun carries)."""


def package_found_without(entries: list[str]) -> Path | None:
    """The folder ``import conformance`` would find the package in, in this interpreter, with the
    folders ``entries`` (and the checkout root) off ``sys.path``: what a fresh ``pytest`` started
    without them imports through the project's ``pytest11`` entry point before the root
    ``conftest.py`` puts the root on its path; None when no finder has it (a checkout that is not
    installed: that ``conftest.py`` then loads the package from the root). Asks ``sys.meta_path``'s
    finders as an import would (an editable install's finder included), imports nothing."""
    gone = {os.path.realpath(e or ".") for e in [*entries, str(REPO_ROOT)]}
    path = [p for p in sys.path if os.path.realpath(p or ".") not in gone]
    for finder in sys.meta_path:
        try:
            spec = (PathFinder.find_spec("conformance", path) if finder is PathFinder
                    else finder.find_spec("conformance", None))
        except Exception:  # noqa: BLE001 - a finder that cannot answer finds nothing here
            continue
        if spec is not None and spec.submodule_search_locations:
            return Path(list(spec.submodule_search_locations)[0]).parent
    return None


def rerun_pythonpath(pythonpath: str | None, from_elsewhere: bool | None = None,
                     root: Path | None = None,
                     found_without: Callable[[list[str]], Path | None] | None = None
                     ) -> str | None:
    """The ``PYTHONPATH`` a rerun command carries for a run that had ``pythonpath``: without its
    entries that name the checkout root ``root`` (``""`` and ``.`` among them: the process started
    there) when the rerun works without them, that is when it runs from that root (not
    ``from_elsewhere``: ``pytest conformance/`` there loads the package, and the ``tests.`` planners,
    through the root ``conftest.py``) and, without them, the package would be found in that
    checkout or nowhere (:func:`package_found_without`; another checkout's editable install would
    run its code instead); None when no entry is left. Every other entry (an external planner's
    folder) is kept, and so is the whole value otherwise (README "Reports": a rerun needs no
    ``PYTHONPATH`` of its own from a checkout). Defaults: this process's :data:`FROM_ELSEWHERE`,
    :data:`~conformance.paths.REPO_ROOT` and :func:`package_found_without`."""
    from_elsewhere = FROM_ELSEWHERE if from_elsewhere is None else from_elsewhere
    root = REPO_ROOT if root is None else root
    found_without = package_found_without if found_without is None else found_without
    if not pythonpath or from_elsewhere:
        return pythonpath
    entries = pythonpath.split(os.pathsep)
    here = os.path.realpath(root)
    kept = [e for e in entries if os.path.realpath(e or ".") != here]
    if len(kept) == len(entries):
        return pythonpath
    found = found_without(entries)
    if found is not None and os.path.realpath(found) != here:
        return pythonpath
    return os.pathsep.join(kept) or None


def rerun_environment(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` (a run's :data:`RUN_ENVIRONMENT`) as a rerun command of this process carries
    it: ``PYTHONPATH`` through :func:`rerun_pythonpath`, left out when nothing is left of it."""
    out = dict(environment)
    if "PYTHONPATH" in out:
        path = rerun_pythonpath(out["PYTHONPATH"])
        if path is None:
            del out["PYTHONPATH"]
        else:
            out["PYTHONPATH"] = path
    return out


def shell_word(word: str) -> str:
    """``word`` quoted for a shell: :func:`shlex.quote`, or, where it holds a character that is not
    printable (ESC, a newline, a bidi override), bash's ``$'...'`` with each such character as an
    escape (``\\x1b``, ``\\u202e``): the line stays one printable line that a terminal shows as
    it is and bash reads back as the same word."""
    if all(c.isprintable() for c in word):
        return shlex.quote(word)
    body = "".join("\\\\" if c == "\\" else "\\'" if c == "'" else
                   c if c.isprintable() else repr(c)[1:-1] for c in word)
    return f"$'{body}'"


def shell_command(argv: list[str], environment: dict[str, str] | None = None) -> str:
    """``argv`` as one line safe to paste into a POSIX shell: every word through
    :func:`shell_word`, prefixed by ``NAME=value`` assignments of ``environment`` (values
    quoted)."""
    assignments = [f"{name}={shell_word(value)}" for name, value in (environment or {}).items()]
    return " ".join([*assignments, *(shell_word(word) for word in argv)])


def rerun_command(case_id: str, planner: str, cases_dir: Path | None = None,
                  environment: dict[str, str] | None = None, extra: list[str] = ()) -> str:
    """The one command that reruns just ``case_id`` on ``planner``, safe to paste into a shell.

    ``cases_dir`` is the directory to load the case from when it is not in the default corpus.
    The command writes its own results file (:data:`RERUN_RESULTS`), never the full run's, and
    carries ``environment`` (default :data:`RUN_ENVIRONMENT` and :data:`RUN_SETTINGS`, its
    ``PYTHONPATH`` as :func:`rerun_environment` keeps it, and then :data:`RUN_OPTIONS` too);
    ``extra``:
    options that pick the case's subject (``--subject NAME``, ``--subject-module MODULE``).
    """
    argv = list(CORPUS_COMMAND) + list(extra) + (list(RUN_OPTIONS) if environment is None
                                                  else [])
    if planner not in SHARED_PLANNERS.values():
        argv += ["--planner", planner]
    if cases_dir is not None:
        argv += ["--cases", display_path(cases_dir)]
    argv += ["--case", case_id, "--results", str(RERUN_RESULTS).format(case=case_id)]
    if environment is None:  # this run's own command: its fills too
        environment = rerun_environment({**RUN_ENVIRONMENT, **RUN_SETTINGS})
    return shell_command(argv, environment)


def list_cases_command(folders: list[Path], environment: dict[str, str] | None = None,
                       extra: list[Path] = ()) -> str:
    """The command that lists the cases (and load faults) of the case files in ``folders`` (the
    default corpus when empty) and ``extra`` (beside them: ``--extra-cases``): what a ``--case``
    id that names no case, or a case file that does not load, is rerun with (see
    :func:`rerun_command` for ``environment``), safe to paste into a shell."""
    argv = ["python", "-m", "conformance",
            *(word for folder in folders for word in ("--cases", display_path(folder))),
            *(word for folder in extra for word in ("--extra-cases", display_path(folder))),
            "cases"]
    return shell_command(argv, rerun_environment(RUN_ENVIRONMENT) if environment is None
                         else environment)


def cases_dir_arg(directory: Path) -> Path | None:
    """The ``--cases`` directory a rerun needs for cases in ``directory``: None inside the default
    corpus, else ``directory`` itself."""
    try:
        directory.resolve().relative_to(DEFAULT_CASES_DIR)
    except ValueError:
        return directory
    return None


def case_dir_arg(case: Case) -> Path | None:
    """The ``--cases`` directory a rerun of ``case`` needs: None inside the default corpus."""
    return cases_dir_arg(case.path.parent)
