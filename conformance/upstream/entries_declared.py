"""Declared divergences of an upstream launcher: what ``python -m conformance upstream-entries``
(or ``upstream-launchers``) judged differently from a subject's contract and rules, each with the
reason it is upstream's documented behaviour (the subject's spec, its ``SPEC``).

A manifest is ``cases/SUBJECT/divergences/sglang-RELEASE.json`` (``SUBJECT`` the subject's case
folder; ``sglang-RELEASE-LAUNCHER.json`` for one of several launchers judged on one subject)::

    {"release": "0.5.23",
     "kernel": "sglang.kernels.ops.kv_canary.plan.entries_kernel:launch_plan_entries_kernel",
     "divergences": [{"case": "entries-empty-lut", "status": "differs (lut-empty)",
                      "what": ["raised"], "got": "illegal memory access",
                      "why": "spec §6: reads the LUT out of bounds (its clamp needs lut_len > 0)"}]}

Only ``error-divergence`` (with the project rules deciding what it wrote, if any), ``unchecked`` (an error case on which upstream raised nothing: it lacks
the check) and ``differs (RULES)`` can be declared (any other contract failure, an access outside a
tensor or a crash never can). ``what`` (the kinds of difference the verdict holds,
exactly) and ``got`` (a regular expression every raised or other error's text must match) pin the
divergence, so that another failure with the same status is not declared by it.

:func:`apply` first recomputes each row's status from its verdict (a row without one is ``fail``,
or ``crashed`` for a child that died), then marks it: ``declared`` (the reason) when status,
``what`` and ``got`` agree; ``undeclared`` (what differs) otherwise for a case that did not pass;
``stale`` when a declared case passed (the declaration must go). :func:`good` is the command's
verdict: every build and the judge ran, every case of the subject's folder has a row,
every row passed or is declared and none is stale, at least one random batch ran and all were
equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conformance.corpus.subjects import case_folder
from conformance.engine.verdict import VerdictData
from conformance.paths import CASES_ROOT, DIVERGENCES_DIRNAME
from conformance.upstream.entry_subject import entry_facts, entry_subject

DECLARABLE = re.compile(r"error-divergence( \(.+\))?|unchecked|differs \(.+\)")
"""The statuses a manifest may declare."""


class DeclarationError(ValueError):
    """A manifest that cannot be read (its path and what is wrong in the message)."""


def folder_of(subject=None) -> Path:
    """The manifests' folder of ``subject`` (a module or a name; default the one subject with
    ``UPSTREAM_ENTRY``): ``cases/NAME/divergences``."""
    return case_folder(entry_subject(subject), CASES_ROOT) / DIVERGENCES_DIRNAME


def manifest_path(release: str, folder: Path | None = None, launcher: str = "") -> Path:
    """``folder/sglang-RELEASE.json``, or ``folder/sglang-RELEASE-LAUNCHER.json`` for one of
    several launchers judged on one subject; ``folder`` defaults to :func:`folder_of`'s."""
    folder = folder_of() if folder is None else folder
    return folder / f"sglang-{release}{'-' + launcher if launcher else ''}.json"


def load(release: str, path: Path | None = None, subject=None) -> dict[str, dict]:
    """{case id: {"status", "why"}} of ``release``'s manifest (``path``, default ``subject``'s
    :func:`manifest_path`); {} when it has none.

    Raises:
        DeclarationError: not JSON, another release, or an entry without case / status / why.
    """
    path = path or manifest_path(release, folder_of(subject))
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DeclarationError(f"{path}: not JSON: {exc}") from None
    if doc.get("release") != release:
        raise DeclarationError(f"{path}: declares release {doc.get('release')!r}, not {release!r}")
    out = {}
    for i, d in enumerate(doc.get("divergences", [])):
        if not all(isinstance(d.get(k), str) and d[k] for k in ("case", "status", "why")):
            raise DeclarationError(f"{path}: divergences[{i}] needs case, status and why")
        if d["case"] in out:
            raise DeclarationError(f"{path}: divergences[{i}]: {d['case']} declared twice")
        if not DECLARABLE.fullmatch(d["status"]):
            raise DeclarationError(f"{path}: divergences[{i}]: status {d['status']!r} cannot be "
                                   "declared (only error-divergence, unchecked and differs (RULES))")
        if d["status"] == "unchecked" or d["status"].startswith("error-divergence"):
            if not isinstance(d.get("what"), list) or not d["what"]:
                raise DeclarationError(f"{path}: divergences[{i}]: {d['status']} needs what (the "
                                       "kinds of difference the verdict holds, exactly)")
        if "got" in d:
            try:
                re.compile(d["got"])
            except re.error as exc:
                raise DeclarationError(f"{path}: divergences[{i}].got: {exc}") from None
        out[d["case"]] = {k: d[k] for k in ("status", "why", "what", "got") if k in d}
    return out


def judged_status(row: dict) -> str:
    """A row's status from its verdict (``entries_judge.case_status``): ``fail`` without one,
    ``crashed`` for a hazard child that died before judging."""
    from conformance.upstream.entries_judge import case_status

    if row.get("status") == "crashed" and not row.get("verdict"):
        return "crashed"
    if not isinstance(row.get("verdict"), dict):
        return "fail"
    verdict = VerdictData.from_json(row["verdict"])
    case = {"expect": {"error": "?"} if verdict.error_steps else {}}
    return case_status(case, verdict)[0]


def _mismatch(row: dict, d: dict) -> str | None:
    """Why ``row``'s verdict is not the one declaration ``d`` pins, or None."""
    diffs = (row.get("verdict") or {}).get("differences", [])
    kinds = VerdictData.from_json(row["verdict"]).kinds() if row.get("verdict") else set()
    if "what" in d and sorted(kinds) != sorted(set(d["what"])):
        return f"declared what {sorted(set(d['what']))}, got {sorted(kinds)}"
    if "got" in d:
        for x in diffs:
            if x["what"] in ("error", "raised") and not re.search(d["got"], str(x["got"])):
                return f"declared got /{d['got']}/, got {str(x['got'])[:200]!r}"
    return None


def apply(doc: dict, declared: dict[str, dict]) -> None:
    """Mark every case and hazard row of ``doc`` (module docstring), in place."""
    for row in doc.get("cases", []) + doc.get("hazards", []):
        d = declared.get(row["id"])
        for key in ("declared", "undeclared", "stale"):
            row.pop(key, None)
        row["status"] = judged_status(row)
        if row["status"] == "pass":
            if d is not None:
                row["stale"] = f"declared {d['status']}, but it passed: remove the declaration"
        elif d is not None and d["status"] == row["status"] and _mismatch(row, d):
            row["undeclared"] = _mismatch(row, d)
        elif d is not None and d["status"] == row["status"]:
            row["declared"] = d["why"]
        elif d is not None:
            row["undeclared"] = f"declared {d['status']}, got {row['status']}"
        else:
            row["undeclared"] = f"{row['status']}, not declared"


def good(doc: dict, subject=None) -> bool:
    """The command's verdict (module docstring) on a document of ``subject`` (a module or a name;
    default the one subject with ``UPSTREAM_ENTRY``): one build step per ``BUILD_VARIANTS``."""
    from conformance.upstream.entries_judge import load_cases

    subject = entry_subject(subject)
    steps = doc.get("steps", [])
    builds = [s for s in steps if s["step"].startswith("build ")]
    if len(builds) != len(entry_facts(subject).BUILD_VARIANTS) or any(s["status"] != "ok" for s in builds) or not any(
            s["step"] == "judge" and s["status"] == "ok" for s in steps):
        return False
    rows = doc.get("cases", []) + doc.get("hazards", [])
    if {c["id"] for c in load_cases(subject)} - {r["id"] for r in rows}:
        return False  # a case not judged is not a pass
    rnd = doc.get("random") or {}
    return rnd.get("batches", 0) >= 1 and rnd.get("failed", 1) == 0 and all(
        (r["status"] == "pass" and "stale" not in r) or r.get("declared") for r in rows)
