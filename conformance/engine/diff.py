"""Readable diffs of output buffers: which field, the first differing index, expected and got with
a few neighbours, and what the value means (still poison, or outside the tensor); under them, the
rows a caller gives at the same indices (a request's inputs, for an output indexed by request)."""

from __future__ import annotations

from collections.abc import Mapping

from tabulate import tabulate

NEIGHBOURS = 3
"""Elements shown either side of the first difference."""


def differing_indices(expected: list, got: list) -> list[int]:
    """Indices where ``expected`` and ``got`` differ (a length difference counts from the shorter end)."""
    out = [i for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    out.extend(range(min(len(expected), len(got)), max(len(expected), len(got))))
    return out


def _cell(values: list, i: int, mark: bool, poison: list | None) -> str:
    if i >= len(values):
        text = "-"
    elif poison is not None and i < len(poison) and values[i] == poison[i]:
        text = "poison"
    else:
        text = str(values[i])
    return f"[{text}]" if mark else text


def _input_cell(values: list, index: int) -> str:
    """``values[index]``, or ``-`` where ``values`` has no such index (no request there)."""
    return str(values[index]) if 0 <= index < len(values) else "-"


def field_diff(field: str, expected: list, got: list, *, offset: int = 0, length: int | None = None,
               poison: list | None = None, inputs: Mapping[str, list] | None = None,
               also: Mapping[str, int] | None = None) -> str | None:
    """Describe how ``got`` differs from ``expected``, or None when they are equal.

    Args:
        field: the buffer's name, e.g. ``out_write_offsets``.
        expected, got: the whole allocation's contents.
        offset: index in the allocation of the tensor's element 0 (guard zones lie before it).
        length: the tensor's length; indices outside [0, length) are reported as outside the tensor.
        poison: the allocation's poison pattern, to say "still poison" / "should be untouched".
        inputs: {row label: values by tensor index} shown under ``got`` at the same indices (for
            an output whose element r is request r's: each per-request input, of length bs); an
            index outside a row's values (past bs, or in a guard zone) shows ``-``.
        also: {heading: allocation index} of further differing elements to show, each with a
            table of its own under its heading (the judge gives the first element of each other
            rule, so that the rule a case is judged on is in view even when an element of another
            comes first).

    Returns:
        A few lines: the count of differing elements, the first one's index relative to the tensor,
        and a small table of expected and got around it (the differing cells in brackets, poison
        shown as ``poison``; negative indices are the guard zone before the tensor), then the
        ``inputs`` rows.
    """
    diffs = differing_indices(expected, got)
    if not diffs:
        return None
    first = diffs[0]
    index = first - offset
    n = len(expected) - 2 * offset if length is None else length
    where = f"index {index}"
    if index < 0:
        where += f" (outside the tensor: {-index} before its start)"
    elif index >= n:
        where += f" (outside the tensor: {index - n + 1} past its end, length {n})"
    lines = [f"{field}: {len(diffs)} element(s) differ, first at {where}"]
    marked = set(diffs)
    lines.extend(_around(first, expected, got, offset, marked, poison, inputs))
    for heading, at in (also or {}).items():
        if at != first:
            lines.append(f"  {heading}: index {at - offset}")
            lines.extend(_around(at, expected, got, offset, marked, poison, inputs))
    return "\n".join(lines)


def _around(first: int, expected: list, got: list, offset: int, marked: set[int],
            poison: list | None, inputs: Mapping[str, list] | None) -> list[str]:
    """What the poison says at allocation index ``first``, then the table of expected, got and
    the ``inputs`` rows over its :data:`NEIGHBOURS` (see :func:`field_diff`)."""
    lines = []
    if poison is not None and first < len(got) and first < len(poison):
        if got[first] == poison[first]:
            lines.append("  got is still the poison there: the planner never wrote this element")
        elif expected[first] == poison[first]:
            lines.append("  expected is the poison there: the planner must not write this element")
    lo = max(first - NEIGHBOURS, 0)
    hi = min(first + NEIGHBOURS + 1, max(len(expected), len(got)))
    rows = [["index", *[str(i - offset) for i in range(lo, hi)]],
            ["expected", *[_cell(expected, i, i in marked, poison) for i in range(lo, hi)]],
            ["got", *[_cell(got, i, i in marked, poison) for i in range(lo, hi)]]]
    rows.extend([label, *[_input_cell(values, i - offset) for i in range(lo, hi)]]
                for label, values in (inputs or {}).items())
    table = tabulate(rows, tablefmt="plain", stralign="right")
    lines.extend("    " + line for line in table.splitlines())
    return lines
