"""The run's case folders as its command line gave them (``--cases DIR``, ``--extra-cases DIR``),
for the commands that load a case file again as the run did: a fault's rerun line, the summary's
``record`` command.

The ``cases`` option holds the folders folded into one list (:mod:`conformance.plugin.extra_cases`,
the corpus folder in place of no ``--cases``); a command rebuilt from it would say ``--cases`` for
a folder the user gave with ``--extra-cases``, and leave the corpus out. Not a plugin itself, so
that the modules pytest imports before it registers :mod:`conformance.plugin.extra_cases` (the
results writer, the summary's tally) can import it without keeping that plugin from assertion
rewriting.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FOLDER_OPTIONS = pytest.StashKey[list]()
"""``config.stash`` entry: ``(option, folder)`` for each ``--cases``, then each ``--extra-cases``,
in the order given (set by :mod:`conformance.plugin.extra_cases` before it folds them)."""


def given(cases: list[Path] | None, extra: list[Path] | None) -> list[tuple[str, Path]]:
    """The ``(option, folder)`` pairs of a command line's ``--cases`` and ``--extra-cases``."""
    return [*(("--cases", d) for d in cases or []), *(("--extra-cases", d) for d in extra or [])]


def rerun_folders(config: pytest.Config, path: Path | None = None) -> tuple[list[Path], list[Path]]:
    """The ``--cases`` and ``--extra-cases`` folders of a command that loads the case file at
    ``path`` as this run did (every folder of the run when ``path`` is None): the run's own
    options, as given, up to the first folder that holds ``path``, since a duplicate id is a fault
    of the later file only while the earlier one loads too. A file of an ``--extra-cases`` folder
    is loaded with ``--extra-cases`` again, beside the corpus; a file of the corpus, in a run
    without ``--cases``, with no folder option at all."""
    options = config.stash.get(FOLDER_OPTIONS, None)
    if options is None:  # configured without the extra_cases plugin: the folded list, as --cases
        options = given(config.getoption("cases", None), [])
    if path is not None:
        holds = [k for k, (_, d) in enumerate(options) if _holds(d, path)]
        options = options[:holds[0] + 1] if holds else []  # none: the corpus, no --cases given
    return ([d for option, d in options if option == "--cases"],
            [d for option, d in options if option == "--extra-cases"])


def _holds(folder: Path, path: Path) -> bool:
    """Whether the loader found ``path`` in ``folder``: by the path it walked (a symlink in the
    folder to a file elsewhere, to ``/dev/zero`` or to nothing is the folder's), or by the file's
    real path."""
    walked = Path(os.path.abspath(path)).is_relative_to(os.path.abspath(folder))
    return walked or path.resolve().is_relative_to(folder.resolve())
