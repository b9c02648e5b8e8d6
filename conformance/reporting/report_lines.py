"""The lines every rendering of the report shares (:mod:`conformance.reporting.report_render`):
the warning that leads the page when the results are not a whole run of this checkout
(:func:`warning`), the command that made the results (:func:`run_command`, safe to paste into a
shell), the line standing for the documented-errors table when no case expected an error
(:func:`no_error_case_line`) and the subjects a results document holds (:func:`run_subjects`).
A results file is untrusted: what is read from it is quoted by the caller's ``quote`` or kept out.
"""

from __future__ import annotations

from conformance.corpus.corpus_subject import NAME as CORPUS_NAME
from conformance.corpus.corpus_subject import errors as _catalog
from conformance.engine.rerun import POISON_SEED_VARIABLE, RERUN_ENVIRONMENT, shell_command

CATALOG_FILE = _catalog.__name__.replace(".", "/") + ".py"
"""The corpus subject's error catalog, as the page names it (``impls/<subject>/errors.py``)."""


def warning(model: dict, quote=str) -> str | None:
    """The report's first line when the results are not a whole run of this checkout's code;
    ``quote`` renders each stale reason (it names commits and planners read from the file: a code
    span each in Markdown). The incomplete reason holds only counts and an exit code."""
    parts = []
    if model["incomplete"]:
        parts.append(f"INCOMPLETE RUN: {model['incomplete']}; only what finished is shown")
    if model.get("profile_fault"):
        parts.append(f"PROFILE NOT AS RECORDED: {quote(model['profile_fault'])}; read as "
                     f"--profile {model['profile']}")
    if model["stale"]:
        parts.append(f"STALE RESULTS: {'; '.join(map(quote, model['stale']))}")
    if model.get("undigested"):
        parts.append(f"NO SOURCE DIGEST of {', '.join(map(quote, model['undigested']))}: a change "
                     "to its code since the run cannot be seen")
    held = (model.get("bench") or {}).get("withheld")
    if held:
        parts.append("BENCHMARK FIGURES WITHHELD: " + "; ".join(
            f"{quote(name)}: {quote(why)}" for name, why in held.items()))
    return " | ".join(parts) or None


def run_command(doc: dict) -> str:
    """The command that made the results document ``doc``, safe to paste into a shell: pytest with
    its arguments, after the run's assignments of the variables a rerun needs (only those names:
    the document is untrusted, so any other key is dropped, and values are quoted)."""
    names = (*RERUN_ENVIRONMENT, POISON_SEED_VARIABLE)
    env = doc.get("environment")
    kept_env = {k: v for k, v in env.items() if k in names and isinstance(v, str)} \
        if isinstance(env, dict) else {}
    return shell_command(["pytest", *doc["args"]], kept_env)


def no_error_case_line(catalog: list[dict], quote=str) -> str | None:
    """The line that stands for the documented errors x planners table when no case of the run
    expects an error of the corpus subject's catalog (:data:`CATALOG_FILE`, spec section 4): no
    row of ``catalog`` (:func:`error_table.catalog`) has a case, as in a run of one valid case or
    of another subject; None when one does. ``quote`` renders the catalog's path (a code span in
    Markdown)."""
    if any(row["cases"] for row in catalog):
        return None
    judged = f", so none of its {len(catalog)} ids was judged" if catalog else ""
    return f"No case of this run expected a documented error of {quote(CATALOG_FILE)}{judged}."


def run_subjects(doc: dict) -> list[str]:
    """The subjects a results document holds results of, in name order (a result without a
    ``subject`` is the corpus subject's; a non-string one, from an untrusted file, is left out)."""
    found = [r.get("subject") or CORPUS_NAME for r in doc.get("results") or ()
             if isinstance(r, dict)]
    return sorted({s for s in found if isinstance(s, str)})
