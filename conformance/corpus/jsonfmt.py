"""Write case files the way people write them: indented objects, lists of numbers on one line."""

from __future__ import annotations

import json

WIDTH = 100
"""Lists of scalars longer than this are wrapped across lines."""


def dumps(value: object, indent: int = 0) -> str:
    """``value`` as JSON: objects indented by two spaces, scalar lists inline (wrapped at WIDTH)."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            flat = "[" + ", ".join(json.dumps(v) for v in value) + "]"
            if len(flat) + len(inner) <= WIDTH:
                return flat
            lines, line = [], []
            for v in value:
                text = json.dumps(v)
                if line and len(inner) + len(", ".join(line + [text])) > WIDTH:
                    lines.append(", ".join(line))
                    line = []
                line.append(text)
            lines.append(", ".join(line))
            return "[\n" + ",\n".join(inner + ln for ln in lines) + "\n" + pad + "]"
        return "[\n" + ",\n".join(inner + dumps(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value)
