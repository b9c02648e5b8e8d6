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
* its ``case_digest`` is the case's (:func:`conformance.corpus.case_model.case_digest`): the
  run judged this very content. Neither the file nor the rerun line can tell a run started in a
  copy of the checkout whose case files were edited (its files are spelled as the corpus's, and
  it names no ``--cases`` folder), nor a run of an older corpus: the content can;
* its ``rerun`` command names no ``--cases`` folder: the run's own word that the case lay in its
  default corpus (:func:`conformance.engine.rerun.case_dir_arg`; a case of a ``--cases DIR`` or
  ``--extra-cases DIR`` folder is rerun with ``--cases DIR``);
* its status is a verdict: anything but ``skip`` (an unavailable planner, ``--planner-maxfail``).
  Whether that verdict is passing is :func:`~conformance.reporting.bench_section.withheld`'s
  question, asked first.

A verdict that a declaration made passing (``declared``: a known-divergence manifest; ``xfail``:
a case's own ``xfail``) stands only where the corpus itself declares it (:func:`excused`): a
manifest of the corpus's own ``divergences/`` folder that names the planner and the code the run
recorded (its ``sources``), for the outcome the run observed, or the corpus case's own ``xfail``
that applies to the planner as a run applies it
(:func:`conformance.corpus.case_xfail.match_xfail`: a built-in by name, an external planner by
name and the code the run recorded). A manifest the runner adds (``--manifest PATH``) may declare
any failure of any planner: it is the runner's choice, no review's, so a wrong planner's failures
it excuses withhold its figures as failures do.

The results file is the word of whoever ran the harness: a file edited by hand is not detected.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import Case, case_digest
from conformance.corpus.case_xfail import match_xfail
from conformance.corpus.corpus_subject import CASES_DIR
from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.loader import load_corpus
from conformance.corpus.manifest import Manifest, load_manifests
from conformance.paths import REPO_ROOT

ENTRY = "launcher"
"""The ``entry`` of the cases every planner runs."""
NOT_JUDGED = frozenset({"skip"})
"""Statuses that give no verdict on the case."""
DECLARED = frozenset({"declared", "xfail"})
"""Statuses a declaration gives a case the planner did not pass (:func:`excused`)."""
NAMED = 3
"""How many missing case ids a reason names."""


@dataclass(frozen=True)
class Coverage:
    """How much of the corpus a run judged one planner on: ``judged`` of ``total`` launcher cases;
    ``missing`` the ids of the others, in the corpus's order; ``changed`` those of ``missing``
    the run judged on other content under the case's id, file and JSON path."""

    judged: int
    total: int
    missing: tuple[str, ...]
    changed: tuple[str, ...] = ()


@cache
def corpus_cases() -> tuple[Case, ...]:
    """The launcher cases of the corpus subject's folder, in load order (cached: the folder is read
    once per process). A case file that fails to load adds none."""
    cases, _ = load_corpus([CASES_DIR])
    return tuple(c for c in cases if c.entry == ENTRY)


@cache
def corpus_manifests() -> tuple[Manifest, ...]:
    """The manifests of the corpus's own ``divergences/`` folder (cached); one that fails to load
    declares nothing."""
    return tuple(load_manifests([CASES_DIR])[0])


def excused(result: dict, case: Case, planner: str, source: dict | None) -> bool:
    """Whether ``result``, a ``declared`` or ``xfail`` verdict of ``planner`` (whose code the run
    recorded as ``source``) on the corpus case ``case``, is one the corpus itself declares (see
    the module's docstring); True for any other status (not a declaration's)."""
    status = result.get("status")
    if status == "xfail":
        builtin = planner in _registry.builtin_names()
        return match_xfail(case.xfail, planner, builtin, source).applied is not None
    if status != "declared":
        return True
    observed = result.get("observed")
    return any(m.names(planner, source) and m.covers(case.path)
               and (d.case == case.id if d.case is not None else d.tag in case.tags)
               and (observed in d.statuses or (observed == "pass" and d.fault_only))
               for m in corpus_manifests() for d in m.divergences)


@cache
def _spellings(path: Path) -> frozenset[str]:
    """The ways a results file may name the case file at ``path``: as this process displays it,
    relative to the checkout, and absolute (links resolved). Cached: a corpus file is resolved
    once, not once per record compared with each of its cases."""
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
    docstring for each condition; whether a declaration excuses it is :func:`excused`'s)."""
    return (result.get("planner") == planner and result.get("case") == case.id
            and not result.get("subject") and result.get("entry") == ENTRY
            and result.get("json_path") == case.json_path
            and isinstance(result.get("file"), str) and result["file"] in _spellings(case.path)
            and result.get("case_digest") == case_digest(case)
            and not _names_a_folder(result.get("rerun"))
            and result.get("status") not in NOT_JUDGED)


def undeclared(results: list[dict], planner: str, source: dict | None,
               cases: tuple[Case, ...] | None = None) -> tuple[str, ...]:
    """The ids of the corpus cases (default :func:`corpus_cases`) on which ``results`` hold a
    ``declared`` or ``xfail`` verdict of ``planner`` that the corpus does not declare
    (:func:`excused`): failures a runner's own declaration made passing."""
    mine = _by_case(results, planner)
    return tuple(c.id for c in (corpus_cases() if cases is None else cases) if any(
        r.get("status") in DECLARED and is_corpus_result(r, c, planner)
        and not excused(r, c, planner, source) for r in mine.get(c.id, ())))


def _by_case(results: list[dict], planner: str) -> dict[str, list[dict]]:
    """``planner``'s records of ``results`` by case id."""
    mine: dict[str, list[dict]] = {}
    for r in results:
        if r.get("planner") == planner and isinstance(r.get("case"), str):
            mine.setdefault(r["case"], []).append(r)
    return mine


def coverage(results: list[dict], planner: str,
             cases: tuple[Case, ...] | None = None) -> Coverage:
    """The :class:`Coverage` of ``planner`` by the records ``results`` over ``cases`` (default:
    :func:`corpus_cases`)."""
    cases = corpus_cases() if cases is None else cases
    mine = _by_case(results, planner)
    missing = [c for c in cases
               if not any(is_corpus_result(r, c, planner) for r in mine.get(c.id, ()))]
    changed = tuple(c.id for c in missing if any(
        is_corpus_result({**r, "case_digest": case_digest(c)}, c, planner)
        for r in mine.get(c.id, ())))
    return Coverage(len(cases) - len(missing), len(cases), tuple(c.id for c in missing), changed)


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
    changed = ""
    if seen.changed:
        changed = (f"; {len(seen.changed)} of them judged on other content under the case's id "
                   f"and file (an edited copy of the corpus, or another commit's): "
                   f"{', '.join(seen.changed[:NAMED])}"
                   f"{f' and {len(seen.changed) - NAMED} more' if len(seen.changed) > NAMED else ''}")
    return (f"judged on {seen.judged} of {seen.total} corpus cases ({folder}/; not judged: "
            f"{named}{f' and {more} more' if more > 0 else ''}{changed}): figures stand only "
            "beside a run of the whole corpus")
