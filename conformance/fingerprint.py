"""Where a run or a measurement happened: GPU, driver, CUDA, library versions, date, and for a
conformance run the commit, host and each planner's mode and source digest.

A leaf module, used by the results writer (:mod:`conformance.plugin.results_writer`) and by the
benchmark suite (:mod:`conformance.bench.plugin`).
"""

from __future__ import annotations

import datetime
import hashlib
import importlib
import importlib.metadata
import json
import os
import platform
import subprocess

import torch

from conformance.paths import INSTALLED, REPO_ROOT
from impls.planner_path import find_planner_source

PROVENANCE_ATTR = "__planner_conformance__"
"""Attribute of the synthetic top package (``sglang/__init__.py``) naming release, wheel and stand-ins;
:func:`run_fingerprint` reads it from that file as text (it is a JSON literal), copies it into the
results and hashes the tree's files of the wheel's RECORD."""


def _version(module: str) -> str:
    """The installed version of ``module``'s distribution, read from its metadata: importing
    triton or numba.cuda here would fix their mode (interpreter, simulator) before the planners
    choose it, so nothing is imported unless the metadata is missing."""
    try:
        return importlib.metadata.version(module.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        return str(importlib.import_module(module).__version__)
    except Exception as exc:  # not installed, or broken: say so rather than fail a benchmark
        return f"n/a ({type(exc).__name__})"


def _driver_version() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True)
        return out.stdout.strip().splitlines()[0]
    except Exception as exc:
        return f"n/a ({type(exc).__name__})"


def fingerprint() -> dict[str, str]:
    """Where a measurement was taken: GPU name, driver, CUDA, library versions, date (UTC)."""
    cuda = torch.cuda.is_available()
    return {
        "gpu": torch.cuda.get_device_name() if cuda else "none (CPU only)",
        "driver": _driver_version() if cuda else "n/a",
        "cuda": torch.version.cuda or "n/a",  # the CUDA torch was built for; a CPU build has none
        "torch": torch.__version__,
        "triton": _version("triton"),
        "numba": _version("numba"),
        "numba_cuda": _version("numba_cuda"),
        "numpy": _version("numpy"),
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def fingerprint_text() -> str:
    """:func:`fingerprint` as one line, ``key=value`` pairs, for report headers."""
    return ", ".join(f"{k}={v}" for k, v in fingerprint().items())



def _git(*args: str) -> str | None:
    if INSTALLED:  # site-packages is no checkout of the harness (it may sit inside another one)
        return None
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=10, check=True)
        return out.stdout.strip()
    except Exception:  # not a git checkout, or no git: the fingerprint says unknown
        return None


def head_commit() -> str | None:
    """The commit this checkout is at (``git rev-parse HEAD``), None outside a git checkout."""
    return _git("rev-parse", "HEAD")


def run_fingerprint(planner_names: list[str], availability, source_digest) -> dict:
    """Where and on what the run happened: commit, host, GPU, versions, each planner's mode.

    ``availability(name)`` (an object with ``mode``, ``available``, ``reason``) and
    ``source_digest(name)`` come from the subject's planner registry. Machine and library fields
    come from :func:`fingerprint`.
    """
    status = _git("status", "--porcelain")  # untracked files too: a new case file changes the run
    planners = {}
    for name in planner_names:
        a = availability(name)
        planners[name] = {"available": a.available, "mode": a.mode, "device": a.device,
                          "reason": a.reason, "source": source_digest(name)}
        loaded = upstream_release(name) if a.available else None
        if loaded is not None:
            planners[name]["upstream"] = loaded
    return {
        **fingerprint(),
        "commit": head_commit(),
        "dirty": None if status is None else bool(status),
        "host": platform.node(),
        "platform": platform.platform(),
        "planners": planners,
    }


def upstream_release(planner: str) -> dict | None:
    """For a ``module:attr`` planner laid out from a published release by ``python -m conformance
    upstream`` (its synthetic top package's ``__init__.py`` assigns :data:`PROVENANCE_ATTR` a
    JSON literal, see :mod:`conformance.upstream.release_tree`): the release, the wheel and its
    SHA-256, the stand-ins, every file of the wheel's RECORD found in that tree with its SHA-256 as
    read now (``loaded``), and ``matches_record``: whether each of them equals the RECORD. None
    otherwise.

    Nothing is imported: the planner's code runs only in isolation children, so the top package
    is found as a planner's child finds it (:func:`impls.planner_path.find_planner_source`:
    ``sys.path``, then the planner folders; nothing executed) and its ``__init__.py`` is read as
    text."""
    top = planner.partition(":")[0].split(".")[0]
    origin = find_planner_source(top)[0] if top.isidentifier() else None
    if not origin or not origin.endswith("__init__.py"):
        return None
    claimed = _claimed_provenance(origin)
    if claimed is None:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(origin)))
    record = claimed.get("record", {})
    loaded = {}
    for rel in sorted(record):
        path = os.path.join(root, *rel.split("/"))
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                loaded[rel] = hashlib.sha256(handle.read()).hexdigest()
    return {"release": claimed.get("release"), "wheel": claimed.get("wheel"),
            "wheel_sha256": claimed.get("wheel_sha256"), "stand_ins": claimed.get("stand_ins", {}),
            "synthetic_packages": claimed.get("synthetic_packages", []),
            "loaded": loaded,
            "matches_record": bool(record) and set(loaded) == set(record)
            and all(record[p] == d for p, d in loaded.items())}


def _claimed_provenance(init_path: str) -> dict | None:
    """The dict a laid-out release's ``__init__.py`` assigns to :data:`PROVENANCE_ATTR` (a
    JSON literal after ``NAME = ``), None when the file has no such line or it is not JSON."""
    try:
        with open(init_path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    marker = f"{PROVENANCE_ATTR} = "
    start = text.find(marker)
    if start < 0:
        return None
    try:
        claimed, _ = json.JSONDecoder().raw_decode(text, start + len(marker))
    except ValueError:
        return None
    return claimed if isinstance(claimed, dict) else None
