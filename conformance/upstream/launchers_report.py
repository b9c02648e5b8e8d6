"""``launchers-LAUNCHER.md``: one release launcher judged on a subject's cases, from its JSON.

The verdict line says ``JUDGED`` with the counts by status and how many rows are declared,
undeclared or stale, or ``NOT JUDGED`` with the first step that failed. Every text that came from
the release or its child process (error messages, the first difference, the child's output) is
placed as a code span or a fenced block (:mod:`conformance.reporting.markdown`), never as
Markdown of its own.
"""

from __future__ import annotations

from collections import Counter

from conformance.reporting.markdown import code_span, fenced


def verdict(doc: dict) -> str:
    """The report's verdict line (module docstring), without emphasis."""
    if doc.get("layout_error"):
        return f"NOT JUDGED: the layout failed: {doc['layout_error']}"
    steps = doc.get("steps", [])
    failed = next((s for s in steps if s["status"] != "ok"), None)
    if failed is not None:
        return f"NOT JUDGED: step {failed['step']} failed: {(failed.get('error') or '')[:300]}"
    if not any(s["step"] == "judge" for s in steps):
        return f"NOT JUDGED: the child stopped before judging (exit {doc.get('child_exit')})"
    rows = doc.get("cases", [])
    counted = Counter(r["status"] for r in rows)
    counts = ", ".join(f"{n} {s}" for s, n in sorted(counted.items(), key=lambda kv: (kv[0] != "pass",
                                                                                   kv[0])))
    declared = sum(1 for r in rows if r.get("declared"))
    open_rows = sum(1 for r in rows if r.get("undeclared") or r.get("stale"))
    text = (f"{'GOOD' if doc.get('good') else 'NOT GOOD'}: JUDGED on {doc.get('device', '?')}: "
            f"{len(rows)} cases, {counts or 'none'} ({declared} declared, {open_rows} undeclared "
            "or stale)")
    if doc.get("manifest_error"):
        text += f"; the manifest cannot be read: {doc['manifest_error']}"
    return text


def _state(row: dict) -> str:
    for key, label in (("declared", "declared"), ("undeclared", "UNDECLARED"), ("stale", "STALE")):
        if row.get(key):
            return f"{label}: {code_span(str(row[key])[:300])}"
    return ""


def render(doc: dict) -> str:
    tree = doc.get("tree") or {}
    out = [f"# sglang {doc.get('release', '?')}: `{doc.get('launcher', '?')}` judged on "
           f"`{doc.get('subject', '?')}`", "", f"**{code_span(verdict(doc))}**", "",
           f"Command: {code_span(doc.get('command', ''))}", "",
           f"Contract: `{doc.get('spec', '?')}`; declarations: `{doc.get('manifest', '?')}`.", ""]
    if tree:
        py = sorted(p for p in tree.get("files", {}) if p.endswith(".py"))
        out += [f"Wheel `{tree.get('wheel')}` (SHA-256 `{tree.get('wheel_sha256')}`): "
                f"{len(py)} Python files byte for byte (RECORD-checked); stand-ins (ours): "
                + ", ".join(f"`{m}`" for m in tree.get("stand_ins", {})) + ".", ""]
    if doc.get("loaded"):
        out += ["Modules imported: " + ", ".join(f"{code_span(str(m))} ({code_span(str(how))})"
                                                 for m, how in doc["loaded"].items()), ""]
    out += ["| step | status | seconds |", "|---|---|---|"]
    out += [f"| {code_span(str(s['step']))} | {code_span(str(s['status']))} | "
            f"{code_span(str(s['seconds']))} |" for s in doc.get("steps", [])]
    out.append("")
    rows = doc.get("cases", [])
    if rows:
        out += ["GOOD: every case passed or is declared with its reason, none stale (exit 0). "
                "Statuses: `pass`; `differs (RULES)`: every difference decided by those project "
                "rules; `error-divergence`: an error case that raised another error (and wrote "
                "only what RULES in brackets decide); `unchecked`: an error case that raised "
                "nothing; `fail`, `oob`, `crashed`: never declarable.", "",
                "| case | status | declaration | first difference |", "|---|---|---|---|"]
        out += [f"| {code_span(str(r['id']))} | {code_span(str(r['status']))} | {_state(r)} | "
                f"{code_span(r.get('why') or 'every element equal') } |" for r in rows]
        out.append("")
    if doc.get("child_exit") not in (None, 0) and doc.get("tail"):
        out += [f"The child exited with {code_span(str(doc['child_exit']))}; its last output:", "",
                fenced(doc["tail"]), ""]
    return "\n".join(out)
