"""Which of a case's own ``xfail`` declarations apply to a planner (the case file's ``xfail``,
``cases/<subject>/schema.json`` ``$defs/xfail``; the corpus README's "known divergence").

A declaration names planners by fnmatch pattern (``"planner": "upstream*"``). A built-in planner
(the registry's ``builtin_names``: this checkout's own code, reviewed with the case) gets every
declaration its name matches. An external planner (``module.path:callable``) chooses its own
name, so a name alone says nothing of its code: a module named ``upstream_mine`` would otherwise
get the failures declared for upstream's kernel as strict xfails and a green run
(tests/test_hostile22.py). It gets a declaration only where its name matches and the entry's
``sources`` list its code, as a known-divergence manifest's ``sources`` do
(:meth:`conformance.corpus.manifest.Manifest.names`): the SHA-256 of its module file and of every
local module it imports, as the harness computed them (the registry's ``source_digest``, a run's
``fingerprint.planners[NAME].source``), never the planner's word. A declaration that names an
external planner but not its code is not applied and is said (:func:`unmatched_text`), never
dropped silently.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True)
class XfailMatch:
    """The declarations of one case for one planner.

    Attributes:
        applied: the first entry that applies (its ``planner`` and ``reason``), or None.
        unmatched: entries whose pattern names the (external) planner but whose ``sources`` do
            not list its code (or that list none), in the case's order.
    """

    applied: dict | None
    unmatched: tuple[dict, ...] = ()


def code_listed(entry: dict, source: dict | None) -> bool:
    """Whether ``entry``'s ``sources`` list the code ``source`` (a source digest: ``sha256`` and
    ``imports[].sha256``): its file and every local import each one of them. False without
    ``sources``, without a digest, or where a file could not be pinned (``sha256`` null)."""
    listed = entry.get("sources")
    if not isinstance(listed, (list, tuple)) or not isinstance(source, dict):
        return False
    files = [source, *(source.get("imports") or [])]
    return all(isinstance(f, dict) and isinstance(f.get("sha256"), str) and f["sha256"] in listed
               for f in files)


def match_xfail(entries, planner: str, builtin: bool, source: dict | None) -> XfailMatch:
    """The declarations of ``entries`` (a case's ``xfail``) for ``planner``: a ``builtin`` one by
    name pattern alone, an external one by name pattern and code (:func:`code_listed` of its
    ``source``). See the module docstring for why."""
    applied, unmatched = None, []
    for entry in entries:
        if not fnmatch.fnmatchcase(planner, str(entry.get("planner"))):
            continue
        if builtin or code_listed(entry, source):
            applied = applied or entry
        else:
            unmatched.append(entry)
    return XfailMatch(applied, tuple(unmatched))


def unmatched_text(case_id: str, planner: str, entry: dict, source: dict | None) -> str:
    """One line saying why ``entry``, whose pattern names ``planner``, was not applied to its
    result on case ``case_id``."""
    pattern = entry.get("planner")
    if source is None:
        why = "the harness has no digest of its code to check against the entry's sources"
    elif "sources" not in entry:
        why = ("the entry lists no sources, and an external planner gets a case's xfail only "
               "for code the entry lists")
    else:
        why = "its code (its file or a local import) is not among the entry's sources"
    return (f"{case_id}[{planner}]: the case's xfail for {pattern!r} is not applied: {why} "
            f"(its result stands as observed)")
