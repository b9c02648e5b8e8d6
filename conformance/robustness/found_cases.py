"""Found cases of ``python -m conformance fuzz``: their ids, and writing them without ever
replacing a file the user may have reviewed.

* An id is ``found-<planner slug>-<plan hash>``: the hash is of the plan itself (its inputs and
  goldens as canonical JSON), so the same plan reached from two seeds (``--seed 0`` and
  ``--seed 2**64`` draw the same plans: splitmix64 reads the seed mod 2^64) gets one id and one
  file. A long planner name is cut and followed by a stable hash of the whole, so the id stays
  well under the case schema's 100-character limit (``cases/<subject>/schema.json``).
* A file already there is never rewritten: the same plan (equal ``inputs``) is skipped and named;
  a different one (another golden, or a file the user edited) gets the next free name,
  ``<id>-2``, ``<id>-3``, ...
* A case is written to a hidden temporary file beside its final name, loaded back with the corpus
  loader, and only then linked to its name (``os.link``: fails rather than replace a file that
  appeared meanwhile). A file that does not load is removed, never left where the corpus reads.
* What was written is remembered (:attr:`Placed.digest`, the SHA-256 of its bytes) and checked
  once the run's planners are gone (:func:`changed_since`): a planner's worker can write where
  ``--out`` is (outside the checkout, the sandbox leaves the temporary folder writable; without
  the sandbox, anywhere its user may) and rewrite or remove a found case while fuzz goes on, e.g.
  declare it ``xfail`` so that its rerun passes (tests/test_hostile23.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from conformance.corpus.jsonfmt import dumps
from conformance.corpus.loader import load_file

SLUG_CHARS = 40
"""Longest planner slug kept whole in an id; a longer one is cut and hashed."""
PLAN_HASH_CHARS = 12
"""Hex digits of the plan's SHA-256 in an id."""


class FoundCaseError(RuntimeError):
    """The fuzzer built a case the corpus loader refuses (a harness bug); nothing was left on
    disk. The message names the would-be file and the loader's fault."""


def slug(name: str) -> str:
    """``name`` as a case-id fragment: lowercase, ``[a-z0-9-]`` only (``tests.x:planted`` ->
    ``tests-x-planted``)."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "planner"


def _short(text: str, whole: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(whole.encode()).hexdigest()[:8]
    return f"{text[:limit - 9].rstrip('-')}-{digest}"


def plan_digest(plan: dict) -> str:
    """SHA-256 (hex) of a plan's ``inputs`` and ``expect`` as canonical JSON (sorted keys, no
    spaces): the same plan gives the same digest whatever seed or index reached it."""
    canonical = json.dumps({"inputs": plan["inputs"], "expect": plan["expect"]}, sort_keys=True,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def found_id(planner: str, plan: dict) -> str:
    """The id of ``plan`` (a case dict with ``inputs`` and ``expect``) found on ``planner``: at
    most 6 + 40 + 1 + 12 characters, the same for the same plan on every machine."""
    return (f"found-{_short(slug(planner), planner, SLUG_CHARS)}"
            f"-{plan_digest(plan)[:PLAN_HASH_CHARS]}")


@dataclass(frozen=True)
class Placed:
    """Where a found case went: ``path``, and ``new`` (written now) or not (the same plan was
    already there, and that file was left as it is)."""

    path: Path
    new: bool
    digest: str | None = None
    """SHA-256 of the bytes written (``new`` only)."""


def _same_plan(path: Path, doc: dict) -> bool:
    try:
        there = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False  # unreadable: not ours to judge, and never overwritten
    return isinstance(there, dict) and there.get("inputs") == doc["inputs"]


def place(doc: dict, out: Path) -> Placed:
    """Write the found case ``doc`` under ``out`` as ``<id>.json`` without replacing any file
    (see the module docstring); ``doc["id"]`` gets a ``-2``, ``-3``, ... suffix when taken.

    Raises:
        FoundCaseError: the case does not load back (nothing is left on disk).
        OSError: ``out`` cannot be written.
    """
    out.mkdir(parents=True, exist_ok=True)
    base = doc["id"]
    for k in itertools.count(1):
        case_id = base if k == 1 else f"{base}-{k}"
        path = out / f"{case_id}.json"
        if path.exists():
            if _same_plan(path, doc):
                return Placed(path, new=False)
            continue
        digest = _write_checked({**doc, "id": case_id}, path)
        if digest:
            return Placed(path, new=True, digest=digest)
    raise AssertionError("unreachable")


def changed_since(placed: list[Placed]) -> list[str]:
    """``path: why`` for each file of ``placed`` written by this run whose bytes are no longer
    those written (removed, unreadable or rewritten)."""
    out = []
    for p in placed:
        if not p.new:
            continue
        try:
            now = hashlib.sha256(p.path.read_bytes()).hexdigest()
        except OSError as exc:
            out.append(f"{p.path}: {exc.strerror or type(exc).__name__}")
            continue
        if now != p.digest:
            out.append(f"{p.path}: rewritten")
    return out


def _write_checked(doc: dict, path: Path) -> str | None:
    """Write ``doc`` to a temporary file, load-check it, link it to ``path``; the SHA-256 of the
    bytes written, or None when ``path`` appeared meanwhile (nothing written)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    data = (dumps(doc) + "\n").encode("utf-8")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _, faults = load_file(Path(tmp))
        if faults:
            raise FoundCaseError(f"fuzz built a case that does not load, not written to {path}: "
                                 f"{faults[0].json_path}: {faults[0].message}")
        try:
            os.link(tmp, path)  # never replaces: fails when path exists
        except FileExistsError:
            return None
        except OSError:  # a filesystem without hard links: check, then rename (a narrow race)
            if path.exists():
                return None
            os.replace(tmp, path)
        return hashlib.sha256(data).hexdigest()
    finally:
        Path(tmp).unlink(missing_ok=True)
