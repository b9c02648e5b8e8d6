"""The floors' kernel modules, bound once: the modules of this folder that hold the kernels of
``empty-triton``, ``empty-numba``, ``chain-triton`` and ``chain-numba`` (:data:`KERNEL_MODULES`;
the floors themselves: :mod:`conformance.bench.floors`).

A module is looked up by name in
``sys.modules``, where a planner imported before the bench's first import of it could have put
one of its own (a slower floor, whose seeds are still right), so the bench binds each module once
(:func:`bind_kernels`, at collection, before any planner is imported), refuses one that is not
its own file (:class:`FloorModuleError`), and from then on calls the kernels of the module it
bound alone (:func:`kernel_module`); the ``sys.modules`` entry and the binding are watched
(:func:`conformance.bench.clocks.watch_entry`): a module replaced there later gets every figure
after it refused, as a rebound name does. Each module puts its kernels' names and the kernel
objects' own state on the watch list at its import
(:func:`conformance.bench.kernel_modes.watch_kernels`): a kernel slowed through its state (a
Triton pre-run hook, an instance ``run`` or ``call``) while its name still holds it is seen too.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import MappingProxyType, ModuleType

from conformance.bench import clocks

KERNEL_MODULES = MappingProxyType({"empty-triton": "conformance.bench.empty_triton",
                                   "empty-numba": "conformance.bench.empty_numba",
                                   "chain-triton": "conformance.bench.chain_triton",
                                   "chain-numba": "conformance.bench.chain_numba"})
"""Floor -> the module of its kernels, a file of this folder named as the module's last part
(read-only and watched)."""
_BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
_BOUND: dict[str, ModuleType] = {}
"""Floor -> its kernel module as :func:`kernel_module` bound it (each entry watched)."""
_MODULE_DICT = ModuleType.__dict__["__dict__"]


class FloorModuleError(RuntimeError):
    """A floor's kernel module in ``sys.modules`` is not the bench's own file: a module put there
    under its name before the bench imported it. No figure of that floor is measured."""


def kernel_module(floor: str) -> ModuleType:
    """The module of floor ``floor``'s kernels (:data:`KERNEL_MODULES`) as the bench bound it:
    imported and checked on its first use (:func:`bind_kernels` makes that use come at
    collection), the same module object on every later call whatever ``sys.modules`` holds then.

    Raises:
        KeyError: ``floor`` has no kernel module of its own.
        FloorModuleError: the module the import gives is not the bench's own file.
        ImportError: the module cannot be imported (its framework is missing).
    """
    module = _BOUND.get(floor)
    return module if module is not None else _bind(floor)


def bind_kernels(names: Iterable[str]) -> list[str]:
    """Bind the kernel module of every floor of ``names`` that has one (:func:`kernel_module`), in
    order; returns the floors bound. The bench calls it at collection for the floors of the run's
    planners, before any planner is imported. A module that cannot be imported is left unbound
    (its floor's test fails on its first use, as the import fails there).

    Raises:
        FloorModuleError: a module the import gives is not the bench's own file.
    """
    bound = []
    for name in names:
        if name in KERNEL_MODULES:
            try:
                kernel_module(name)
            except ImportError:
                continue
            bound.append(name)
    return bound


def _bind(floor: str) -> ModuleType:
    """:func:`kernel_module`'s first use: import, check (an exact module whose spec and
    ``__file__`` name this folder's file of its name, and whose kernels are on the watch list,
    which its last statement puts them on), then record and watch."""
    name = KERNEL_MODULES[floor]
    file = os.path.join(_BENCH_DIR, name.rpartition(".")[2] + ".py")
    module = importlib.import_module(name)
    names = _MODULE_DICT.__get__(module) if type(module) is ModuleType else {}
    spec = names.get("__spec__")
    origin = spec.origin if type(spec) is ModuleSpec else None
    if not (type(spec) is ModuleSpec and spec.name == name and origin == file
            and names.get("__file__") == file and clocks.watches(module)):
        rel = Path(file).relative_to(Path(_BENCH_DIR).parent.parent).as_posix()
        raise FloorModuleError(
            f"floor {floor}: sys.modules[{name!r}] is not the bench's own {rel} (its spec names "
            f"{origin!r}): a module put there before the bench imported it; no figure of this "
            "floor is measured")
    _BOUND[floor] = module
    clocks.watch_entry(f"sys.modules[{name!r}]", sys.modules, name)
    clocks.watch_entry(f"{__name__}._BOUND[{floor!r}]", _BOUND, floor)
    return module


def empty_triton_kernel():
    """The empty Triton kernel (:mod:`conformance.bench.empty_triton`, as
    :func:`kernel_module` bound it)."""
    return kernel_module("empty-triton").empty_kernel


def empty_numba_kernel():
    """The empty Numba kernel (:mod:`conformance.bench.empty_numba`, as :func:`kernel_module`
    bound it: compiled at its import on the GPU, on its first launch in the simulator)."""
    return kernel_module("empty-numba").empty_kernel


clocks.watch(sys.modules[__name__], "KERNEL_MODULES", "kernel_module", "bind_kernels", "_bind",
             "_BOUND", "_BENCH_DIR", "empty_triton_kernel", "empty_numba_kernel")
