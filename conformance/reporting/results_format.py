"""The results file as data: its format name and version, statuses, load with schema check, and
atomic write. ``reports/results.schema.json`` is its schema; :mod:`conformance.plugin.results_writer`
writes it, :mod:`conformance.reporting.report` and :mod:`conformance.reporting.compare` read it.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path

import jsonschema

from conformance.paths import RESULTS_SCHEMA_PATH

FORMAT, VERSION = "planner-conformance-results", 1
"""The ``format`` and ``version`` fields every results file carries."""
STATUSES = ("fail", "oob", "error", "crash", "timeout", "xpass", "differs", "not-wrapper",
            "declared", "xfail", "skip", "pass")
"""Report order: what needs attention first."""
BAD = frozenset({"fail", "oob", "error", "crash", "timeout", "xpass"})
JUDGED = ("oob", "differs", "not-wrapper", "declared")
"""Statuses :mod:`conformance.plugin.profiles` gives: a read or write outside a tensor seen; a
difference from a project rule or from the wrapper on a planner not judged on it; a divergence its
manifest declares (spec section 8)."""
PSEUDO_PLANNERS = ("validator", "allocator", "load")
"""Planner-column names of results that belong to no planner: cases that reach only the shared
validator, the buffer allocator's errors, and faults of case files found at load time."""


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and the place."""


@cache
def _validator() -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(RESULTS_SCHEMA_PATH.read_text()))


def load_results(path: Path) -> dict:
    """Read a results file and check it against ``reports/results.schema.json``.

    Raises:
        ResultsError: missing, not JSON, another format or version, or a schema violation.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: line {exc.lineno} column {exc.colno}: malformed JSON: "
                           f"{exc.msg}") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ResultsError(f"{path}: not a conformance results file (no \"format\": {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise ResultsError(f"{path}: results format version {doc.get('version')!r}, this "
                           f"harness reads version {VERSION}")
    error = jsonschema.exceptions.best_match(_validator().iter_errors(doc))
    if error is not None:
        raise ResultsError(f"{path}: at {error.json_path}: {error.message}")
    return doc



def write_json_atomic(path: Path, doc: dict) -> None:
    """Write ``doc`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
