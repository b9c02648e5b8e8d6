"""Known-divergence manifests: what a planner is known to do differently, case by case.

A manifest (``cases/<subject>/divergences/*.json``, schema
``cases/<subject>/divergences/schema.json``) names a planner by fnmatch pattern and lists
expected divergences, each by case id or by tag, with the spec section it breaks or differs from, a
reason, an optional issue URL and the status(es) expected (``fail``, ``crash``, ``oob``), and
optionally the releases it applies to: ``releases`` (a PEP 440 specifier such as ``">=0.5.15"``) of
the manifest's ``distribution``, whose version is the one ``importlib.metadata`` finds (an installed
sglang, or the wheel's METADATA that ``python -m conformance upstream`` lays out). A divergence
outside its range does not apply; one inside it that passes is an unexpected pass, whose message
names the range and the release. The manifests in a corpus's ``divergences/`` folder apply by
themselves to the planners they name; ``--manifest PATH`` adds one kept elsewhere. A malformed
manifest is a fault (:class:`conformance.corpus.case_file.CaseFileError`, shown as a ``[load]`` item),
never a crash.
"""

from __future__ import annotations

import fnmatch
import sys
import importlib.metadata
import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import jsonschema
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.corpus.case_file import CaseFileError, display_path
from conformance.paths import DIVERGENCES_DIRNAME
from conformance.corpus.corpus_subject import DIVERGENCES_SCHEMA_PATH
from impls.source_file import planner_folders

DECLARABLE = ("fail", "crash", "oob")
"""Statuses a divergence may declare (the schema's enum)."""
FAULT_DETECTORS = ("guard pages",)
"""What lets a run see a fault-only divergence (:attr:`Divergence.fault_only`): an isolated
worker's guard pages, which fence every CPU input to the byte
(:mod:`conformance.robustness.guard_pages`). compute-sanitizer's memcheck is not one: the
harness's CUDA inputs reach a sanitized worker through CUDA IPC, in allocations with slack, and a
read just past a tensor lands in that slack unseen (upstream 0.5.23's read past the table in
``hazard-zero-extend-past-table`` passed under memcheck on an H100, ``reports/gpu/2026-12-06-e/``)."""


@dataclass(frozen=True)
class Divergence:
    """One expected divergence of a manifest.

    Attributes:
        case: the case id it applies to, or None when ``tag`` selects.
        tag: every case with this tag, or None.
        section: spec section broken or differed from (``"5"``, ``"6"``).
        reason: why (``"upstream bug"``, the section-6 row).
        issue: public bug report URL, or None.
        statuses: the outcomes expected, any of :data:`DECLARABLE`.
        manifest: the file it comes from; ``json_path`` where in it.
        releases: PEP 440 specifier of ``distribution``'s releases it applies to, or None (all).
        distribution: the distribution ``releases`` is about (the manifest's), or None.
        fault_only: the divergence shows only as a fault (the entry's ``"shows_as": "fault"``):
            a read just outside a tensor whose value the planner throws away, which only a run
            that detects faults can see (:data:`FAULT_DETECTORS`).
    """

    case: str | None
    tag: str | None
    section: str
    reason: str
    issue: str | None
    statuses: tuple[str, ...]
    manifest: Path
    json_path: str
    releases: str | None = None
    distribution: str | None = None
    fault_only: bool = False

    def applies(self, case_id: str, tags: tuple[str, ...] | list[str]) -> bool:
        if self.releases is not None and not in_releases(self.distribution, self.releases):
            return False
        return self.case == case_id if self.case is not None else self.tag in tags

    def describe(self) -> str:
        """One line: section, reason, issue, and for a release range the release that ran."""
        text = f"spec §{self.section}: {self.reason}" + (f" ({self.issue})" if self.issue else "")
        if self.releases is not None:
            text += (f" [declared for {self.distribution} {self.releases}; this run: "
                     f"{self.distribution} {installed_release(self.distribution)}]")
        return text


def installed_release(distribution: str) -> str | None:
    """The version of ``distribution`` that ``importlib.metadata`` finds on sys.path, then in the
    planner folders (``$CONFORMANCE_PLANNER_PATH``, where ``python -m conformance upstream`` lays
    a release out; metadata is read, nothing imported), or None."""
    for found in importlib.metadata.distributions(name=distribution,
                                                  path=[*sys.path, *planner_folders()]):
        return found.version
    return None


def in_releases(distribution: str, releases: str) -> bool:
    """Whether the release of ``distribution`` found here is in the specifier ``releases``
    (pre-releases included); False when none is found or its version does not parse."""
    found = installed_release(distribution)
    try:
        return found is not None and SpecifierSet(releases).contains(Version(found), prereleases=True)
    except InvalidVersion:
        return False


@dataclass(frozen=True)
class Manifest:
    """A loaded manifest: its planner pattern and divergences (case ids before tags)."""

    path: Path
    planner: str
    description: str
    divergences: tuple[Divergence, ...]
    sources: frozenset[str] | None = None
    scope: Path | None = None
    """The case folder whose ``divergences/`` holds it (resolved): it declares only the cases
    loaded from that folder, so that a folder added with ``--extra-cases`` never excuses another
    folder's (the corpus's) failures; None for a ``--manifest`` file (the runner's own choice)."""

    def covers(self, case_path: Path | None) -> bool:
        """Whether a case loaded from ``case_path`` (None: unknown) is one this manifest may
        declare (see :attr:`scope`)."""
        return self.scope is None or (case_path is not None
                                      and Path(case_path).resolve().is_relative_to(self.scope))

    def names(self, planner: str, source: dict | None = None) -> bool:
        """Whether this manifest is about ``planner``: its name matches the pattern and, where
        the manifest lists ``sources``, the planner's code is code it lists: the SHA-256 of its
        module file and of every local module it imports (``source``: the digest the harness
        computed itself, :func:`impls.source_imports.digest_with_imports`, never the planner's
        word) are each one of them. A divergence is declared for the code it was reviewed
        against, not for a module of a matching name, nor for that file beside another kernel."""
        if not fnmatch.fnmatchcase(planner, self.planner):
            return False
        if self.sources is None:
            return True
        files = [source or {}, *((source or {}).get("imports") or [])]
        return all(isinstance(f, dict) and f.get("sha256") in self.sources for f in files)


@cache
def _validator() -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(json.loads(DIVERGENCES_SCHEMA_PATH.read_text()))


def load_manifest(path: Path) -> tuple[Manifest | None, CaseFileError | None]:
    """Read and check one manifest. Returns (manifest, None) or (None, the fault)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, CaseFileError(path, f"line {exc.lineno} column {exc.colno}",
                                   f"malformed JSON: {exc.msg}")
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, CaseFileError(path, "$", f"cannot read manifest: {type(exc).__name__}")
    except OSError as exc:
        return None, CaseFileError(path, "$", f"cannot read manifest: {exc.strerror}")
    try:
        error = jsonschema.exceptions.best_match(_validator().iter_errors(doc))
    except RecursionError:
        return None, CaseFileError(path, "$", "manifest nested too deeply to check")
    if error is not None:
        while error.context:
            error = jsonschema.exceptions.best_match(error.context)
        return None, CaseFileError(path, error.json_path, f"manifest: {error.message}")
    entries = []
    distribution = doc.get("distribution")
    for i, d in enumerate(doc["divergences"]):
        status, releases = d["status"], d.get("releases")
        if releases is not None:
            if distribution is None:
                return None, CaseFileError(path, f"$.divergences[{i}].releases",
                                           "manifest: releases needs the manifest's distribution")
            try:
                SpecifierSet(releases)
            except InvalidSpecifier:
                return None, CaseFileError(path, f"$.divergences[{i}].releases",
                                           f"manifest: {releases!r} is not a PEP 440 specifier")
        entries.append(Divergence(d.get("case"), d.get("tag"), d["section"], d["reason"],
                                  d.get("issue"), (status,) if isinstance(status, str)
                                  else tuple(status), Path(path), f"$.divergences[{i}]",
                                  releases, distribution if releases is not None else None,
                                  d.get("shows_as") == "fault"))
    entries.sort(key=lambda d: d.case is None)  # a case id wins over a tag
    sources = frozenset(doc["sources"]) if "sources" in doc else None
    return Manifest(Path(path), doc["planner"], doc["description"], tuple(entries), sources), None


def manifest_files(cases_dir: Path) -> list[Path]:
    """The manifests kept in ``cases_dir``'s ``divergences/`` folder (schema excluded), sorted."""
    folder = Path(cases_dir) / DIVERGENCES_DIRNAME
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if p.name != "schema.json")


def load_manifests(cases_dirs: list[Path], extra: list[Path] = ()
                   ) -> tuple[list[Manifest], list[CaseFileError]]:
    """Every manifest beside the corpora in ``cases_dirs`` plus the ``extra`` files.

    Returns:
        (manifests, faults); a missing ``extra`` file is a fault.
    """
    manifests, faults = [], []
    scoped = {p.resolve(): Path(d).resolve() for d in cases_dirs for p in manifest_files(d)}
    paths = [*scoped, *(Path(p).resolve() for p in extra)]
    for path in dict.fromkeys(paths):
        manifest, fault = load_manifest(path)
        if fault is not None:
            faults.append(fault)
        else:
            manifests.append(replace(manifest, scope=scoped.get(path)))
    return manifests, faults


def unknown_cases(manifests: list[Manifest], case_ids: dict[str, Path]) -> list[CaseFileError]:
    """A fault for each divergence naming a case id the corpus does not hold (a typo would
    otherwise declare nothing), or, in a case folder's manifest, a case of another folder (which
    it cannot declare: :attr:`Manifest.scope`). ``case_ids``: every loaded case's id and file."""
    faults = []
    for m in manifests:
        for d in m.divergences:
            if d.case is None:
                continue
            if d.case not in case_ids:
                why = "which no loaded case has"
            elif not m.covers(case_ids[d.case]):
                why = (f"a case of another folder ({display_path(case_ids[d.case])}): a manifest "
                       "in a case folder declares only that folder's cases (--manifest PATH "
                       "applies one kept elsewhere)")
            else:
                continue
            faults.append(CaseFileError(d.manifest, d.json_path + ".case",
                                        f"manifest names case {d.case!r}, {why}", d.case))
    return faults


def find_divergence(manifests: list[Manifest], planner: str, case_id: str,
                    tags: tuple[str, ...] | list[str],
                    source: dict | None = None, case_path: Path | None = None
                    ) -> Divergence | None:
    """The first divergence declared for ``case_id`` (loaded from ``case_path``) on ``planner``
    whose code is ``source`` (:meth:`Manifest.names`; by id before by tag), from a manifest that
    may declare that case (:meth:`Manifest.covers`)."""
    found = [d for m in manifests if m.names(planner, source) and m.covers(case_path)
             for d in m.divergences if d.applies(case_id, tags)]
    found.sort(key=lambda d: d.case is None)
    return found[0] if found else None
