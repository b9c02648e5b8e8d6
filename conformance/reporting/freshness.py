"""Is a results file about the code in this checkout? (``python -m conformance report``.)

A results file is *stale* when the run's commit differs from the checkout's HEAD, or when a
planner's source file (recorded with its SHA-256 in the fingerprint) now reads differently: the
page shows results of other code; and when the lookup of a recorded planner's file is refused now
(:func:`impls.source_file.lookup`: which file the import would run cannot be told), so that a
change cannot be ruled out. The report names a stale file in its first line; with
``--strict`` it also exits non-zero.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from conformance.fingerprint import head_commit
from impls.source_file import find_source, lookup


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def current_file(module: str) -> Path | None:
    """The source file that importing ``module`` would run now, found without importing it or any
    package above it, so that a report never runs planner code (:func:`impls.source_file.
    find_source`, the finder the availability probe's digest uses). None when it cannot be found."""
    path = find_source(module)
    return Path(path) if path is not None else None


def stale_reasons(doc: dict, head: str | None = None) -> list[str]:
    """What in the checkout differs from the run of results ``doc`` (empty: not stale).

    ``head`` is the checkout's commit (default :func:`conformance.fingerprint.head_commit`); an
    unknown commit on either side is not a difference, nor is a source file that is gone.
    """
    fp = doc["fingerprint"]
    head = head_commit() if head is None else head
    reasons = []
    if fp["commit"] and head and fp["commit"] != head:
        reasons.append(f"run at commit {fp['commit'][:12]}, checkout at {head[:12]}")
    changed, unverifiable = [], []
    for name, planner in sorted(fp["planners"].items()):
        source = planner.get("source") or {}
        if not source.get("module"):
            continue
        current, refused = lookup(source["module"])
        if refused is not None:
            unverifiable.append(f"{name} ({refused})")
        now = _sha256(Path(current)) if current is not None else None
        if now is not None and now != source.get("sha256"):
            changed.append(name)
    if changed:
        reasons.append(f"source changed since the run: {', '.join(changed)}")
    if unverifiable:
        reasons.append(f"source cannot be verified now: {', '.join(unverifiable)}")
    return reasons


def undigested(doc: dict) -> list[str]:
    """The external planners (``module:attr``) of results ``doc`` for which the run recorded no
    source digest (``impls/source_file.py`` refused: a finder of an unknown type ahead of the
    answer, cached bytecode of other code, an unreadable file): a change to their code since the
    run cannot be seen, so a report says so rather than stay silent."""
    return [name for name, planner in sorted(doc["fingerprint"]["planners"].items())
            if ":" in name and not (planner.get("source") or {}).get("sha256")]
