"""Which planners exist, whether each can run here, and how to get one.

Built-in planners live in ``impls/offsets_planner/<name>_planner.py`` and export ``launch`` (the launcher of spec
section 3) and ``probe() -> Availability``. A name of the form ``module.path:attr`` resolves to any
external callable with the launcher's signature, upstream's own launcher included.

An external planner's module is never imported by :func:`availability` or :func:`source_digest`:
they ask a child process (``python -m impls.offsets_planner.probe NAME``, in a session of its own, killed with its
process group after ``timeout`` seconds), so that a module whose top level patches its importer,
hangs or ends the process does so to that child. Only :func:`get_planner` imports it, in the
process that calls the planner (the isolation worker).

What the probe prints is the module's own word (its top level runs there, and can rebind the
probe's functions or leave a process that prints after it): its availability, reason and mode are
taken from it as the module's self-description, but the source digest is never: this process
reads the module's file itself (:mod:`impls.source_file`).

The probe's parent side is :mod:`impls.offsets_planner.external_probe`, the import of an external
planner and the child's answer :mod:`impls.offsets_planner.external_planner`; their names are
importable from here too.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass

import torch

from impls.offsets_planner.contract import Launcher
from impls.offsets_planner.external_planner import (  # noqa: F401 (the registry's names)
    NO_DRIVER, _load_external, no_driver_hint, prepare_external_import, probe_external, triton_mode)
from impls.offsets_planner.external_probe import (  # noqa: F401 (the registry's names)
    _PROBED, PROBE_MARK, PROBE_READY, PROBE_STARTUP, PROBE_TIMEOUT, _finish_probe,
    _probe_external, _read_probe, _start_probe, probe_all)
from impls.source_imports import digest_with_imports as digest

__all__ = ["Availability", "BUILTIN_MODULES", "Launcher", "PlannerUnavailable", "UnknownPlanner",
           "availability", "bind", "builtin_module", "builtin_names", "chosen_planners",
           "default_device", "get_planner", "planners", "source_digest"]


@dataclass(frozen=True)
class Availability:
    """Whether a planner runs here.

    Attributes:
        available: True when :func:`get_planner` will return it.
        mode: how it runs here: ``cpu``, ``gpu``, ``interpreter`` (Triton's), ``simulator`` (Numba's
            CUDA simulator) or ``external`` (``external (triton interpreter)`` / ``external (triton
            compiled)`` for a module with Triton kernels); None when unavailable.
        device: the torch device type its tensors must live on (``cpu`` or ``cuda``).
        reason: why it is unavailable (None when available).
        fails: True when its cases must fail rather than be skipped (an external planner whose
            import did not finish in time: the planner's fault, never a reason to skip).
        signature: an external planner's signature faults, as its probe read them
            (:func:`impls.offsets_planner.external_planner.signature_faults`): every call will
            raise ``TypeError``; a hint printed before its cases run, never a verdict.
    """

    available: bool
    mode: str | None
    device: str
    reason: str | None = None
    fails: bool = False
    signature: tuple[str, ...] = ()


class PlannerUnavailable(RuntimeError):
    """The planner is known but cannot run here; the message says why."""


class UnknownPlanner(LookupError):
    """No built-in planner has this name and it is not an importable ``module:attr``."""


BUILTIN_MODULES: dict[str, str] = {
    "python": "impls.offsets_planner.python_planner",
    "triton": "impls.offsets_planner.triton_planner",
    "numba-cuda": "impls.offsets_planner.numba_cuda_planner",
    "triton-bound": "impls.offsets_planner.triton_bound_planner",
    "numba-cuda-bound": "impls.offsets_planner.numba_cuda_bound_planner",
}
"""Built-in planner name -> the module that exports its ``launch`` and ``probe``, in report order."""
_BUILTIN = BUILTIN_MODULES  # conformance/bench/modes.py still imports this name; remove with it


def builtin_names() -> tuple[str, ...]:
    """Names of the built-in planners, in report order."""
    return tuple(BUILTIN_MODULES)


def chosen_planners(given: list[str] | tuple[str, ...] | None) -> list[str]:
    """The planners a run covers: those ``given`` (``--planner``, repeatable), else every built-in
    one in report order. A name given twice counts once (its cases would share test ids)."""
    return list(dict.fromkeys(given)) if given else list(builtin_names())


def default_device() -> str:
    """``cuda`` when torch sees a CUDA device, else ``cpu``: where external planners get tensors."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def _import_builtin(name: str):
    """The planner's module, or the reason it cannot be imported (a string)."""
    module_name = BUILTIN_MODULES[name]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return f"module {module_name} is missing"
        return f"cannot import {module_name}: {exc}"
    except Exception as exc:  # a planner that fails to import is unavailable, never a crash
        return f"cannot import {module_name}: {type(exc).__name__}: {exc}"


def builtin_module(name: str):
    """The module of built-in planner ``name`` (``launch``, ``probe``, ``MODE``), imported.

    Raises:
        UnknownPlanner: ``name`` is not a built-in planner.
        PlannerUnavailable: its module cannot be imported here (the message says why).
    """
    if name not in BUILTIN_MODULES:
        raise UnknownPlanner(_unknown_message(name))
    module = _import_builtin(name)
    if isinstance(module, str):
        raise PlannerUnavailable(f"planner {name!r} is unavailable here: {module}")
    return module


def availability(name: str, timeout: float | None = None) -> Availability:
    """Availability of planner ``name`` (built-in or ``module:attr``) without raising.

    An external planner's mode is ``external``, or ``external (triton interpreter)`` /
    ``external (triton compiled)`` when its module defines Triton kernels (see
    :func:`triton_mode`). It is found by a child process (see the module docstring), once per
    name and process: ``timeout`` seconds for the import (default :data:`PROBE_TIMEOUT`; the
    first call's value counts), after which the planner is unavailable with ``fails`` set.
    """
    if ":" in name:
        return _probe_external(name, timeout)[0]
    if name not in BUILTIN_MODULES:
        return Availability(False, None, "cpu", _unknown_message(name))
    module = _import_builtin(name)
    if isinstance(module, str):
        return Availability(False, None, "cpu", module)
    probe = getattr(module, "probe", None)
    if probe is None:
        return Availability(True, module.MODE, "cpu")
    return probe()


def planners() -> list[tuple[str, Availability]]:
    """Every built-in planner, in report order, with its :class:`Availability` here."""
    return [(name, availability(name)) for name in BUILTIN_MODULES]


def _unknown_message(name: str) -> str:
    known = ", ".join(BUILTIN_MODULES)
    return f"unknown planner {name!r}: use one of {known}, or module.path:callable"


def get_planner(name: str) -> Launcher:
    """The launcher of planner ``name``: a built-in name or ``module.path:attr``.

    Raises:
        UnknownPlanner: the name is neither built in nor an importable callable.
        PlannerUnavailable: the planner is known but cannot run here (the message says why).
    """
    if ":" in name:
        return _load_external(name)
    if name not in BUILTIN_MODULES:
        raise UnknownPlanner(_unknown_message(name))
    a = availability(name)
    if not a.available:
        raise PlannerUnavailable(f"planner {name!r} is unavailable here: {a.reason}")
    return builtin_module(name).launch


def bind(planner, **buffer_set):
    """:func:`impls.offsets_planner.bound_plan.bind`: ``planner`` (a built-in name or module with
    ``launch_validated``) bound to a buffer set validated once, as a server's hot path calls it.
    Here so that a harness that reaches this package by role (the registry) binds without naming
    the module; imported on first use, so that importing the registry imports no more than before."""
    from impls.offsets_planner.bound_plan import bind as _bind

    return _bind(planner, **buffer_set)


PROBE_COMMAND: list[str] = [sys.executable, "-P", "-m", "impls.offsets_planner.probe"]
"""The command that probes an external planner (its name appended): :mod:`impls.offsets_planner.probe` in a child.
A harness may put a launcher of its own in front of it that runs the same probe in a sandbox (the
pytest plugin does: ``conformance.robustness.probe_sandbox``); it must print what the probe prints
and exit as it exits. ``-P``: the child's sys.path is the harness's (its PYTHONPATH), without its
working directory put first, so the module it imports is the file the harness digests
(:mod:`impls.source_file` searches the harness's sys.path)."""


def source_digest(name: str) -> dict | None:
    """Which code planner ``name`` is: its module, source file and the file's SHA-256, so that two
    runs of "the same" planner name can be told apart. ``file`` is relative to the folder the module
    was imported from (``impls/offsets_planner/triton_planner.py``), so that no machine's path lands in a results
    file. None when the module cannot be imported or has no source file. An external planner's
    file is found and read here, without importing it (:func:`impls.source_file.
    find_source`), once its probe has said it imports: never the digest the probe printed."""
    if ":" in name:
        return _probe_external(name, None)[1]
    module_name = BUILTIN_MODULES.get(name)
    if module_name is None:
        return None
    return _module_digest(module_name)


def _module_digest(module_name: str) -> dict | None:
    """The digest of an imported module's source file (a built-in planner's here; the probe's
    own, advisory, answer)."""
    try:
        path = inspect.getsourcefile(importlib.import_module(module_name))
    except Exception:  # unimportable or no file: nothing to identify
        return None
    return digest(module_name, path)
