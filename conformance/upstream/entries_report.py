"""``entries-build.md``: what the ``upstream-entries`` command did, rendered from its JSON.

The verdict line says one of: ``BUILT AND JUDGED`` (every variant built here for this GPU, the
cases and batches ran), ``BUILT, NOT JUDGED`` or ``NOT BUILT`` with the first failing step and its
error. A step that did not run reads ``not run``; nothing is reported as passed that did not run.
The cases' and the manifest's folders are the subject's (``cases/NAME/``). Nothing here names a
subject.
"""

from __future__ import annotations

from collections import Counter

from conformance.corpus.subjects import case_folder
from conformance.paths import CASES_ROOT, DIVERGENCES_DIRNAME, REPO_ROOT
from conformance.upstream.entry_subject import entry_subject


def _verdict(doc: dict) -> str:
    text = _build_verdict(doc)
    gpu = (doc.get("toolchain") or {}).get("gpu") if isinstance(doc.get("toolchain"), dict) else None
    if gpu and gpu.startswith("none"):
        text += f" (no GPU here: {gpu})"
    cross = [s for s in doc.get("steps", []) if s["step"].startswith("compile-for ")]
    if cross:
        ok = sum(s["status"] == "ok" for s in cross)
        target = cross[0]["step"].split()[1]
        text += (f". Compile-only for {target} (sglang's override_jit_cuda_arch; never launched, "
                 f"judges nothing): {ok} of {len(cross)} variants compiled and loaded")
    return text


def _build_verdict(doc: dict) -> str:
    if doc.get("layout_error"):
        return f"NOT BUILT: the layout failed: {doc['layout_error']}"
    steps = doc.get("steps", [])
    builds = [s for s in steps if s["step"].startswith("build ")]
    failed = next((s for s in builds if s["status"] == "failed"),
                  next((s for s in steps if s["status"] == "failed"), None))
    if not builds or any(s["status"] != "ok" for s in builds):
        if failed is not None:
            return f"NOT BUILT: step `{failed['step']}` failed: {_first_line(failed.get('error'))}"
        return f"NOT BUILT: the child stopped before building ({doc.get('child_exit', 'no exit code')})"
    judge = next((s for s in steps if s["step"] == "judge"), None)
    if judge is None or judge["status"] != "ok":
        why = judge.get("error") if judge else f"the child stopped ({doc.get('child_exit')})"
        return f"BUILT, NOT JUDGED: {why}"
    return "BUILT AND JUDGED on this GPU: " + _counts(doc)


def _counts(doc: dict) -> str:
    rows = doc.get("cases", []) + doc.get("hazards", [])
    counts = Counter(r["status"] for r in rows)
    text = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no cases"
    undeclared = sum(1 for r in rows if r.get("undeclared") or r.get("stale"))
    declared = sum(1 for r in rows if r.get("declared"))
    if rows:
        text += f" ({declared} declared, {undeclared} undeclared or stale)"
    rnd = doc.get("random")
    if rnd:
        text += f"; random batches: {rnd['passed']} of {rnd['batches']} equal"
    return text


def _first_line(text) -> str:
    """The error's first line and, when a later line says what failed (nvcc's ``fatal``, the
    linker's ``cannot find``, a compiler ``error:``), that line too."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    marker = next((ln for ln in lines[1:] if any(m in ln for m in (
        "fatal", "error:", "cannot find", "No module named", "Error"))), None)
    return (lines[0][:200] + (f" ... {marker[:200]}" if marker else ""))


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")[:400]


def _case_detail(row: dict) -> str:
    parts = [row.get("why") or "every element equal"]
    if row.get("child_exit"):
        parts.append(f"child exit {row['child_exit']}: {row.get('child_tail', '')}")
    if row.get("note"):
        parts.append(row["note"])
    return _cell("; ".join(parts))


def _declared(row: dict) -> str:
    if row.get("declared"):
        return _cell(f"declared: {row['declared']}")
    if row.get("undeclared"):
        return _cell(f"**undeclared**: {row['undeclared']}")
    if row.get("stale"):
        return _cell(f"**stale**: {row['stale']}")
    return ""


def _folder(subject) -> str:
    """The subject's case folder as the page names it: from the repository root when inside it."""
    folder = case_folder(subject, CASES_ROOT)
    return folder.relative_to(REPO_ROOT).as_posix() if folder.is_relative_to(REPO_ROOT) else str(folder)


def render(doc: dict, subject=None) -> str:
    """The page of ``doc``, judged on ``subject`` (a one-call subject module; default the one
    subject with ``UPSTREAM_ENTRY``)."""
    tree = doc.get("tree") or {}
    out = [f"# sglang {doc.get('release', '?')}: the entries kernel built from the wheel", "",
           f"**{_verdict(doc)}**", "", f"Command: `{doc.get('command', '')}`", ""]
    if tree:
        py = sorted(p for p in tree["files"] if p.endswith(".py"))
        data = len(tree["files"]) - len(py)
        out += ["## What was loaded", "",
                f"Wheel `{tree['wheel']}` (SHA-256 `{tree['wheel_sha256']}`); launcher "
                f"`{tree['module']}:{tree['launcher']}`. Byte for byte from the wheel (RECORD-checked): "
                f"{len(py)} Python files ({', '.join(f'`{p}`' for p in py)}) and {data} other files "
                "(the JIT package's `include/`, `csrc/kv_canary/`, METADATA).", "",
                "**Stand-in (ours, not sglang's):** " + "; ".join(
                    f"`{m}`: {why}" for m, why in tree["stand_ins"].items()), "",
                "Empty parent packages of ours: " + ", ".join(f"`{p}`" for p in tree["synthetic_packages"]),
                "", "Imports left out (conditional or in a function, not on this build's path): "
                + ("; ".join(f"`{x}`" for x in tree["not_laid_out"]) or "none"), "",
                "Outside sglang: " + ", ".join(f"`{x}`" for x in tree["environment"]), ""]
    if doc.get("tree_check"):
        out += [f"**Tree check failed**: {', '.join(doc['tree_check'])}", ""]
    if doc.get("loaded"):
        out += ["Modules imported: " + ", ".join(f"`{m}` ({how})" for m, how in doc["loaded"].items()), ""]
    if isinstance(doc.get("toolchain"), dict):
        out += ["## Toolchain found here (`sglang ...` rows: what sglang's own resolvers chose)", "", "| what | value |", "|---|---|"]
        out += [f"| {k} | {_cell(v)} |" for k, v in doc["toolchain"].items()]
        out.append("")
    out += ["## Steps", "", "| step | status | seconds | error |", "|---|---|---|---|"]
    for s in doc.get("steps", []):
        out.append(f"| {s['step']} | {s['status']} | {s['seconds']} | {_cell(_first_line(s.get('error')))} |")
    if doc.get("child_exit") not in (None, 0):
        out.append(f"\nThe child exited with {doc['child_exit']}.")
    out.append("")
    for s in doc.get("steps", []):
        if s.get("error") and "\n" in str(s["error"]):
            out += [f"### `{s['step']}`: full error", "", "```", str(s["error"]).strip(), "```", ""]
    if doc.get("warnings"):
        out += ["sglang's warnings: " + "; ".join(f"`{w}`" for w in sorted(set(doc["warnings"]))), ""]
    rows = doc.get("cases", []) + doc.get("hazards", [])
    if rows:
        subject = entry_subject(subject)
        folder = _folder(subject)
        out += [f"## Cases (`{folder}/{getattr(subject, 'CASE_GLOB', '*')}`)", "",
                "Hazard cases (upstream reads outside a tensor or traps there, spec section 6) ran "
                "each in a process of their own; a read outside a tensor is not observable without "
                "compute-sanitizer, so such a case's values are what the stray read returned.", "",
                f"Declarations: `{folder}/{DIVERGENCES_DIRNAME}/sglang-RELEASE.json`; every case "
                "that did not pass must be declared there with its reason.", "",
                "| case | pins | status | declared | first difference |", "|---|---|---|---|---|"]
        out += [f"| {r['id']} | {r.get('pins') or ''} | {r['status']} | {_declared(r)} | "
                f"{_case_detail(r)} |" for r in rows]
        out.append("")
    if doc.get("random"):
        rnd = doc["random"]
        out += ["## Random in-contract batches (bs 1..4096, windows, LUT, pool, offsets, gates)", "",
                f"{rnd['passed']} of {rnd['batches']} batches equal in every element (the tail too), "
                f"{rnd['failed']} differ."]
        out += [f"- {_cell(f)}" for f in rnd.get("failures", [])]
        out.append("")
    return "\n".join(out)
