"""Subjects in the pytest front end: ``--subject`` / ``--subject-module``; the items of every
one-call subject (:mod:`conformance.engine.one_call`) come from :mod:`.one_call_items`, named
``case-id[planner]`` as the corpus engine's items are.

* ``--subject NAME`` (repeatable): run only these subjects' cases (default: every subject; with
  ``--cases DIR``, which names folders of the corpus engine's case files, only its subjects).
* ``--subject-module MODULE`` (repeatable): a subject module outside ``impls/`` (a kernel family
  of your own: ``conformance/corpus/subjects.py`` says what it defines; its ``CASES_DIR`` says where
  its cases are).

A one-call subject's items run its built-in planners named by ``--planner`` (default all of them)
in pytest's process. An external planner (``module:attr``) is refused for a one-call subject: its
items would run in this process, where a planner can reach the judge (the corpus engine's isolated
worker does not serve them yet).
"""

from __future__ import annotations

import pytest

from conformance.corpus.subjects import SubjectError, discover
from conformance.plugin.extra_cases import CASES_GIVEN
from conformance.plugin.one_call_items import SUBJECTS


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance")
    group.addoption("--subject", action="append", default=[], metavar="NAME",
                    help="judge only this subject's cases (repeatable; default: every subject)")
    group.addoption("--subject-module", action="append", default=[], metavar="MODULE",
                    help="a subject module outside impls/ (repeatable; "
                         "conformance/corpus/subjects.py says what it defines)")


def pytest_configure(config: pytest.Config) -> None:
    try:
        found = discover(extra=config.getoption("subject_module"))
    except SubjectError as exc:
        raise pytest.UsageError(str(exc)) from None
    wanted = config.getoption("subject")
    unknown = [n for n in wanted if n not in found]
    if unknown:
        raise pytest.UsageError(f"--subject {unknown[0]}: no such subject; known: "
                                f"{', '.join(found)}")
    if not wanted and config.stash.get(CASES_GIVEN, bool(config.getoption("cases"))):
        wanted = [n for n, m in found.items() if m.ENGINE == "corpus"]  # --cases: its subjects
    chosen = {n: m for n, m in found.items() if not wanted or n in wanted}
    from conformance.corpus.corpus_subject import ENV, NAME as CORPUS_NAME

    other = [n for n, m in chosen.items() if m.ENGINE == "corpus" and n != CORPUS_NAME]
    if other:  # the corpus engine would judge its own subject's cases in that one's name
        raise pytest.UsageError(
            f"subject {other[0]} ({chosen[other[0]].__name__}) is a corpus subject, and the corpus "
            f"engine runs one corpus subject per process: this one runs {CORPUS_NAME} (from impls/, "
            f"${ENV} chooses among those there); judge {other[0]} in a checkout whose impls/ holds "
            f"it, with ${ENV}={other[0]}")
    external = [p for p in config.getoption("planner") if ":" in p]
    one_call = [n for n, m in chosen.items() if m.ENGINE == "one-call"]
    if external and wanted and one_call:
        raise pytest.UsageError(
            f"--planner {external[0]}: an external planner is not judged on {one_call[0]} (its "
            "cases run in pytest's process, where a planner can reach the judge); run its "
            "built-in planners, or judge upstream's kernel with `python -m conformance "
            "upstream-entries`")
    config.stash[SUBJECTS] = chosen
