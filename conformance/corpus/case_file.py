"""A case file as JSON, read so that no file can hang, exhaust or fool the loader: the faults a file
can hold (:class:`CaseFileError`, one printable line naming the file and the JSON path), and
:func:`read_case_file`, which refuses what is not a regular file, too large, not UTF-8,
malformed, an integer past Python's int-string limit or nested too deep, and reads every
fraction as a Decimal (never an integer to the schema). The schema and the semantic checks are
:mod:`conformance.corpus.loader`'s.
"""

from __future__ import annotations

import json
import re
import stat
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from conformance.corpus.limits import MAX_CASE_FILE_BYTES
from conformance.paths import FROM_ELSEWHERE, REPO_ROOT

MAX_NESTING = 32
"""Deepest nesting of a case file's JSON; deeper files are refused before the schema check (the
schema's recursive ``concat`` would otherwise exhaust Python's stack inside jsonschema)."""
MAX_MESSAGE = 400
"""Longest fault message printed whole."""


@dataclass(frozen=True)
class CaseFileError:
    """A fault in a case file: where (file, JSON path) and what."""

    path: Path
    json_path: str
    message: str
    case_id: str | None = None

    def __post_init__(self) -> None:
        # The path names the pytest item (``file@path[load]``): one printable line, never huge.
        where = printable(self.json_path)
        object.__setattr__(self, "json_path", where if len(where) <= MAX_MESSAGE else
                           where[:MAX_MESSAGE] + "...")

    def __str__(self) -> str:
        """One line: control characters (a key or value holding a newline) are escaped, and a
        message past MAX_MESSAGE characters (a schema error quoting a huge value) is cut."""
        message = self.message if len(self.message) <= MAX_MESSAGE else \
            self.message[:MAX_MESSAGE] + f"... ({len(self.message)} characters)"
        return printable(f"{display_path(self.path)}: at {self.json_path}: {message}")


def printable(text: str) -> str:
    """``text`` with every non-printable character (ESC, newline, bidi controls) escaped as Python
    writes it in a string literal: safe to put in one terminal line or a pytest node id."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def visible(text: str) -> str:
    """``text`` with every non-printable character but the newline and the tab (ESC, CR, NUL, bidi
    overrides) escaped as :func:`printable` does: multi-line text whose every character shows."""
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)


def display_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it and the run started at its root;
    otherwise (an installed wheel, a run started elsewhere) relative to the current directory when
    it lies there, else absolute."""
    try:
        resolved = path.resolve()
        return str(resolved.relative_to(Path.cwd() if FROM_ELSEWHERE else REPO_ROOT))
    except ValueError:
        return str(resolved) if FROM_ELSEWHERE else str(path)
    except OSError:
        return str(path)


def _too_deep(doc: object) -> str | None:
    """The JSON path of the first value nested deeper than :data:`MAX_NESTING`, or None.
    Iterative, so that it never recurses itself."""
    stack = [(doc, "$", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_NESTING:
            return where
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{k}", depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
    return None


def _long_integer(text: str) -> str | None:
    """``line L column C`` of the first integer longer than Python's int-string limit."""
    limit = sys.get_int_max_str_digits()
    match = re.search(r"\d{%d,}" % (limit + 1), text) if limit else None
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
    return f"line {line} column {column}"


def _fraction(text: str) -> Decimal:
    """A JSON number with a fraction or exponent, as a Decimal: never an integer to the schema;
    one past Decimal's exponent range (``1e9999999999999999999``) as Decimal infinity."""
    try:
        return Decimal(text)
    except ArithmeticError:
        return Decimal("Infinity") if not text.startswith("-") else Decimal("-Infinity")


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def read_case_file(path: Path) -> tuple[object, CaseFileError | None]:
    """The JSON document in ``path`` (floats as :class:`decimal.Decimal`, so that the schema refuses
    them where it wants an integer), or the fault that stops it being read: not UTF-8, malformed
    JSON, an integer past Python's int-string limit, nesting deeper than :data:`MAX_NESTING`, not a
    regular file or over :data:`conformance.corpus.limits.MAX_CASE_FILE_BYTES` (then never opened:
    a FIFO would block and ``/dev/zero`` never end)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None, CaseFileError(path, "$", "not a regular file (a FIFO, device or socket): "
                                                  "not read")
        if info.st_size > MAX_CASE_FILE_BYTES:
            return None, CaseFileError(path, "$", f"{info.st_size} bytes, more than the "
                                                  f"{MAX_CASE_FILE_BYTES} a case file may hold")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, CaseFileError(path, f"byte {exc.start}", f"not UTF-8: {exc.reason}")
    except OSError as exc:
        return None, CaseFileError(path, "$", f"cannot read: {exc.strerror}")
    try:
        doc = json.loads(text, parse_float=_fraction, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        return None, CaseFileError(path, f"line {exc.lineno} column {exc.colno}",
                                   f"malformed JSON: {exc.msg}")
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
        where = _long_integer(text) or "$"
        return None, CaseFileError(path, where, f"unreadable number: {exc}".split("; use")[0])
    except RecursionError:
        return None, CaseFileError(path, "$", f"JSON nested too deeply to read (the limit is "
                                              f"{MAX_NESTING} levels)")
    deep = _too_deep(doc)
    if deep is not None:
        return None, CaseFileError(path, deep, f"nested more than {MAX_NESTING} levels deep")
    return doc, None
