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
import os
import platform
import subprocess
import sys

import torch

from conformance.paths import INSTALLED, REPO_ROOT


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
        "cuda": str(torch.version.cuda),
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


def run_fingerprint(planner_names: list[str]) -> dict:
    """Where and on what the run happened: commit, host, GPU, versions, each planner's mode.

    Machine and library fields come from :func:`fingerprint`.
    """
    from impls.registry import availability, source_digest

    status = _git("status", "--porcelain", "--untracked-files=no")
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
    """For a ``module:attr`` planner loaded from a published release by ``python -m conformance
    upstream`` (its synthetic top package carries ``__planner_conformance__``, see
    :mod:`conformance.upstream.release_tree`): the release, the wheel and its SHA-256, the stand-ins,
    and every module file of that package this process loaded with its SHA-256 as read now,
    ``matches_record`` saying whether each wheel file equals the wheel's RECORD. None otherwise."""
    top = planner.partition(":")[0].split(".")[0]
    claimed = getattr(sys.modules.get(top), "__planner_conformance__", None)
    if not isinstance(claimed, dict):
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules[top].__file__)))
    loaded = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        name = getattr(module, "__name__", "")
        if not path or not (name == top or name.startswith(top + ".")):
            continue
        rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
        with open(path, "rb") as handle:
            loaded[rel] = hashlib.sha256(handle.read()).hexdigest()
    record = claimed.get("record", {})
    wheel_files = {p: d for p, d in loaded.items() if p in record}
    return {"release": claimed.get("release"), "wheel": claimed.get("wheel"),
            "wheel_sha256": claimed.get("wheel_sha256"), "stand_ins": claimed.get("stand_ins", {}),
            "synthetic_packages": claimed.get("synthetic_packages", []),
            "loaded": dict(sorted(loaded.items())),
            "matches_record": bool(wheel_files) and set(wheel_files) == set(record)
            and all(record[p] == d for p, d in wheel_files.items())}
