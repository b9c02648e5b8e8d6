"""Which planners' code differs between two runs (``python -m conformance report --compare``), by
the source digests their fingerprints recorded (:mod:`impls.source_imports`)."""

from __future__ import annotations

__all__ = ["changed_code", "code_difference", "undigested_code"]


def changed_code(old_fp: dict | None, new_fp: dict | None) -> list[str]:
    """Planners present in both runs whose recorded code differs (:func:`code_difference`):
    "name (old -> new)" for the file, "name (its imports a.b, a.c)" for its local imports."""
    old_p, new_p = (old_fp or {}).get("planners", {}), (new_fp or {}).get("planners", {})
    out = []
    for name in sorted(set(old_p) & set(new_p)):
        a, b = old_p[name].get("source"), new_p[name].get("source")
        if a and b and (how := code_difference(a, b)):
            out.append(f"{name} ({how})")
    return out


def code_difference(a: dict | None, b: dict | None) -> str | None:
    """How recorded source digest ``b`` differs from ``a``, or None: the file's SHA-256
    (``1111aaaa2222 -> 3333bbbb4444``, ``not recorded`` for a missing one), else the local
    imports whose digests differ, where both recorded their imports (``its imports a.b``), or
    that either side could not pin (``its imports a.b not pinned: cannot be verified``)."""
    sa, sb = (a or {}).get("sha256"), (b or {}).get("sha256")
    if not sa or not sb or sa != sb:
        return f"{(sa or 'not recorded')[:12]} -> {(sb or 'not recorded')[:12]}"
    if "imports" not in a or "imports" not in b:
        return None
    mine, theirs = _imports(a), _imports(b)
    # an import either run could not pin (sha256 null: bytecode or an extension alone, the walk
    # cut at MAX_IMPORTS) is "cannot be verified", never "unchanged": two nulls are not one code
    unpinned = sorted({str(m) for side in (mine, theirs) for m, d in side.items()
                            if not isinstance(d, str)})
    if unpinned:
        return f"its imports {', '.join(unpinned)} not pinned: cannot be verified"
    moved = sorted(m for m in set(mine) | set(theirs) if mine.get(m) != theirs.get(m))
    return f"its imports {', '.join(moved)}" if moved else None


def _imports(source: dict) -> dict:
    """{module: sha256} of a recorded source's ``imports`` (none recorded: empty)."""
    return {e.get("module"): e.get("sha256") for e in source.get("imports") or []
            if isinstance(e, dict)}


def undigested_code(old_fp: dict | None, new_fp: dict | None) -> list[str]:
    """External planners (``module:attr``) of either run with no source digest on one side or
    both: whether their code changed between the runs cannot be seen."""
    old_p, new_p = (old_fp or {}).get("planners", {}), (new_fp or {}).get("planners", {})
    return [name for name in sorted(set(old_p) | set(new_p)) if ":" in name and not all(
        ((side.get(name) or {}).get("source") or {}).get("sha256")
        for side in (old_p, new_p) if name in side)]
