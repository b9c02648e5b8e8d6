"""Which planners' code differs between two runs (``python -m conformance report --compare``), by
the source digests their fingerprints recorded (:mod:`impls.source_imports`)."""

from __future__ import annotations

__all__ = ["changed_code", "undigested_code"]


def changed_code(old_fp: dict | None, new_fp: dict | None) -> list[str]:
    """Planners present in both runs whose source file differs (by SHA-256): "name (old -> new)";
    or, their files alike, whose local imports differ where both runs recorded them: "name (its
    imports a.b, a.c)"."""
    old_p, new_p = (old_fp or {}).get("planners", {}), (new_fp or {}).get("planners", {})
    out = []
    for name in sorted(set(old_p) & set(new_p)):
        a, b = old_p[name].get("source"), new_p[name].get("source")
        if a and b and a["sha256"] != b["sha256"]:
            out.append(f"{name} ({a['sha256'][:12]} -> {b['sha256'][:12]})")
        elif a and b and "imports" in a and "imports" in b and _imports(a) != _imports(b):
            moved = sorted(m for m in set(_imports(a)) | set(_imports(b))
                           if _imports(a).get(m) != _imports(b).get(m))
            out.append(f"{name} (its imports {', '.join(moved)})")
    return out


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
