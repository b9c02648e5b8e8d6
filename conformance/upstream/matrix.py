"""The matrix across releases: ``OUT/matrix.md``, one column per release.

What each release is (wheel SHA-256, files loaded, stand-ins), the status counts of its launcher's
row, its divergence profile (spec section 6, :mod:`conformance.reporting.divergence_profile`), and
what changed between neighbouring releases (oldest first): cases whose status changed (a divergence
fixed or new), cases whose message changed with the same status, and the kernel's files whose
bytes changed (compared by their path inside the kernel package, which moved in 0.5.20). A release
that could not be judged (no wheel, no offsets kernel, another signature) gets its column with the
reason. Text from a results file (messages, planner names) is untrusted: code spans only.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from packaging.version import InvalidVersion, Version
from tabulate import tabulate

from conformance.reporting.divergence_profile import profile
from conformance.reporting.markdown import code_span
from conformance.reporting.results_format import ResultsError, load_results
from conformance.upstream.release_tree import KERNEL_PACKAGES

MATRIX_NAME = "matrix.md"
STATUS_ORDER = ("pass", "fail", "crash", "timeout", "oob", "declared", "xpass", "differs",
                "not-wrapper", "skip", "xfail", "error")


def _order(release: str):
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def _kernel_relative(path: str) -> str:
    for package in KERNEL_PACKAGES:
        if path.startswith(package + "/"):
            return path[len(package) + 1:]
    return path


def _column(run) -> dict:
    """What the page needs of one release: its launcher's results, or why there are none."""
    col = {"release": run.release, "problem": run.problem, "results": [], "files": {}}
    if run.problem is None and run.results is not None:
        try:
            doc = load_results(run.results)
        except ResultsError as exc:
            col["problem"] = f"results unreadable: {exc}"
            return col
        planner = run.tree.planner
        col["results"] = [r for r in doc["results"] if r["planner"] == planner]
        col["complete"] = doc.get("complete")
        upstream = doc["fingerprint"]["planners"].get(planner, {}).get("upstream") or {}
        col["wheel_sha256"] = upstream.get("wheel_sha256")
        col["matches_record"] = upstream.get("matches_record")
        col["stand_ins"] = sorted(upstream.get("stand_ins", {}))
        col["files"] = {_kernel_relative(p): d for p, d in run.tree.files.items()}
        col["paths"] = {p: _kernel_relative(p) for p in run.tree.files}
        col["site"] = run.tree.site
        col["planner"] = planner
    return col


def _same_message(a: dict, b: dict, old: dict, new: dict) -> bool:
    """Whether two results' messages say the same once what names the release is set aside: the
    rerun line (it carries the release's folder), the planner's module path and the release."""
    def norm(result, col):
        lines = [ln for ln in (result.get("message") or "").splitlines()
                 if not ln.lstrip().startswith("rerun:")]
        text = "\n".join(lines).replace(col["planner"], "<launcher>")
        text = text.replace(col["planner"].rpartition(".plan.")[0], "<package>")
        package = col["planner"].rpartition(".plan.")[0]
        text = text.replace(str(col["site"]), "<site>").replace(package.replace(".", "/"), "<package>")
        return text.replace(f"sglang {col['release']}", "sglang <release>")
    return norm(a, old) == norm(b, new)


def _file_change(name: str, old: dict, new: dict) -> str:
    """How a kernel file changed: new, gone, only the package path in its imports, or its bytes."""
    if name not in old["files"]:
        return "new"
    if name not in new["files"]:
        return "gone"
    texts = []
    for col in (old, new):
        package = next(p for p in col["paths"] if col["paths"][p] == name)
        text = (col["site"] / package).read_text(encoding="utf-8", errors="replace")
        texts.append(text.replace(col["planner"].rpartition(".plan.")[0], "<package>"))
    return ("bytes changed: only the kernel package's path in its imports" if texts[0] == texts[1]
            else "bytes changed")


def _changes(old: dict, new: dict) -> list[str]:
    if old["problem"] or new["problem"]:
        return ["not comparable: " + "; ".join(f"{c['release']} not judged" for c in (old, new)
                                                if c["problem"])]
    lines = []
    before = {r["case"]: r for r in old["results"]}
    after = {r["case"]: r for r in new["results"]}
    for case in sorted(set(before) | set(after)):
        a, b = before.get(case), after.get(case)
        if a is None or b is None:
            lines.append(f"{code_span(case)}: {'only in ' + new['release'] if a is None else 'gone in ' + new['release']}")
        elif a["status"] != b["status"]:
            lines.append(f"{code_span(case)}: {a['status']} -> {b['status']}")
        elif a.get("observed") != b.get("observed"):
            lines.append(f"{code_span(case)}: {b['status']}, observed {a.get('observed')} -> "
                         f"{b.get('observed')}")
        elif not _same_message(a, b, old, new):
            lines.append(f"{code_span(case)}: {b['status']}, message changed")
    for name in sorted(set(old["files"]) | set(new["files"])):
        if old["files"].get(name) != new["files"].get(name):
            lines.append(f"kernel file `{name}`: {_file_change(name, old, new)}")
    return lines or ["no case changed status or message; the kernel's files are byte-identical"]


def render_matrix(runs) -> str:
    """The matrix page as Markdown, from :class:`conformance.upstream.run_release.ReleaseRun` s."""
    cols = [_column(r) for r in sorted(runs, key=lambda r: _order(r.release))]
    heads = [c["release"] for c in cols]
    out = ["# sglang releases: the offsets launcher against the corpus", "",
           "Built by `python -m conformance upstream " + " ".join(heads) + "` (each release's "
           "wheel from the package index, its kernel loaded unchanged; per release: "
           + ", ".join(f"[`{h}/`]({h}/summary.md)" for h in heads if not
                       next(c for c in cols if c["release"] == h)["problem"]) + ").", ""]
    info = [["judged", *["no: " + c["problem"] if c["problem"] else "yes" for c in cols]],
            ["wheel SHA-256", *[(c.get("wheel_sha256") or "-")[:16] + "..." if not c["problem"]
                                else "-" for c in cols]],
            ["loaded files match RECORD", *[{True: "yes", False: "NO"}.get(c.get("matches_record"), "-")
                                            for c in cols]],
            ["stand-ins", *[", ".join(c.get("stand_ins", [])) or "-" for c in cols]],
            ["launcher module", *[code_span(c["planner"].partition(":")[0]) if c.get("planner")
                                  else "-" for c in cols]]]
    out += [tabulate(info, headers=["", *heads], tablefmt="github"), "", "## Status counts", ""]
    counts = [Counter(r["status"] for r in c["results"]) for c in cols]
    statuses = [s for s in STATUS_ORDER if any(n[s] for n in counts)]
    statuses += sorted({s for n in counts for s in n} - set(statuses))
    table = [[s, *[n[s] if not c["problem"] else "-" for n, c in zip(counts, cols)]] for s in statuses]
    table.append(["total", *[sum(n.values()) if not c["problem"] else "-" for n, c in zip(counts, cols)]])
    out += [tabulate(table, headers=["status", *heads], tablefmt="github"), "",
            "## Divergence profile (spec section 6)", ""]
    rows = {}
    for c in cols:
        if c["problem"] or not c["results"]:
            continue
        for row in profile(c["results"])["rows"]:
            rows.setdefault(row["situation"], {"project": row["project"]})[c["release"]] = \
                row["cells"].get(c["planner"], "-")
    out += [tabulate([[s, r["project"], *[r.get(h, "-") for h in heads]] for s, r in rows.items()],
                     headers=["situation", "this project", *heads], tablefmt="github"), "",
            "Cells of rows whose read lands outside the table (a stray value, a guard-zone fill, a "
            "segfault) can differ from run to run on the same release: compare their totals.", "",
            "## What changed between neighbours", "",
            "A case's status, or its message once the release's own names (module path, folder, "
            "version) are set aside; a kernel file's bytes.", ""]
    for old, new in zip(cols, cols[1:]):
        out.append(f"### {old['release']} -> {new['release']}")
        out.append("")
        out += [f"- {line}" for line in _changes(old, new)]
        out.append("")
    return "\n".join(out)


def write_matrix(runs, out_dir: Path) -> Path:
    """Write :func:`render_matrix` to ``out_dir/matrix.md``; returns the path."""
    path = Path(out_dir) / MATRIX_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_matrix(runs) + "\n")
    return path
