"""``python -m conformance report --publish DIR``: the page and the files it was made from, written
into a folder to serve (``index.html``, ``results.json``, ``bench.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.paths import evidence_fault
from conformance.reporting.file_text import read_file_text
from conformance.reporting.report_files import is_report_file
from conformance.reporting.results_format import write_json_atomic, write_text_atomic


class PublishError(OSError):
    """A ``--publish`` folder that is, or holds, a symlink where a file would be written."""


def publish(directory: Path, results: Path, html: str, bench: Path | None = None) -> list[Path]:
    """Write ``index.html``, ``results.json`` (and ``bench.json``) into ``directory``, each
    world-readable (0644 under the usual umask) and each by an atomic replace.

    Raises:
        PublishError: ``directory`` or one of those names in it is a symlink: nothing is written
            through a link (a published page must land where the folder is, not where a link
            points); ``directory`` lies in committed evidence; or a file there is not one a
            publish wrote (an ``index.html`` without :data:`~conformance.reporting.report_files.
            GENERATOR`, a ``results.json`` that is not a results file, a ``bench.json`` that is
            not a benchmark file): nothing a user keeps is replaced.
    """
    names = ["index.html", "results.json", *(["bench.json"] if bench is not None else [])]
    links = [p for p in (directory, *(directory / n for n in names)) if p.is_symlink()]
    if links:
        raise PublishError(f"--publish {directory}: {links[0]} is a symlink; nothing is written "
                           "through a link")
    fault = evidence_fault("--publish", directory)
    if fault:
        raise PublishError(fault)
    for name, ours in (("index.html", is_report_file), ("results.json", _holds('"format"')),
                       ("bench.json", _holds('"benchmarks"'))):
        if name in names and (directory / name).exists() and not ours(directory / name):
            raise PublishError(f"--publish {directory}: its {name} is not one a publish wrote; "
                               "nothing a user keeps is replaced (name a new folder)")
    directory.mkdir(parents=True, exist_ok=True)
    write_text_atomic(directory / "index.html", html)
    write_json_atomic(directory / "results.json", json.loads(read_file_text(results)))
    if bench is not None:
        write_text_atomic(directory / "bench.json", read_file_text(bench))
    return [directory / n for n in names]


def _holds(word: str):
    """A check that a file's first 4 KiB hold ``word`` (a results or benchmark JSON key)."""

    def check(path: Path) -> bool:
        try:
            with path.open("rb") as handle:
                return word in handle.read(4096).decode("utf-8", "replace")
        except OSError:
            return False

    return check

