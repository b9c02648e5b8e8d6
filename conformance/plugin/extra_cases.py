"""``--extra-cases DIR``: a repository's own case files, run with the corpus.

``--cases DIR`` replaces the offsets corpus (default: the packaged or checkout
``cases/<subject>/``); ``--extra-cases DIR`` (repeatable) adds DIR to whatever ``--cases``
chose. Both load the same way: every ``*.json`` below DIR except schemas, and DIR's
``divergences/`` manifests (``cases/<subject>/README.md``), each of which declares only DIR's own
cases (an added folder never excuses the corpus's failures: ``Manifest.scope``). A case id that is already in the
corpus is a load fault of the later file, as between any two folders.

Registered from :mod:`conformance.plugin.hooks` (``pytest_plugins``). The folders are folded into
the ``cases`` option before any other plugin reads it, so collection, the results file and the
known-divergence manifests (:mod:`conformance.plugin.profiles`) all see one list.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.plugin.case_folders import FOLDER_OPTIONS, given


def with_extra_cases(cases: list[Path] | None, extra: list[Path] | None) -> list[Path] | None:
    """The case folders a run loads: ``cases`` (None or empty: the default corpus) followed by
    ``extra``; None when neither is given (the default corpus)."""
    if not extra:
        return cases or None
    return [*(cases or [DEFAULT_CASES_DIR]), *extra]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "conformance")
    group.addoption("--extra-cases", action="append", default=[], metavar="DIR", type=Path,
                    help="directory of case files to run as well as the corpus (repeatable; "
                         "--cases replaces the corpus instead)")


CASES_GIVEN = pytest.StashKey[bool]()
"""Whether the run's own ``--cases`` named folders (which restrict it to the corpus engine's
subjects, :mod:`conformance.plugin.subjects`); ``--extra-cases`` alone restricts nothing."""


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.stash[CASES_GIVEN] = bool(config.option.cases)
    config.stash[FOLDER_OPTIONS] = given(config.option.cases, config.option.extra_cases)  # reruns
    config.option.cases = with_extra_cases(config.option.cases, config.option.extra_cases) or []
