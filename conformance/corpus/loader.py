"""Load case files, check them against ``cases/schema.json`` (jsonschema) and the catalog.

A file holds one case or a group (``{"group": ..., "defaults": {...}, "cases": [...]}``); see
``cases/README.md``. Faults never stop the load: each becomes a :class:`CaseFileError` that names
the file and the JSON path, and every other case still loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema

from conformance.paths import CASE_SCHEMA_PATH, DEFAULT_CASES_DIR, DIVERGENCES_DIRNAME, REPO_ROOT

from conformance.corpus.arrays import spec_len
from conformance.corpus.checks import semantic_error

PINS = ("contract", "project", "wrapper")
"""What a case may pin (spec section 8): the launcher contract (sections 3-5, the documented errors,
nothing read or written outside a tensor), a project rule (section 6's "this project" column, the 0-d
rule) or the wrapper's check (section 4 item 0)."""
DEFAULT_PINS = "contract"
"""A case file that says nothing pins the contract (``cases/schema.json``)."""

STEP_KEYS = ("req_pool_indices", "prefix_lens", "extend_seq_lens", "swa_window_size",
             "verify_capacity")
"""Inputs a step of a multi-step case may change; the table, LUT and buffers stay."""


@dataclass(frozen=True)
class Step:
    """One launch of a case: its inputs (case inputs merged with the step's), overrides, expectation."""

    inputs: dict
    overrides: list
    expect: dict

    @property
    def bs(self) -> int:
        return spec_len(self.inputs.get("req_pool_indices", []))

    @property
    def error(self) -> dict | None:
        return self.expect.get("error")


@dataclass(frozen=True)
class Case:
    """A loaded, checked case. ``path`` and ``json_path`` locate it for error messages."""

    id: str
    description: str
    tags: tuple[str, ...]
    source: dict
    golden_check: str
    entry: str
    inputs: dict
    steps: tuple[Step, ...]
    derived: dict
    allocate: dict
    xfail: tuple[dict, ...]
    needs_review: bool
    path: Path
    json_path: str
    raw: dict = field(repr=False, compare=False)
    pins: str = DEFAULT_PINS
    """What the case pins (spec section 8): one of :data:`PINS`."""

    @property
    def location(self) -> str:
        return f"{display_path(self.path)}{'' if self.json_path == '$' else ' ' + self.json_path}"

    @property
    def write_req_capacity(self) -> int:
        """Seed-buffer length: the case's, or the largest bs of its steps."""
        given = self.inputs.get("write_req_capacity")
        return given if given is not None else max(step.bs for step in self.steps)


@dataclass(frozen=True)
class CaseFileError:
    """A fault in a case file: where (file, JSON path) and what."""

    path: Path
    json_path: str
    message: str
    case_id: str | None = None

    def __str__(self) -> str:
        return f"{display_path(self.path)}: at {self.json_path}: {self.message}"


def display_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(CASE_SCHEMA_PATH.read_text())
    return jsonschema.Draft202012Validator(schema)


def _schema_error(doc: object, ref: str) -> tuple[str, str] | None:
    validator = _validator()
    sub = validator.evolve(schema={"$ref": ref, "$defs": validator.schema["$defs"]})
    error = jsonschema.exceptions.best_match(sub.iter_errors(doc))
    if error is None:
        return None
    # Descend into oneOf branches to the most specific message.
    while error.context:
        error = jsonschema.exceptions.best_match(error.context)
    return error.json_path, error.message


def _merge_defaults(case: dict, defaults: dict) -> dict:
    merged = dict(case)
    if "inputs" in defaults:
        merged["inputs"] = {**defaults["inputs"], **case.get("inputs", {})}
    if "tags" in defaults:
        merged["tags"] = list(dict.fromkeys([*defaults["tags"], *case.get("tags", [])]))
    for key in ("source", "golden_check", "entry", "pins"):
        if key in defaults and key not in case:
            merged[key] = defaults[key]
    return merged


def _load_file(path: Path) -> tuple[list[Case], list[CaseFileError]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [], [CaseFileError(path, f"line {exc.lineno} column {exc.colno}",
                                  f"malformed JSON: {exc.msg}")]
    except UnicodeDecodeError as exc:
        return [], [CaseFileError(path, f"byte {exc.start}", f"not UTF-8: {exc.reason}")]
    except RecursionError:
        return [], [CaseFileError(path, "$", "JSON nested too deeply to read")]
    except OSError as exc:
        return [], [CaseFileError(path, "$", f"cannot read: {exc.strerror}")]
    if isinstance(doc, dict) and "cases" in doc:
        fault = _schema_error(doc, "#/$defs/group")
        if fault:
            return [], [CaseFileError(path, *fault)]
        items = [(f"$.cases[{i}]", _merge_defaults(c, doc.get("defaults", {})))
                 for i, c in enumerate(doc["cases"])]
    else:
        items = [("$", doc)]
    cases, errors = [], []
    for prefix, raw in items:
        fault = _schema_error(raw, "#/$defs/case") or semantic_error(raw)
        if fault:
            json_path = prefix + fault[0][1:]
            case_id = raw.get("id") if isinstance(raw, dict) else None
            errors.append(CaseFileError(path, json_path, fault[1], case_id))
            continue
        cases.append(_make_case(raw, path, prefix))
    return cases, errors


def _make_case(raw: dict, path: Path, json_path: str) -> Case:
    inputs = raw.get("inputs", {})
    if "steps" in raw:
        steps = tuple(Step({**inputs, **s.get("inputs", {})}, s.get("overrides", []), s["expect"])
                      for s in raw["steps"])
    else:
        steps = (Step(inputs, raw.get("overrides", []), raw["expect"]),)
    return Case(
        id=raw["id"], description=raw["description"], tags=tuple(raw["tags"]),
        source=raw["source"], golden_check=raw["golden_check"],
        entry=raw.get("entry", "launcher"), inputs=inputs, steps=steps,
        derived=raw.get("derived", {}), allocate=raw.get("allocate", {}),
        xfail=tuple(raw.get("xfail", ())), needs_review=raw.get("needs_review", False),
        path=path, json_path=json_path, raw=raw, pins=raw.get("pins", DEFAULT_PINS),
    )


def case_files(directory: Path) -> list[Path]:
    """Every ``*.json`` below ``directory`` except schemas and the known-divergence manifests in
    its ``divergences/`` folder, sorted for stable collection order."""
    return sorted(p for p in directory.rglob("*.json") if p.name != "schema.json"
                  and DIVERGENCES_DIRNAME not in p.relative_to(directory).parts[:-1])


def load_corpus(directories: list[Path] | None = None) -> tuple[list[Case], list[CaseFileError]]:
    """Load every case below ``directories`` (default: the repository's ``cases/``).

    Returns:
        (cases in file order, faults). A duplicate id is a fault of the second file; its case is
        dropped so the first one still runs.
    """
    cases, errors, seen = [], [], {}
    for directory in directories or [DEFAULT_CASES_DIR]:
        if not directory.is_dir():
            errors.append(CaseFileError(directory, "$", "no such cases directory"))
            continue
        for path in case_files(directory):
            loaded, faults = _load_file(path)
            errors.extend(faults)
            for case in loaded:
                if case.id in seen:
                    errors.append(CaseFileError(case.path, case.json_path + ".id",
                                                f"duplicate case id {case.id!r} "
                                                f"(first in {seen[case.id].location})", case.id))
                    continue
                seen[case.id] = case
                cases.append(case)
    return cases, errors
