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

from conformance.corpus.entries import PSEUDO_PLANNERS
from conformance.paths import RESULTS_SCHEMA_PATH
from conformance.reporting.file_text import read_file_text

__all__ = ["BAD", "FINISHED_EXIT_CODES", "FORMAT", "JUDGED", "PSEUDO_PLANNERS", "JUDGED_MEANING", "RANK",
           "STATUSES", "STATUS_TABLE", "VERSION", "ResultsError", "incomplete_reason", "load_results",
           "write_json_atomic", "write_text_atomic"]

FORMAT, VERSION = "planner-conformance-results", 1
"""The ``format`` and ``version`` fields every results file carries."""
STATUS_TABLE = (
    # (status, not passing?, rank: a later test phase's status replaces an earlier lower one)
    ("fail", True, 2),
    ("oob", True, 5),
    ("error", True, 3),
    ("crash", True, 4),
    ("timeout", True, 4),
    ("xpass", True, 1),
    ("differs", False, 0),
    ("not-wrapper", False, 0),
    ("declared", False, 0),
    ("xfail", False, 0),
    ("skip", False, 0),
    ("pass", False, 0),
)
"""Every status of a result, in report order (what needs attention first): adding a status is one
line here (and one in the schema's ``$defs.status`` enum, which tests/test_report_truth.py
checks against it). ``oob``: compute-sanitizer, or a value that can only have come from outside a
tensor, showed an access outside an allocation while the case ran; ``differs`` / ``not-wrapper``:
a difference from a project rule or from the wrapper's check on a planner not judged on it;
``declared``: a divergence the planner's manifest declares (spec section 8)."""
STATUSES = tuple(name for name, _, _ in STATUS_TABLE)
"""Report order: what needs attention first."""
BAD = frozenset(name for name, bad, _ in STATUS_TABLE if bad)
"""Statuses that count as not passing."""
RANK = {name: rank for name, _, rank in STATUS_TABLE}
"""How a result's status is kept across test phases: a teardown error replaces a pass."""
JUDGED_MEANING = {
    "oob": "an access outside a tensor seen",
    "differs": "a difference only a project rule decides",
    "not-wrapper": "one only the wrapper's check decides",
    "declared": "a divergence a manifest declares",
}
"""What each status :mod:`conformance.plugin.profiles` gives means, in a few words (spec section 8;
the terminal summary's legend and the report say it with these words)."""
JUDGED = tuple(JUDGED_MEANING)
"""Statuses :mod:`conformance.plugin.profiles` gives (spec section 8)."""
FINISHED_EXIT_CODES = (0, 1)
"""pytest's exit codes of a run that ran every collected item (all passed / some failed)."""


class ResultsError(ValueError):
    """A results file that cannot be read; the message names the file and the place."""


@cache
def _validator() -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(RESULTS_SCHEMA_PATH.read_text()))


def load_results(path: Path) -> dict:
    """Read a results file and check it against ``reports/results.schema.json``.

    Raises:
        ResultsError: missing, a folder, not UTF-8, not JSON, another format or version, or a
            schema violation.
    """
    path = Path(path)
    try:
        doc = json.loads(read_file_text(path))
    except IsADirectoryError as exc:
        raise ResultsError(f"{path}: is a folder, not a results file") from exc
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: byte {exc.start}: not UTF-8 ({exc.reason}): not a results "
                           f"file") from exc
    except RecursionError as exc:
        raise ResultsError(f"{path}: JSON nested too deeply to read") from exc
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


def incomplete_reason(doc: dict) -> str | None:
    """Why the results file ``doc`` does not hold a whole run, or None when it does.

    Incomplete: ``complete`` false (interrupted, killed, still running, or aborted at collection),
    a pytest exit code other than 0 or 1 (interrupted, internal error, usage error, nothing
    collected), or fewer results than collected items (``-x`` stopped it, or a worker died).
    """
    results, collected = len(doc["results"]), doc["collected"]
    have = f"{results} of {collected if collected is not None else '?'} collected items have a result"
    if not doc["complete"]:
        return ("the run did not finish (interrupted, killed, still running, or stopped by a usage "
                f"error: pytest said which): {have}")
    if doc["exitstatus"] not in FINISHED_EXIT_CODES:
        return f"pytest ended with exit code {doc['exitstatus']}: {have}"
    if collected is None or results < collected:
        return f"the run stopped early: {have}"
    return None


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as :func:`write_json_atomic` writes a document."""
    _write_atomic(path, lambda f: f.write(text))


def write_json_atomic(path: Path, doc: dict) -> None:
    """Write ``doc`` (indented JSON and a newline) to ``path``: see :func:`_write_atomic`."""

    def dump(f) -> None:
        json.dump(doc, f, indent=1)
        f.write("\n")

    _write_atomic(path, dump)


def _write_atomic(path: Path, write) -> None:
    """Write ``doc`` to ``path`` through a temporary file in the same folder and ``os.replace``
    (which replaces a symlink at ``path``, never the file it points to). The file gets the mode
    a plain ``open`` would give it (0644 under the usual umask 022), not mkstemp's 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
