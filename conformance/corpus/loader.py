"""Load the corpus subject's case files, check them against ``cases/<subject>/schema.json``
(jsonschema) and the catalog.

A file holds one case or a group (``{"group": ..., "defaults": {...}, "cases": [...]}``); see
``cases/<subject>/README.md``. Faults never stop the load: each becomes a
:class:`~conformance.corpus.case_file.CaseFileError` that names the file and the JSON path, and
every other case still loads; reading a file's JSON safely is
:mod:`conformance.corpus.case_file`'s, the schema check :mod:`conformance.corpus.case_schema`'s,
and a loaded case (:class:`~conformance.corpus.case_model.Case`)
:mod:`conformance.corpus.case_model`'s.
"""

from __future__ import annotations

from pathlib import Path

from conformance.corpus.case_file import CaseFileError, read_case_file
from conformance.corpus.case_model import DEFAULT_PINS, Case, make_case
from conformance.corpus.case_schema import id_error, schema_error
from conformance.corpus.checks import semantic_error
from conformance.corpus.corpus_subject import CASES_DIR as DEFAULT_CASES_DIR
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import element_rules as _element_rules
from conformance.corpus.corpus_subject import hazards as _hazards
from conformance.corpus.limits import MAX_FILE_PERMUTED_ELEMENTS, MAX_PERMUTED_ELEMENTS
from conformance.corpus.rule_kinds import kind_of
from conformance.paths import DIVERGENCES_DIRNAME

OWN_FOLDER_HINT = ("a case in a folder of your own needs that folder: --extra-cases DIR (with the "
                   "corpus) or --cases DIR (instead of it)")
"""What an unknown case id's message adds (pytest's ``--case``, ``python -m conformance record``)."""
TABLE_NAME = _contract.TABLE_NAME
case_rules = _element_rules.case_rules
reached_rules = _element_rules.reached_rules
findings = _hazards.findings
hazard_tag_fault = _hazards.hazard_tag_fault
tag_fault = _hazards.tag_fault

HARNESS_BUG = "harness bug"
"""Starts the fault of a case on which the loader itself raised: the file may be fine."""


def _merge_defaults(case: object, defaults: dict) -> object:
    """``case`` with the group's (schema-checked) ``defaults`` merged in: inputs key by key, tags
    added, the rest where the case has none. Total: a case of the wrong shape is returned as it is,
    and its own schema check names the fault."""
    if not isinstance(case, dict):
        return case
    merged = dict(case)
    own_inputs, own_tags = case.get("inputs", {}), case.get("tags", [])
    if "inputs" in defaults and isinstance(own_inputs, dict):
        merged["inputs"] = {**defaults["inputs"], **own_inputs}
    if "tags" in defaults and isinstance(own_tags, list):
        merged["tags"] = [*defaults["tags"], *(t for t in own_tags if t not in defaults["tags"])]
    for key in ("source", "golden_check", "entry", "subject", "pins"):
        if key in defaults and key not in case:
            merged[key] = defaults[key]
    return merged


def _check_case(raw: object, path: Path, prefix: str) -> Case | CaseFileError:
    fault = schema_error(raw, "#/$defs/case") or id_error(raw) or semantic_error(raw)
    if not fault:
        case = make_case(raw, path, prefix)
        found = findings(case)
        fault = hazard_tag_fault(case, found) or tag_fault(case) or pins_fault(case)
        if not fault:
            return case
    case_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), str) else None
    return CaseFileError(path, prefix + fault[0][1:], fault[1], case_id)


def load_file(path: Path) -> tuple[list[Case], list[CaseFileError]]:
    """Load one case file: (its cases, its faults). Never raises for a faulty file: each fault is a
    :class:`CaseFileError` naming the file and the JSON path, and every good case still loads."""
    doc, fault = read_case_file(path)
    if fault:
        return [], [fault]
    if isinstance(doc, dict) and "cases" in doc:
        fault = schema_error(doc, "#/$defs/group")
        if fault:
            return [], [CaseFileError(path, *fault)]
        defaults = {**doc.get("defaults", {}), **({"subject": doc["subject"]}
                                                  if "subject" in doc else {})}
        items = [(f"$.cases[{i}]", _merge_defaults(c, defaults))
                 for i, c in enumerate(doc["cases"])]
    else:
        items = [("$", doc)]
    cases, errors = [], []
    sorted_elements = 0  # permuted-table elements the load-time checks sort, over the file
    for prefix, raw in items:
        sorted_elements += _permuted_elements(raw)
        if sorted_elements > MAX_FILE_PERMUTED_ELEMENTS:
            case_id = raw.get("id") if isinstance(raw, dict) else None
            errors.append(CaseFileError(path, prefix + ".inputs.req_to_token", (
                f"the file's permuted tables reach {sorted_elements} elements with this case, over "
                f"the limit of {MAX_FILE_PERMUTED_ELEMENTS} one file may sort at load time: split "
                "the file"), case_id if isinstance(case_id, str) else None))
            continue
        try:
            result = _check_case(raw, path, prefix)
        except Warning as exc:  # a case-file warning that ``-W error`` raised: the file's fault
            result = CaseFileError(path, prefix, f"{exc} ({type(exc).__name__}, raised as an "
                                                 "error by the warnings filter)")
        except Exception as exc:  # noqa: BLE001 - a loader bug must not stop the corpus
            result = CaseFileError(path, prefix, f"{HARNESS_BUG}: the loader raised "
                                                 f"{type(exc).__name__}: {exc}")
        (errors if isinstance(result, CaseFileError) else cases).append(result)
    return cases, errors


def _permuted_elements(raw: object) -> int:
    """Elements of the permuted table ``raw`` (a case dict, maybe malformed) names, else 0 (also
    for one over MAX_PERMUTED_ELEMENTS: the case's own check refuses it, unsorted)."""
    inputs = raw.get("inputs") if isinstance(raw, dict) else None
    table = inputs.get(TABLE_NAME) if isinstance(inputs, dict) else None
    if not isinstance(table, dict) or table.get("generator") != "permuted":
        return 0
    rows, cols = table.get("max_reqs"), table.get("max_seq_len")
    ok = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (rows, cols))
    return rows * cols if ok and rows * cols <= MAX_PERMUTED_ELEMENTS else 0


def pins_fault(case: Case) -> tuple[str, str] | None:
    """(JSON path, message) when ``case`` pins a project rule or the wrapper that none of its
    elements or errors reach (spec section 8: ``pins`` names what the case must reach; the judge
    decides each element by its own rule, whatever the case pins)."""
    if case.pins == DEFAULT_PINS:
        return None
    kinds = {kind_of(rule) for rule in reached_rules(case_rules(case))}
    if case.pins in kinds:
        return None
    reached = ", ".join(sorted(kinds)) or "only the contract"
    return "$.pins", (f"pins {case.pins!r}, but no element or error of the case is decided by "
                      f"a {case.pins} rule (it reaches {reached}; spec §8)")


def case_files(directory: Path) -> list[Path]:
    """Every ``*.json`` below ``directory`` except schemas and the known-divergence manifests in
    its ``divergences/`` folder, sorted for stable collection order."""
    return sorted(p for p in directory.rglob("*.json") if p.name != "schema.json"
                  and DIVERGENCES_DIRNAME not in p.relative_to(directory).parts[:-1])


def misnamed_files(directory: Path) -> list[Path]:
    """Files below ``directory`` named ``*.json`` in another case (``b.JSON``), which
    :func:`case_files` does not load: each is a load fault, never silence."""
    return sorted(p for p in directory.rglob("*") if p.suffix.lower() == ".json"
                  and p.suffix != ".json" and p.is_file()
                  and DIVERGENCES_DIRNAME not in p.relative_to(directory).parts[:-1])


def skipped_folders(directory: Path) -> list[Path]:
    """Symlinks to folders below ``directory``, which :func:`case_files` does not follow (a link
    could loop, or lead out of the corpus): each is a load fault, never silence."""
    return sorted(p for p in directory.rglob("*") if p.is_symlink() and p.is_dir())


def load_corpus(directories: list[Path] | None = None) -> tuple[list[Case], list[CaseFileError]]:
    """Load every case below ``directories`` (default: the offsets corpus,
    ``cases/<subject>/``).

    Returns:
        (cases in file order, faults). A duplicate id is a fault of the second file; its case is
        dropped so the first one still runs.
    """
    cases, errors, seen = [], [], {}
    for directory in directories or [DEFAULT_CASES_DIR]:
        if not directory.is_dir():
            errors.append(CaseFileError(directory, "$", "no such cases directory"))
            continue
        errors.extend(CaseFileError(link, "$", "a symlink to a folder: not followed, its case "
                                               "files are not loaded (name the folder with "
                                               "--cases, or copy it in)")
                      for link in skipped_folders(directory))
        errors.extend(CaseFileError(path, "$", f"named {path.suffix!r}: case files end in "
                                               "'.json' (lowercase); not loaded")
                      for path in misnamed_files(directory))
        for path in case_files(directory):
            loaded, faults = load_file(path)
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
