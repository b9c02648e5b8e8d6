"""Which cases of the harness's own corpus a results run judged a planner on: what
:func:`conformance.reporting.bench_section.withheld` asks before a planner's benchmark figures
stand beside a run's verdicts (a run narrowed to one case, ``--case``, or to a folder of the
entrant's own, ``--cases DIR``, judges too little of the planner to vouch for a figure).

The corpus is the corpus subject's folder (``cases/<subject>/``,
:data:`conformance.corpus.corpus_subject.CASES_DIR`) as
:func:`conformance.corpus.loader.load_corpus` loads it in this process. The cases that apply to a
planner are its ``launcher`` cases: every planner under test runs each one, while ``validator`` and
``allocate`` cases run once, in a column of their own (:mod:`conformance.corpus.entries`).

A result (a record of the results file, ``reports/results.schema.json``) counts for a corpus case
only when it is that very case, loaded from the run's own default corpus; an id alone never
counts, since a folder of the entrant's may hold a case of any id with any content:

* its ``case``, ``planner``, ``entry`` (``launcher``) and ``json_path`` are the case's, it names
  no one-call ``subject``, and its ``file`` spells the case's file as a run records it
  (:func:`conformance.corpus.case_file.display_path`: relative to the checkout, or absolute);
* its ``rerun`` command names no ``--cases`` folder: the run's own word that the case lay in its
  default corpus (:func:`conformance.engine.rerun.case_dir_arg`; a case of a ``--cases DIR`` or
  ``--extra-cases DIR`` folder is rerun with ``--cases DIR``). It tells apart what the file
  cannot: a run started in a folder laid out like the checkout (its own ``cases/<subject>/...``)
  records its case files relative to that folder, spelled as the corpus's are;
* its status is a verdict: anything but ``skip`` (an unavailable planner, ``--planner-maxfail``).
  Whether that verdict is passing is :func:`~conformance.reporting.bench_section.withheld`'s
  question, asked first.

The results file is the word of whoever ran the harness: a file edited by hand is not detected.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import Case
from conformance.corpus.corpus_subject import CASES_DIR
from conformance.corpus.loader import load_corpus
from conformance.paths import REPO_ROOT

ENTRY = "launcher"
"""The ``entry`` of the cases every planner runs."""
NOT_JUDGED = frozenset({"skip"})
"""Statuses that give no verdict on the case."""
NAMED = 3
"""How many missing case ids a reason names."""


@dataclass(frozen=True)
class Coverage:
    """How much of the corpus a run judged one planner on: ``judged`` of ``total`` launcher cases;
    ``missing`` the ids of the others, in the corpus's order."""

    judged: int
    total: int
    missing: tuple[str, ...]


@cache
def corpus_cases() -> tuple[Case, ...]:
    """The launcher cases of the corpus subject's folder, in load order (cached: the folder is read
    once per process). A case file that fails to load adds none."""
    cases, _ = load_corpus([CASES_DIR])
    return tuple(c for c in cases if c.entry == ENTRY)


def _spellings(path: Path) -> frozenset[str]:
    """The ways a results file may name the case file at ``path``: as this process displays it,
    relative to the checkout, and absolute (links resolved)."""
    resolved = path.resolve()
    names = {display_path(path), str(resolved)}
    if resolved.is_relative_to(REPO_ROOT):
        names.add(str(resolved.relative_to(REPO_ROOT)))
    return frozenset(names)


def _names_a_folder(rerun: object) -> bool:
    """Whether the rerun command ``rerun`` loads its case from a ``--cases`` folder (also when it
    is no command at all: nothing vouches for where the case lay)."""
    try:
        words = shlex.split(rerun) if isinstance(rerun, str) else None
    except ValueError:
        words = None
    return words is None or any(w == "--cases" or w.startswith("--cases=") for w in words)


def is_corpus_result(result: dict, case: Case, planner: str) -> bool:
    """Whether ``result`` is ``planner``'s verdict on the corpus case ``case`` (see the module's
    docstring for each condition)."""
    return (result.get("planner") == planner and result.get("case") == case.id
            and not result.get("subject") and result.get("entry") == ENTRY
            and result.get("json_path") == case.json_path
            and isinstance(result.get("file"), str) and result["file"] in _spellings(case.path)
            and not _names_a_folder(result.get("rerun"))
            and result.get("status") not in NOT_JUDGED)


def coverage(results: list[dict], planner: str,
             cases: tuple[Case, ...] | None = None) -> Coverage:
    """The :class:`Coverage` of ``planner`` by the records ``results`` over ``cases`` (default:
    :func:`corpus_cases`)."""
    cases = corpus_cases() if cases is None else cases
    mine: dict[str, list[dict]] = {}
    for r in results:
        if r.get("planner") == planner and isinstance(r.get("case"), str):
            mine.setdefault(r["case"], []).append(r)
    missing = tuple(c.id for c in cases
                    if not any(is_corpus_result(r, c, planner) for r in mine.get(c.id, ())))
    return Coverage(len(cases) - len(missing), len(cases), missing)


def gap(results: list[dict], planner: str, cases: tuple[Case, ...] | None = None) -> str | None:
    """Why ``results`` judged too little of the corpus to stand beside ``planner``'s figures, or
    None when they judged it on every launcher case of ``cases`` (default: the corpus). A corpus
    that loads no launcher case here vouches for nothing either."""
    seen = coverage(results, planner, cases)
    folder = display_path(CASES_DIR)
    if not seen.total:
        return f"the corpus ({folder}/) loads no launcher case here: nothing vouches for a figure"
    if not seen.missing:
        return None
    named = ", ".join(seen.missing[:NAMED])
    more = len(seen.missing) - NAMED
    return (f"judged on {seen.judged} of {seen.total} corpus cases ({folder}/; not judged: "
            f"{named}{f' and {more} more' if more > 0 else ''}): figures stand only beside a run "
            "of the whole corpus")
