"""The command that reruns one case on one planner, and the ``--cases`` directory it needs."""

from __future__ import annotations

import shlex
from pathlib import Path

from conformance.corpus.entries import SHARED_PLANNERS
from conformance.corpus.loader import Case, display_path
from conformance.paths import DEFAULT_CASES_DIR


def rerun_command(case_id: str, planner: str, cases_dir: Path | None = None) -> str:
    """The one command that reruns just ``case_id`` on ``planner``.

    ``cases_dir`` is the directory to load the case from when it is not in the default corpus.
    """
    parts = ["pytest", "conformance/"]
    if planner not in SHARED_PLANNERS.values():
        parts += ["--planner", shlex.quote(planner)]
    if cases_dir is not None:
        parts += ["--cases", shlex.quote(display_path(cases_dir))]
    parts += ["--case", shlex.quote(case_id)]
    return " ".join(parts)


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
