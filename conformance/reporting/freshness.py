"""Is a results file about the code in this checkout? (``python -m conformance report``.)

A results file is *stale* when the run's commit differs from the checkout's HEAD, or when a
planner's source file (recorded with its SHA-256 in the fingerprint) now reads differently: the
page shows results of other code; and when a recorded planner's file cannot be checked now, so
that a change cannot be ruled out: its lookup is refused (:func:`impls.source_file.lookup`: which
file the import would run cannot be told), its module is found neither in the run's recorded
``PYTHONPATH`` nor by this process, or its file cannot be read. Beside the planner's own file,
the local modules it imports are checked alike (:mod:`impls.source_imports`). A report never needs
the run's ``PYTHONPATH`` set: it reads those folders without importing from them
(:func:`find_recorded`). The report names a stale file in its first line; with ``--strict`` it
also exits non-zero.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from conformance.fingerprint import head_commit
from impls.folder_lookup import lookup_in
from impls.source_file import PLANNER_PATH_ENV, find_source, lookup


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
    unknown commit on either side is not a difference. A recorded source that cannot be checked
    now (lookup refused, module not found here, file unreadable) is named as unverifiable, never
    taken for unchanged.
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
        current, refused = find_recorded(source["module"], doc)
        if refused is not None:
            unverifiable.append(f"{name} ({refused})")
            continue
        if current is None:
            unverifiable.append(f"{name} ({not_found(source['module'], doc)})")
            continue
        now = _sha256(Path(current))
        if now is None:
            unverifiable.append(f"{name} (its file {current} cannot be read now)")
        elif now != source.get("sha256"):
            changed.append(name)
        else:
            moved, unsure = changed_imports(source.get("imports") or [], doc)
            if moved:
                changed.append(f"{name} (its import{'s' * (len(moved) > 1)} {', '.join(moved)})")
            if unsure:
                unverifiable.append(f"{name} (its import{'s' * (len(unsure) > 1)} "
                                    f"{', '.join(unsure)})")
    if changed:
        reasons.append(f"source changed since the run: {', '.join(changed)}")
    if unverifiable:
        reasons.append(f"source cannot be verified now: {', '.join(unverifiable)}")
    return reasons


def changed_imports(imports: list[dict], doc: dict) -> tuple[list[str], list[str]]:
    """``(changed, unverifiable)`` module names among a recorded source's ``imports``
    (:func:`impls.source_imports.local_imports`): changed when the file the import would load now
    reads differently or is not found; unverifiable when the run could not pin it (null digest),
    its lookup is refused now, or its file cannot be read."""
    changed, unsure = [], []
    for entry in imports:
        module = entry.get("module")
        if not isinstance(module, str):
            continue
        if not entry.get("sha256"):
            unsure.append(f"{module}: not pinned by the run")
            continue
        current, refused = find_recorded(module, doc)
        if refused is not None:
            unsure.append(f"{module}: {refused}")
        elif current is None:
            changed.append(f"{module} (gone)")
        elif (now := _sha256(Path(current))) is None:
            unsure.append(f"{module}: cannot be read now")
        elif now != entry["sha256"]:
            changed.append(module)
    return changed, unsure


def find_recorded(module: str, doc: dict) -> tuple[str | None, str | None]:
    """The file importing ``module`` would load as the run of results ``doc`` imported it:
    searched first in the folders of the run's recorded ``PYTHONPATH`` (which stood ahead of the
    rest of its path) and ``$CONFORMANCE_PLANNER_PATH``, without adding them to this process's path
    (:func:`impls.folder_lookup.lookup_in`: nothing planted there is ever imported here), then
    by this process's own import system (:func:`impls.source_file.lookup`). ``(path, None)``,
    ``(None, None)`` (not found) or ``(None, why)`` (refused)."""
    for folders in (run_pythonpath(doc), run_planner_path(doc)):
        if folders:
            found = lookup_in(module, folders.split(os.pathsep))
            if found != (None, None):
                return found
    return lookup(module)


def run_planner_path(doc: dict) -> str | None:
    """The planner folders (``$CONFORMANCE_PLANNER_PATH``) the run of results ``doc`` had, or
    None."""
    env = doc.get("environment")
    value = env.get(PLANNER_PATH_ENV) if isinstance(env, dict) else None
    return value if isinstance(value, str) and value else None


def run_pythonpath(doc: dict) -> str | None:
    """The ``PYTHONPATH`` the run of results ``doc`` had (its ``environment``), or None."""
    env = doc.get("environment")
    value = env.get("PYTHONPATH") if isinstance(env, dict) else None
    return value if isinstance(value, str) and value else None


def not_found(module: str, doc: dict) -> str:
    """Why the recorded source of ``module`` cannot be checked when it is found neither in the
    run's recorded folders nor by this process (:func:`find_recorded`)."""
    folders = os.pathsep.join(f for f in (run_pythonpath(doc), run_planner_path(doc)) if f)
    where = f"nor in the run's folders {folders}" if folders else \
        "and the run recorded no PYTHONPATH or CONFORMANCE_PLANNER_PATH"
    return f"{module} is not found here {where}"


def undigested(doc: dict) -> list[str]:
    """The external planners (``module:attr``) of results ``doc`` for which the run recorded no
    source digest (``impls/source_file.py`` refused: a finder of an unknown type ahead of the
    answer, cached bytecode of other code, an unreadable file): a change to their code since the
    run cannot be seen, so a report says so rather than stay silent."""
    return [name for name, planner in sorted(doc["fingerprint"]["planners"].items())
            if ":" in name and not (planner.get("source") or {}).get("sha256")]
