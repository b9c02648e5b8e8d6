"""A schema fault of a case file in words a case author can act on.

jsonschema says ``Additional properties are not allowed ('expected' was unexpected)`` for a key the
schema does not know. :func:`schema_message` keeps that and adds the keys allowed at that place,
with the closest one first when the unknown key looks like a misspelling of it (``expected`` for
``expect``, ``length`` for ``len``).
"""

from __future__ import annotations

import difflib

import jsonschema


def schema_message(error: jsonschema.exceptions.ValidationError) -> str:
    """``error``'s message, and for a key the schema does not allow there, the keys it does."""
    allowed = error.schema.get("properties") if isinstance(error.schema, dict) else None
    if error.validator != "additionalProperties" or not isinstance(allowed, dict) \
            or not isinstance(error.instance, dict):
        return error.message
    unknown = [key for key in error.instance if key not in allowed]
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), list(allowed), n=1, cutoff=0.6)
        if close:
            hints.append(f"{key!r}: did you mean {close[0]!r}?")
    said = f"{error.message}; the keys allowed here: {', '.join(allowed)}"
    return f"{said} ({'; '.join(hints)})" if hints else said
