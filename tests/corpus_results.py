"""Results records of a planner judged on the whole corpus, for the tests of ``report --bench``:
a planner's figures stand only beside a run that judged it on every launcher case of the
harness's own corpus (conformance/reporting/corpus_coverage.py), which no test runs for real (a
few hundred cases). Each record is the one the results writer keeps for that case
(:func:`conformance.plugin.results_writer.case_meta`), with the status given.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from conformance.plugin.results_writer import case_meta
from conformance.reporting.corpus_coverage import corpus_cases


def corpus_results(planner: str, status: str = "pass") -> list[dict]:
    """One record per launcher case of the corpus, on ``planner``, each with ``status``."""
    out = []
    for case in corpus_cases():
        meta = case_meta(SimpleNamespace(case=case, planner=planner))
        out.append({"id": f"{case.id}[{planner}]", "planner": planner, "status": status,
                    "duration": 0.01, "message": None, "observed": status, "divergence": None,
                    "worker": None, "verdict": None, "subject": None, "after_last_call": None,
                    **meta})
    return out


def covering(doc: dict, planner: str, status: str = "pass") -> dict:
    """``doc`` (a results file's contents) with ``planner``'s own records replaced by
    :func:`corpus_results`: the run judged it on the whole corpus, every case ``status``."""
    kept = [r for r in doc["results"] if r["planner"] != planner]
    return {**doc, "results": [*kept, *corpus_results(planner, status)]}


def write_covering(results: Path, planner: str, out: Path) -> Path:
    """Write :func:`covering` of the results file ``results`` for ``planner`` to ``out``."""
    out.write_text(json.dumps(covering(json.loads(results.read_text()), planner)))
    return out
