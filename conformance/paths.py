"""Where things are: the repository's folders and the default files, written once.

Two layouts, the same names:

* a checkout (or an editable install, ``pip install -e .``): the corpus (one folder per subject),
  the results schema and the spec sit at the repository root (``cases/``, ``reports/``,
  ``docs/spec/``);
* an installed wheel: they are package data under ``conformance/data/`` (``setup.py`` maps them
  there), found with :mod:`importlib.resources`.

What a run writes (results, reports, benchmark JSON, found cases) goes under :data:`OUTPUT_ROOT`:
the checkout, or from an installed wheel the current directory, never the installed package.

A leaf module: it imports nothing from the harness, so every folder of :mod:`conformance` may use it.
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
"""The :mod:`conformance` package folder (in a checkout, ``<repo>/conformance``)."""
REPO_ROOT = PACKAGE_DIR.parent
"""The checkout root: ``cases/``, ``reports/`` and ``conformance/`` sit below it. In an installed
wheel, the folder that holds the package (``site-packages``)."""
PACKAGED_DATA = Path(str(files("conformance") / "data")).resolve()
"""The package data of an installed wheel: ``cases/``, ``reports/``, ``spec/`` (see ``setup.py``)."""
INSTALLED = PACKAGED_DATA.is_dir()
"""Whether this is an installed wheel (the data travel with the code), not a checkout."""
FROM_ELSEWHERE = INSTALLED or Path.cwd().resolve() != PACKAGE_DIR.parent.resolve()
"""Whether this process started outside the checkout's root (an installed wheel, or an editable
install run with ``python -P -m pytest --pyargs conformance`` from the planner's own folder): the
commands it prints then name the corpus by ``--pyargs`` and its files by absolute paths (taken at
import, before anything changes the working directory)."""
DATA_ROOT = PACKAGED_DATA if INSTALLED else REPO_ROOT
"""Where the corpus and the schemas are read from."""
CASES_ROOT = DATA_ROOT / "cases"
"""The corpus root: one folder per subject (named as the subject), each with the README of its
case format (``cases/README.md``). The corpus engine's own folders and schemas are
:mod:`conformance.corpus.corpus_subject`'s."""
DIVERGENCES_DIRNAME = "divergences"
"""The folder of a corpus (``cases/<subject>/divergences/``) that holds known-divergence
manifests, not cases."""
RESULTS_SCHEMA_PATH = DATA_ROOT / "reports" / "results.schema.json"
"""JSON Schema of a results file (``reports/README.md``)."""

OUTPUT_ROOT = Path() if INSTALLED else REPO_ROOT
"""Where a run's files go: the checkout (absolute paths below); from an installed wheel ``Path()``
(relative paths below, to the current directory when they are used)."""
RESULTS_RELPATH = Path("reports/out/results.json")
"""Default results file of a ``pytest conformance/`` run, relative to pytest's rootdir in a checkout,
else to the directory pytest was started in (:mod:`conformance.plugin.results_writer`)."""
DEFAULT_RESULTS = OUTPUT_ROOT / RESULTS_RELPATH
"""That file: what ``python -m conformance report`` reads by default."""
DEFAULT_REPORT_HTML = OUTPUT_ROOT / "reports" / "report.html"
"""Where ``python -m conformance report`` writes its page by default."""
DEFAULT_COMPARE_HTML = OUTPUT_ROOT / "reports" / "compare.html"
"""Where ``python -m conformance report --compare`` writes its page by default."""
GENERATED_ROOT = OUTPUT_ROOT / "reports" / "out"
"""Generated output (ignored by git): a command may replace what it finds here, never files
elsewhere (:func:`kept_files`)."""
DEFAULT_BENCH_JSON = GENERATED_ROOT / "bench.json"
"""Where ``python -m conformance bench`` writes pytest-benchmark's JSON by default."""
BENCH_DIR = PACKAGE_DIR / "bench"
"""The benchmark suite's folder (opt-in: collected only when named)."""


def kept_files(paths) -> list[Path]:
    """Those of ``paths`` that exist outside :data:`GENERATED_ROOT`, in the order given: files a
    command refuses to write over (committed evidence, a page someone reviewed), so that a re-run
    never silently replaces what was read. Paths are compared resolved (``..`` and links), and
    each is taken for the file it names once the command has made its folders: ``..`` past a
    folder that does not exist yet (``reports/out/upstream/../../upstream``) names the folder
    before it, as it will when that folder is made. A link counts as what it names, even one that
    names nothing yet (writing through it would create that file); a file with another hard link
    is kept wherever it lies (writing into it writes that other name's bytes); and when
    :data:`GENERATED_ROOT` is itself a link (to the committed evidence, say) nothing counts as
    generated."""
    root = Path(GENERATED_ROOT)
    generated = None if root.is_symlink() else root.resolve()
    kept = []
    for path in map(Path, paths):
        target = path.resolve()
        if not (os.path.lexists(path) or os.path.lexists(target)):
            continue
        inside = generated is not None and target.is_relative_to(generated)
        try:
            linked = target.is_file() and target.stat().st_nlink > 1
        except OSError:
            linked = True
        if not inside or linked:
            kept.append(path)
    return kept

COMMITTED_EVIDENCE = ("reports/upstream", "reports/gpu")
"""Folders of a checkout that hold committed, reviewed evidence (upstream's releases judged, the
GPU runs): no command writes into them (:func:`committed_evidence`); new evidence is written
under ``reports/out/`` and copied in by hand."""


def committed_evidence(path: Path) -> str | None:
    """The committed evidence folder (:data:`COMMITTED_EVIDENCE`, relative) that ``path`` lies in
    (links resolved), or None; always None for an installed wheel, which has none."""
    if INSTALLED:
        return None
    resolved = Path(path).resolve()
    for folder in COMMITTED_EVIDENCE:
        if resolved.is_relative_to((REPO_ROOT / folder).resolve()):
            return folder
    return None


def evidence_fault(option: str, path: Path) -> str | None:
    """``OPTION PATH: is inside ...`` when ``path`` lies in committed evidence, else None."""
    folder = committed_evidence(path)
    if folder is None:
        return None
    return (f"{option} {path}: is inside the committed evidence folder {folder}/, which no "
            "command writes: write under reports/out/ and copy what you reviewed")


def new_file_fault(option: str, path: Path) -> str | None:
    """Why a command that writes only new files (a repro script, a manifest draft) must not
    write ``path``: inside committed evidence, or already there (a link too, dangling or not):
    a file someone kept is never replaced. None when it may be created."""
    fault = evidence_fault(option, path)
    if fault is None and os.path.lexists(path):
        fault = (f"{option} {path}: exists; a file you keep is never overwritten (remove it or "
                 "choose another path)")
    return fault


def write_new(path: Path, text: str) -> None:
    """Create ``path`` (and its folder) with ``text``, failing if anything appeared there since
    :func:`new_file_fault` looked (exclusive create: never through a link, never over a file).

    Raises:
        FileExistsError: something is there now.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as handle:
        handle.write(text)

