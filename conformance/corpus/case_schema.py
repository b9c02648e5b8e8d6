"""A case file checked against ``cases/<subject>/schema.json`` (jsonschema, draft 2020-12): the
most specific fault of a value as ``(JSON path, message)`` (:func:`schema_error`, worded by
:mod:`conformance.corpus.schema_words`), an id that matches its pattern in full
(:func:`id_error`), and the declared tags (:func:`known_tags`). Used by
:mod:`conformance.corpus.loader`.
"""

from __future__ import annotations

import json
import re
from functools import cache

import jsonschema

from conformance.corpus.close_match import did_you_mean
from conformance.corpus.corpus_subject import CASE_SCHEMA_PATH
from conformance.corpus.corpus_subject import NAME as DEFAULT_SUBJECT
from conformance.corpus.schema_words import schema_message


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(CASE_SCHEMA_PATH.read_text())
    return jsonschema.Draft202012Validator(schema)


def known_tags() -> dict[str, str]:
    """The declared tags and what each means, from ``cases/<subject>/schema.json``
    (``$defs/tag``)."""
    return {entry["const"]: entry["description"]
            for entry in _validator().schema["$defs"]["tag"]["oneOf"]}


def schema_error(doc: object, ref: str) -> tuple[str, str] | None:
    """``(JSON path, message)`` of the most specific fault of ``doc`` against the schema's
    definition ``ref`` (``#/$defs/case``, ``#/$defs/group``), or None when it conforms."""
    validator = _validator()
    defs = validator.schema["$defs"]
    sub = validator.evolve(schema={"$ref": ref, "$defs": defs})
    error = jsonschema.exceptions.best_match(sub.iter_errors(doc))
    if error is None:
        return None
    # Descend into oneOf branches to the most specific message: the branch that got deepest into
    # the value (the one the author meant), except for a tag, whose branches are the declared tags.
    while error.context and error.schema != defs["tag"]:
        deepest = max(len(e.absolute_path) for e in error.context)
        error = jsonschema.exceptions.best_match(
            e for e in error.context if len(e.absolute_path) == deepest)
    if error.schema == defs["tag"]:
        close = did_you_mean(error.instance, known_tags()) if isinstance(error.instance, str) \
            else ""
        return error.json_path, (f"unknown tag {error.instance!r}{close}: the tags are declared "
                                 f"in cases/{DEFAULT_SUBJECT}/schema.json ($defs/tag): "
                                 f"{', '.join(known_tags())}")
    return error.json_path, schema_message(error) + _shared_input_hint(error, defs)


def _shared_input_hint(error: jsonschema.exceptions.ValidationError, defs: dict) -> str:
    """For a key a step's ``inputs`` do not take but the case's own ``inputs`` do (the table, the
    LUT, the buffer lengths: what every step shares), where it goes instead."""
    step_defs, case_defs = defs.get("step_inputs"), defs.get("inputs")
    if error.validator != "additionalProperties" or error.schema is not step_defs \
            or not isinstance(case_defs, dict) or not isinstance(error.instance, dict):
        return ""
    shared = [key for key in error.instance if key in case_defs.get("properties", {})
              and key not in step_defs.get("properties", {})]
    if not shared:
        return ""
    keys = ", ".join(repr(key) for key in shared)
    return (f"; {keys} go{'es' if len(shared) == 1 else ''} in the case's own \"inputs\" (or a "
            f"group's \"defaults\"), which every step shares: a step's \"inputs\" hold only what "
            f"changes")


def id_error(raw: dict) -> tuple[str, str] | None:
    """The id must match its schema pattern in full: jsonschema searches with Python's ``re``,
    whose ``$`` also matches before a trailing newline."""
    pattern = _validator().schema["$defs"]["id"]["pattern"]
    if re.fullmatch(pattern.removeprefix("^").removesuffix("$"), raw["id"]):
        return None
    return "$.id", f"id {raw['id']!r} does not match {pattern!r} in full"
