"""``python -m conformance report --compare OLD NEW``: what changed between two runs.

OLD and NEW are each a results file, a pytest-benchmark JSON file, or a folder written by
``report --publish`` (its ``results.json`` and, when present, ``bench.json``). Items are matched
by test id (``case-id[planner]``):

* **newly failing**: not passing now (fail, error, crash, timeout, xpass), passing before;
* **newly passing**: the reverse;
* **other changes**: any other status change (pass -> skip, fail -> crash, ...);
* **appeared** / **disappeared**: in one run only, among the planners both runs ran (runs of
  different planners say so, :func:`planner_sets`, and compare only the common ones: the headline
  first names each planner only one side ran, and never says "no regressions" when no planner,
  the shared validator/allocator/load rows aside, was compared);
* **benchmarks moved**: beyond the noise bound the two sides' repeats or rounds support
  (:mod:`conformance.reporting.bench_noise`); the headline says how many figures could be judged
  and the repeats and rounds each side had; figures refused on a side, or in one file only, are
  named (:mod:`conformance.reporting.compare_bench`).

The headline leads with the regressions: newly failing and disappeared items (a case whose file
became malformed, or that a run never reached), each side whose run is incomplete
(:func:`~conformance.reporting.results_format.incomplete_reason`), and benchmark figures refused
in NEW or missing from NEW. ``--fail-on-regression`` (:func:`gate`) fails on those, and also
when no planner was compared or a planner only NEW ran has items not passing (no baseline).

This module builds the comparison as data (:func:`compare`); its headline and the gate are
:mod:`conformance.reporting.compare_verdict`; it is rendered as HTML (``compare.html.j2``),
Markdown for a pull-request comment, or text by :mod:`conformance.reporting.compare_render`.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.corpus.text import natural_key
from conformance.corpus.entries import PSEUDO_PLANNERS
from conformance.reporting.run_profile import weaker_profile
from conformance.reporting import bench_figures as report_bench
from conformance.reporting import compare_bench
from conformance.reporting.code_changes import changed_code, undigested_code
from conformance.reporting.file_text import read_file_text
from conformance.reporting.report import what_went_wrong
from conformance.reporting.results_format import BAD, incomplete_reason, load_results


def load_side(path: Path) -> tuple[dict | None, list | None, str]:
    """``(results or None, benchmark rows or None, label)`` of one side of a comparison."""
    path = Path(path)
    results = bench = None
    if path.is_dir():
        if (path / "results.json").exists():
            results = load_results(path / "results.json")
        if (path / "bench.json").exists():
            bench = report_bench.load_bench(path / "bench.json")[0]
    else:
        try:
            doc = json.loads(read_file_text(path))
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and "benchmarks" in doc:
            bench = report_bench.load_bench(path)[0]
        else:
            results = load_results(path)  # raises a ResultsError naming the file
    if results is None and bench is None:
        raise FileNotFoundError(f"{path}: neither results.json nor bench.json there")
    return results, bench, str(path)


def _entry(r: dict) -> dict:
    return {"id": r["id"], "status": r["status"], "detail": what_went_wrong(r)
            if r["status"] in BAD else (r["message"] or ""), "rerun": r["rerun"],
            "message": r["message"]}


class KindsError(ValueError):
    """OLD and NEW hold no kind of file in common (a results file and a benchmark file)."""


def _kinds(results, bench) -> str:
    kinds = (("results", results), ("benchmarks", bench))
    return " and ".join(k for k, v in kinds if v is not None)


def compare(old: Path, new: Path) -> dict:
    """The comparison model of two runs (see the module docstring).

    Raises:
        KindsError: the two sides have no kind in common: a results file against a benchmark
            file compares nothing, which is a usage error, never "no regressions".
    """
    old_results, old_bench, old_label = load_side(old)
    new_results, new_bench, new_label = load_side(new)
    if (old_results is None or new_results is None) and (old_bench is None or new_bench is None):
        raise KindsError(f"--compare {old_label} {new_label}: OLD holds "
                         f"{_kinds(old_results, old_bench)}, NEW holds "
                         f"{_kinds(new_results, new_bench)}: nothing of one kind on both sides")
    model = {"old": old_label, "new": new_label, "has_results": False, "bench": None,
             "old_fp": (old_results or {}).get("fingerprint"),
             "new_fp": (new_results or {}).get("fingerprint"),
             "incomplete": {side: incomplete_reason(doc) for side, doc in
                            (("OLD", old_results), ("NEW", new_results))
                            if doc is not None and incomplete_reason(doc)}}
    if old_results is not None and new_results is not None:
        model["planner_sets"] = planner_sets(old_results, new_results)
        apart = set(model["planner_sets"]["only_old"]) | set(model["planner_sets"]["only_new"])
        before = {r["id"]: r for r in old_results["results"] if r.get("planner") not in apart}
        after = {r["id"]: r for r in new_results["results"] if r.get("planner") not in apart}
        sections = {"newly_failing": [], "newly_passing": [], "other_changes": [],
                    "appeared": [], "disappeared": []}
        for key, r in after.items():
            o = before.get(key)
            if o is None:
                sections["appeared"].append(_entry(r))
            elif o["status"] != r["status"]:
                e = {**_entry(r), "old_status": o["status"]}
                if r["status"] in BAD and o["status"] not in BAD:
                    sections["newly_failing"].append(e)
                elif o["status"] in BAD and r["status"] not in BAD:
                    sections["newly_passing"].append(e)
                else:
                    sections["other_changes"].append(e)
        sections["disappeared"] = [_entry(o) for k, o in before.items() if k not in after]
        for entries in sections.values():
            entries.sort(key=lambda e: natural_key(e["id"]))
        model["weaker_profile"] = weaker_profile(old_results, new_results)
        model.update(sections, has_results=True, unchanged=sum(
            1 for k, r in after.items() if k in before and before[k]["status"] == r["status"]))
    if old_bench is not None and new_bench is not None:
        model.update(compare_bench.model(old_bench, new_bench))
    model["changed_code"] = changed_code(model["old_fp"], model["new_fp"])
    model["undigested"] = undigested_code(model["old_fp"], model["new_fp"])
    return model


def planner_sets(old: dict, new: dict) -> dict:
    """The planners each run selected (its fingerprint's ``planners``): ``only_old`` and
    ``only_new`` (their items are left out, ``left_out`` counts them) and ``both``; the shared
    pseudo planners (validator, allocator, load) always count as both. ``compared``: the planners
    of ``both`` other than those pseudo planners (empty: no planner was compared);
    ``new_only_bad``: NEW's items of ``only_new`` planners that do not pass (they have no
    baseline). Runs of different planners are told apart instead of counting every item of a
    planner one run never selected as a regression; a selected planner whose items an incomplete
    run never reached still counts."""
    def selected(doc: dict) -> set[str]:
        return set(((doc.get("fingerprint") or {}).get("planners") or {}))

    old_p, new_p = selected(old), selected(new)
    only = (old_p - new_p) | (new_p - old_p)
    seen = {r.get("planner") for doc in (old, new) for r in doc["results"]}
    both = sorted(p for p in seen - only if p)
    return {"both": both, "compared": [p for p in both if p not in PSEUDO_PLANNERS],
            "only_old": sorted(old_p - new_p), "only_new": sorted(new_p - old_p),
            "new_only_bad": sum(1 for r in new["results"] if r.get("planner") in new_p - old_p
                                and r["status"] in BAD),
            "left_out": sum(1 for doc in (old, new) for r in doc["results"]
                            if r.get("planner") in only)}
