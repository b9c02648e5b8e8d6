"""An external planner (``module.path:attr``) imported in this process: the import itself
(:func:`_load_external`, for :func:`impls.offsets_planner.registry.get_planner` and the probe
child), how its Triton kernels were decorated (:func:`triton_mode`), and the probe child's answer
(:func:`probe_external`, printed by :mod:`impls.offsets_planner.probe`).

``UnknownPlanner`` and ``_module_digest`` are the registry's, read there at call time.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
import traceback

import torch

from impls.offsets_planner.contract import ARGUMENTS, Launcher
from impls.planner_path import PLANNER_PATH_ENV, add_to_this_process


def prepare_external_import() -> bool:
    """Before an external planner is imported: when torch sees no CUDA device and
    ``TRITON_INTERPRET`` is unset, set it to ``1``, so that a Triton kernel in the planner's module
    is decorated for Triton's interpreter (Triton reads the variable when ``@triton.jit`` runs)
    instead of failing every call with "0 active drivers". Returns whether it set the variable."""
    if torch.cuda.is_available() or "TRITON_INTERPRET" in os.environ:
        return False
    os.environ["TRITON_INTERPRET"] = "1"
    return True


def triton_mode(module) -> str | None:
    """``interpreter`` or ``compiled`` when ``module`` defines Triton kernels (``@triton.jit``,
    autotuned or not) at its top level, by how they were decorated; None when it defines none."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None
    kinds = set()
    for value in vars(module).values():
        for _ in range(3):  # Autotuner / Heuristics wrap the kernel in .fn
            if isinstance(value, InterpretedFunction):
                kinds.add("interpreter")
            elif isinstance(value, JITFunction):
                kinds.add("compiled")
            value = getattr(value, "fn", None) if type(value).__module__.startswith("triton") \
                else None
    return "interpreter" if "interpreter" in kinds else ("compiled" if kinds else None)


NO_DRIVER = "0 active drivers"
"""What Triton raises when it compiles a kernel on a machine without a GPU driver."""


def no_driver_hint() -> str:
    """What to do when a Triton kernel failed with :data:`NO_DRIVER`."""
    value = os.environ.get("TRITON_INTERPRET")
    return ("Triton found no GPU driver: on a machine without CUDA run Triton kernels under its "
            "interpreter with TRITON_INTERPRET=1 (the harness sets it for external planners when "
            f"it is unset; here it is {'unset' if value is None else repr(value)})")


def _did_you_mean(owner, before: list[str], part: str) -> str:
    """`` (did you mean 'NAME'?)`` for an attribute ``part`` that ``owner`` (reached by the dotted
    names ``before``) lacks: its public attribute closest to ``part`` by
    :func:`difflib.get_close_matches` (difflib's cutoff, 0.6), with ``before`` in front; ``""``
    when none is close. The harness's :mod:`conformance.corpus.close_match` says the same of a case
    id; ``impls/`` cannot import it."""
    try:
        names = [n for n in dir(owner) if isinstance(n, str) and not n.startswith("_")]
    except Exception:  # a module's __dir__ is its own code
        return ""
    close = difflib.get_close_matches(part, names, n=1)
    return f" (did you mean {'.'.join([*before, close[0]])!r}?)" if close else ""


def _raised_at(exc: BaseException) -> str:
    """`` (raised at FILE:LINE)``: the innermost frame of ``exc``'s traceback outside the import
    machinery (importlib, this file), where a module's import failed (a ``NameError`` on its line
    2, a library it imports); ``""`` when there is none (a module not found) or for a
    ``SyntaxError``, whose message already names the file and line."""
    if isinstance(exc, SyntaxError):
        return ""
    skip = {os.path.abspath(__file__), os.path.abspath(importlib.__file__)}
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<") and os.path.abspath(f.filename) not in skip]
    return f" (raised at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _load_external(name: str) -> Launcher:
    module_name, _, attr = name.partition(":")
    prepare_external_import()
    add_to_this_process()  # this process runs the planner's code anyway (bench, unisolated fuzz)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure is the user's module, report it plainly
        hint = (f" (is the folder that holds {module_name.split('.')[0]!r} in "
                f"{PLANNER_PATH_ENV}, or the package installed?)" if isinstance(exc, ModuleNotFoundError)
                and exc.name is not None and module_name.startswith(exc.name)
                and module_name.split(".")[0].isidentifier() else "")
        raise registry.UnknownPlanner(f"cannot import {module_name!r} for planner {name!r}: "
                             f"{type(exc).__name__}: {exc}{hint}{_raised_at(exc)}") from exc
    target = module
    parts = attr.split(".")
    for i, part in enumerate(parts):
        owner, target = target, getattr(target, part, None)
        if target is None:
            raise registry.UnknownPlanner(f"module {module_name!r} has no attribute {attr!r}"
                                          + _did_you_mean(owner, parts[:i], part))
    if not callable(target):
        raise registry.UnknownPlanner(f"{name!r} is not callable")
    return target



def signature_faults(launcher) -> list[str]:
    """What in ``launcher``'s signature makes every call fail: the harness calls it with each of
    spec section 3's arguments by keyword and nothing else, so ``"cannot take NAME"`` for each of
    them it has no parameter for (and no ``**kwargs``), ``"requires NAME"`` for each parameter
    without a default that is not one of them; [] when its signature cannot be read."""
    try:
        params = list(inspect.signature(launcher).parameters.values())
    except (TypeError, ValueError):  # a builtin or an object whose signature is hidden
        return []
    names = [a.name for a in ARGUMENTS]
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    faults = [] if any(p.kind is p.VAR_KEYWORD for p in params) else [
        f"cannot take {n}" for n in names if n not in named]
    return faults + [f"requires {p.name}" for p in params if p.name not in names
                     and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def probe_external(name: str) -> dict:
    """In the probe child: import external planner ``name``; its availability and source as a
    JSON-ready dict (``available``, ``mode``, ``reason``, ``source``, ``signature``: its
    :func:`signature_faults`; the harness reads the source's digest itself and ignores this one,
    which the module can rewrite)."""
    try:
        launcher = _load_external(name)
    except registry.UnknownPlanner as exc:
        return {"available": False, "mode": None, "reason": str(exc), "source": None}
    kind = triton_mode(importlib.import_module(name.partition(":")[0]))
    return {"available": True, "mode": f"external (triton {kind})" if kind else "external",
            "reason": None, "source": registry._module_digest(name.partition(":")[0]),
            "signature": signature_faults(launcher)}


from impls.offsets_planner import registry  # noqa: E402 (last: the registry imports this)
