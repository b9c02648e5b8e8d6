"""A schema fault of a case file in words a case author can act on.

jsonschema says ``Additional properties are not allowed ('expected' was unexpected)`` for a key the
schema does not know. :func:`schema_message` keeps that and adds the keys allowed at that place,
with the closest one first when the unknown key looks like a misspelling of it (``expected`` for
``expect``, ``length`` for ``len``).

For a value of the wrong JSON type jsonschema says ``'10,2' is not of type 'array'``: Python's
repr of the value and the schema's type name. :func:`type_message` names the field, what it must
be and what was given, in JSON's words: ``"prefix_lens" must be a JSON array of integers (or an
object with "fill", ...), got the string "10,2"``.
"""

from __future__ import annotations

import json
from decimal import Decimal

import jsonschema

from conformance.corpus.close_match import close_to

TYPE_WORDS = {"array": "a JSON array", "object": "a JSON object", "integer": "an integer",
              "number": "a number", "string": "a string", "boolean": "true or false",
              "null": "null"}
"""What a value of each JSON-schema type is, in a case author's words."""
ITEM_WORDS = {"integer": "integers", "string": "strings", "object": "JSON objects",
              "array": "JSON arrays"}
"""The items of an array whose schema gives their type."""
SHOWN_CHARACTERS = 40
"""Longest string or number a message shows whole; a longer one is cut, and says so."""


def schema_message(error: jsonschema.exceptions.ValidationError) -> str:
    """``error``'s message in a case author's words: for a value of the wrong type, which field
    must be what and what it holds (:func:`type_message`); for a key the schema does not allow
    there, the keys it does; else jsonschema's own message."""
    if error.validator == "type":
        return type_message(error)
    allowed = error.schema.get("properties") if isinstance(error.schema, dict) else None
    if error.validator == "required" and isinstance(error.instance, dict):
        return required_message(error, allowed)
    if error.validator != "additionalProperties" or not isinstance(allowed, dict) \
            or not isinstance(error.instance, dict):
        return error.message
    unknown = [key for key in error.instance if key not in allowed]
    hints = []
    for key in unknown:
        close = close_to(str(key), allowed)
        if close is not None:
            hints.append(f"{key!r}: did you mean {close!r}?")
    said = f"{error.message}; the keys allowed here: {', '.join(allowed)}"
    return f"{said} ({'; '.join(hints)})" if hints else said


def required_message(error: jsonschema.exceptions.ValidationError, allowed: object) -> str:
    """jsonschema's ``'out_write_offsets' is a required property``, and where the object holds a
    key the schema does not allow there that looks like a misspelling of the missing one
    (``out_write_offset``), that key: ``('out_write_offset' is given: did you mean
    'out_write_offsets'?)``, since the missing key is the first fault jsonschema names."""
    known = allowed if isinstance(allowed, dict) else {}
    unknown = [str(key) for key in error.instance if key not in known]
    missing = [key for key in error.validator_value if key not in error.instance] \
        if isinstance(error.validator_value, list) else []
    hints = []
    for key in unknown:
        close = close_to(key, missing)
        if close is not None:
            hints.append(f"{key!r} is given: did you mean {close!r}?")
    return f"{error.message} ({'; '.join(hints)})" if hints else error.message


def type_message(error: jsonschema.exceptions.ValidationError) -> str:
    """``"FIELD" must be WHAT, got GIVEN`` for a ``type`` fault; where the schema allows other
    shapes there too (a ``oneOf`` none of whose branches takes a value of this type: an array
    spec, which may also be a generator object), the others in parentheses."""
    shapes = _shapes(error)
    want = shapes[0] + (f" (or {_either(shapes[1:])})" if shapes[1:] else "")
    field = field_words(list(error.absolute_path))
    return f"{field} must be {want}, got {given_words(error.instance)}"


def field_words(path: list) -> str:
    """The field at ``path`` (keys and indices from the validated case): ``"prefix_lens"``,
    ``item 1 of "prefix_lens"``, ``item [0][2] of "set"``; ``the case`` for the case itself."""
    indices = []
    while path and isinstance(path[-1], int):
        indices.insert(0, path.pop())
    name = json.dumps(path[-1]) if path else "the case"
    if not indices:
        return name
    where = str(indices[0]) if len(indices) == 1 else "".join(f"[{i}]" for i in indices)
    return f"item {where} of {name}"


def given_words(value: object) -> str:
    """What a case file holds, as JSON says it: ``the string "10,2"``, ``the number 1.0``,
    ``true``, ``null``, ``a JSON array of 3 items``, ``a JSON object``."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        if len(value) > SHOWN_CHARACTERS:
            return (f"a string of {len(value)} characters starting "
                    f"{json.dumps(value[:SHOWN_CHARACTERS])[:-1]}...\"")
        return f"the string {json.dumps(value)}"
    if isinstance(value, Decimal) and not value.is_finite():
        return "a number too large to read"
    if isinstance(value, (int, float, Decimal)):
        text = str(value)
        if len(text) > SHOWN_CHARACTERS:
            return f"a number of {len(text)} characters"
        return f"the number {text}"
    if isinstance(value, list):
        return f"a JSON array of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "a JSON object"
    return type(value).__name__


def _type_words(schema: object) -> str:
    """What a value that ``schema`` takes is: ``a JSON array of integers``, ``null``."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        return _either([_type_words({**schema, "type": k}) for k in kind])
    items = schema.get("items") if isinstance(schema, dict) else None
    if kind == "array" and isinstance(items, dict) and items.get("type") in ITEM_WORDS:
        return f"{TYPE_WORDS['array']} of {ITEM_WORDS[items['type']]}"
    return TYPE_WORDS.get(kind, f"of type {kind!r}")


def _shapes(error: jsonschema.exceptions.ValidationError) -> list[str]:
    """What the value at ``error``'s place may be: its schema's type; or, where it came from a
    ``oneOf`` or ``anyOf`` every branch of which refused the value by its type alone, each
    branch's, in order, the object branches that require a key said as one shape by those keys
    (``an object with "fill", "arange", ...``)."""
    parent = error.parent
    if parent is None or parent.validator not in ("oneOf", "anyOf") \
            or parent.absolute_path != error.absolute_path \
            or not all(e.validator == "type" and e.absolute_path == error.absolute_path
                       for e in parent.context):
        return [_type_words(error.schema)]
    shapes: list[str] = []
    keys: list[str] = []
    for branch in parent.validator_value:
        if isinstance(branch, dict) and branch.get("type") == "object" and branch.get("required"):
            if not keys:
                shapes.append("")  # the keyed objects' place, said when all are known
            keys.append(json.dumps(branch["required"][0]))
        elif (words := _type_words(branch)) not in shapes:
            shapes.append(words)
    keyed = f"an object with {_either(keys)}" if keys else ""
    return [keyed if shape == "" else shape for shape in shapes]


def _either(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
