"""The floors every planner figure is divided by; shared by the bench scripts.

A floor is the cheapest thing of its kind the framework can do, measured in the same run:

* ``empty-triton``: a Triton kernel with one pointer argument and one constexpr that does nothing
  (compiled on the GPU, Triton's interpreter on the CPU): the floor of the ``triton`` planner;
* ``empty-numba``: a ``numba.cuda.jit`` kernel with one int64 array argument that does nothing
  (compiled for ``void(int64[::1])`` on the GPU, Numba's simulator on the CPU): the floor of
  ``numba-cuda``. Eager: Numba's ordinary launch with a Numba device array (Numba's own
  launch cost); replay: launched on torch's current stream so that a torch CUDA graph captures it;
* ``torch-op``: ``x.add_(1)`` on a one-element tensor: the floor of ``python`` and external
  planners;
* ``chain-triton`` and ``chain-numba`` (:data:`CHAIN_FLOORS`): per bs, on the planner's own
  workload, the dependent loads a planner cannot avoid (three inputs, then the table entry, then
  the LUT entry, one store, no scan): the real limit of a plan's device time.

:func:`floor_call` returns ``(eager_fn, capturable_fn)``; each mode of the suite divides a planner's
figure by its floor's figure in the corresponding floor mode (:data:`FLOOR_MODE`).

Every function here is on the bench's watch list (:func:`conformance.bench.clocks.watch`, bound
before any planner is imported): a planner that rebinds one (``floor_call`` made to time extra
work, say, so that every floor after it is truly slower and its own ratio to the floor shrinks)
gets every figure after it refused, its own first.

The kernels of ``empty-triton``, ``empty-numba``, ``chain-triton`` and ``chain-numba`` live in
modules of this folder (:data:`KERNEL_MODULES`). A module is looked up by name in
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
The torch-op floor calls ``torch.Tensor.add_`` as captured at this module's import, and the name
is watched (:func:`floor_call`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import MappingProxyType, ModuleType

import torch

from conformance.bench import clocks

from conformance.corpus.corpus_subject import contract as _contract

OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES

FLOORS = ("empty-triton", "empty-numba", "torch-op")
FLOOR_OF_PLANNER = {"triton": "empty-triton", "numba-cuda": "empty-numba", "python": "torch-op",
                    "triton-bound": "empty-triton", "numba-cuda-bound": "empty-numba"}
"""Which floor a planner is compared with; any other planner (``module:attr``) gets torch-op."""
CHAIN_FLOORS = ("chain-triton", "chain-numba")
"""Dependent-load chain kernels, one per framework, timed per bs on the planner's workload: per
lane the three inputs, then the table entry, then the LUT entry, one store, no scan (the work a
planner cannot avoid)."""
CHAIN_OF_PLANNER = {"triton": "chain-triton", "triton-bound": "chain-triton",
                    "numba-cuda": "chain-numba", "numba-cuda-bound": "chain-numba"}
CHAIN_PLANNER = {"chain-triton": "triton", "chain-numba": "numba-cuda"}
"""The planner whose mode (device, interpreter or simulator) a chain floor runs in."""
FLOOR_MODE = {"eager": "eager", "launch": "launch", "validate": "eager", "replay": "replay"}
"""A planner mode -> the floor mode it is divided by (validation has no kernel: the eager floor)."""
FLOOR_MODES = ("eager", "launch", "replay")


def floor_of(planner: str) -> str:
    """The floor name for ``planner`` (:data:`FLOOR_OF_PLANNER`, else ``torch-op``)."""
    return FLOOR_OF_PLANNER.get(planner, "torch-op")


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


CHAIN_BLOCK = 512
"""Lanes per program (Triton) or threads per block (Numba) of a chain kernel whose shape was not
chosen (:func:`best_chain_shape`: without a GPU, and in the eager and launch modes' first call)."""
POINTERS = "pointers"
"""A Numba chain shape's second value for the raw-pointer kernel
(:data:`conformance.bench.chain_numba.chain_pointer_kernel`); None: Numba arrays."""
CHAIN_SHAPES = MappingProxyType({
    "chain-triton": ((32, 1), (64, 1), (128, 4), (256, 4), (512, 8)),
    "chain-numba": ((32, None), (64, None), (128, None), (256, None), (512, None),
                    (32, POINTERS), (64, POINTERS), (128, POINTERS))})
"""Launch shapes a chain floor tries on the GPU, per framework: ``(lanes per program, num_warps)``
for Triton, ``(threads per block, None or POINTERS)`` for Numba (array or raw-pointer
parameters). The fastest at each bs on the H200 was among them in the one-pass sweep
(reports/gpu/2026-12-02-c/one_pass.md; the pointer kernel: reports/gpu/2026-12-04-b/). Read-only
(a planner cannot drop the fastest shapes in place) and watched."""
SHAPE_TRIAL_REPLAYS = 20
"""Replays per sample when a chain floor's shapes are tried (:func:`best_chain_shape`)."""


def launch_shape_text(triton: bool, block: int, warps: int | str | None = None) -> str:
    """A launch shape as the bench tables print it: ``BLOCK 128, 4 warps`` (Triton: lanes per
    program and num_warps) or ``256 threads`` (Numba: threads per block; ``256 threads,
    pointers`` for the raw-pointer chain kernel)."""
    if triton:
        return f"BLOCK {block}, {warps} warps"
    return f"{block} threads" + (f", {POINTERS}" if warps == POINTERS else "")


def shape_label(name: str, shape: tuple[int, int | None]) -> str:
    """:func:`launch_shape_text` of chain floor ``name``'s shape."""
    return launch_shape_text(name == "chain-triton", *shape)


def best_chain_shape(name: str, kw: dict) -> tuple[tuple[int, int | None], dict[str, float]]:
    """The fastest of :data:`CHAIN_SHAPES` for chain floor ``name`` on ``kw``, by replay device
    time (us per plan, one chain per CUDA graph, p50 of 5 samples), and every shape's figure
    ``{shape_label: us}``. Without CUDA tensors: ``((CHAIN_BLOCK, 4 or None), {})``, untried.
    A floor chosen as the fastest of several shapes is the lowest one the bench can claim: every
    ratio to it is the strictest of those shapes'."""
    default = (CHAIN_BLOCK, 4 if name == "chain-triton" else None)
    if kw[REQUEST_INPUT_NAMES[0]].device.type != "cuda":
        return default, {}
    from conformance.bench import timing

    trials = {}
    for shape in CHAIN_SHAPES[name]:
        _eager, capturable = chain_call(name, kw, shape)
        trials[shape] = timing.graph_replay_time(capturable, replays=SHAPE_TRIAL_REPLAYS,
                                                 repeats=5).median
    best = min(trials, key=trials.get)
    return best, {shape_label(name, s): round(us, 3) for s, us in trials.items()}


def empty_triton_kernel():
    """The empty Triton kernel (:mod:`conformance.bench.empty_triton`, as
    :func:`kernel_module` bound it)."""
    return kernel_module("empty-triton").empty_kernel


def empty_numba_kernel():
    """The empty Numba kernel (:mod:`conformance.bench.empty_numba`, as :func:`kernel_module`
    bound it: compiled at its import on the GPU, on its first launch in the simulator)."""
    return kernel_module("empty-numba").empty_kernel


Call = Callable[[], object]


def floor_call(name: str, device: torch.device, _add=torch.Tensor.add_) -> tuple[Call, Call]:
    """``(eager, capturable)`` zero-argument calls of floor ``name`` on ``device``.

    ``capturable`` is the variant a torch CUDA graph can capture (on torch's current stream);
    for Triton and torch it is the eager call itself. ``torch-op`` calls ``x.add_(1)`` through
    ``_add``, the real ``torch.Tensor.add_`` captured when this module is imported (before any
    planner is): a planner that rebinds ``torch.Tensor.add_`` does not reach the floor (and the
    name is watched: the rebinding refuses every figure after it).
    """
    if name == "torch-op":
        x = torch.ones(1, device=device)
        fn = lambda: _add(x, 1)  # noqa: E731
        return fn, fn
    if name == "empty-triton":
        kernel, marker = empty_triton_kernel(), torch.zeros(1, device=device)
        fn = lambda: kernel[(1,)](marker, BLOCK=32)  # noqa: E731
        return fn, fn
    if name == "empty-numba":
        from numba import cuda

        kernel = empty_numba_kernel()
        if device.type != "cuda":
            host = torch.zeros(4, dtype=torch.int64).numpy()
            fn = lambda: kernel[1, 32](host)  # noqa: E731
            return fn, fn
        dev_array = cuda.device_array(4, dtype="int64")

        def on_torch_stream():
            stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
            kernel[1, 32, stream](dev_array)

        return (lambda: kernel[1, 32](dev_array)), on_torch_stream
    raise ValueError(f"unknown floor {name!r}: use one of {', '.join(FLOORS)}")


SEEDS_NAME = OUTPUT_NAMES[2]
"""``out_write_seed_slot_indices``: where a chain kernel writes its one value per lane."""


def _named(kw: dict, names: tuple[str, ...]) -> list:
    return [kw[n] for n in names]


def chain_call(name: str, kw: dict, shape: tuple[int, int | None] | None = None
               ) -> tuple[Call, Call]:
    """``(eager, capturable)`` calls of chain floor ``name`` on the launcher arguments ``kw``
    (reads its request tensors, table and LUT; writes ``out_write_seed_slot_indices[:bs]``), in
    launch shape ``shape`` (:data:`CHAIN_SHAPES`; default ``CHAIN_BLOCK`` lanes, 4 warps)."""
    block, warps = shape or (CHAIN_BLOCK, 4)
    rpi, prefix, extend = _named(kw, REQUEST_INPUT_NAMES)
    table, lut = _named(kw, TABLE_INPUT_NAMES)
    bs, out = int(rpi.shape[0]), kw[SEEDS_NAME]
    lut_len = 0 if lut is None else int(lut.shape[0])
    lut = lut if lut is not None else torch.zeros(1, dtype=torch.int64, device=rpi.device)
    grid = max(1, -(-bs // block))
    if name == "chain-triton":
        chain_kernel = kernel_module(name).chain_kernel
        args = (rpi, prefix, extend, table, lut, out, bs,
                table.stride(0), table.shape[0], table.shape[1], lut_len)
        fn = lambda: chain_kernel[(grid,)](*args, BLOCK=block, HAS_LUT=lut_len > 0,  # noqa: E731
                                           num_warps=warps)
        return fn, fn
    if name == "chain-numba":
        return _numba_chain_call(rpi, prefix, extend, table, lut, out, bs, lut_len, grid, block,
                                 warps == POINTERS)
    raise ValueError(f"unknown chain floor {name!r}: use one of {', '.join(CHAIN_FLOORS)}")


def _numba_chain_call(rpi, prefix, extend, table, lut, out, bs: int, lut_len: int, grid: int,
                      block: int, pointers: bool) -> tuple[Call, Call]:
    """:func:`chain_call` of ``chain-numba``: the array kernel, or with ``pointers`` the
    raw-pointer one (the table C-contiguous, as spec section 4 requires)."""
    chain_numba = kernel_module("chain-numba")
    from numba import cuda

    tensors = (rpi, prefix, extend, table.reshape(-1) if pointers else table, lut, out)
    kernel = chain_numba.chain_pointer_kernel if pointers else chain_numba.chain_kernel
    shape = (int(table.shape[0]), int(table.shape[1])) if pointers else ()
    if rpi.device.type != "cuda":
        arrays = [t.numpy() for t in tensors]
        fn = lambda: kernel[grid, block](*arrays, bs, lut_len, *shape)  # noqa: E731
        return fn, fn
    args = ([t.data_ptr() for t in tensors] if pointers
            else [cuda.as_cuda_array(t, sync=False) for t in tensors])

    def on_torch_stream():
        stream = cuda.external_stream(torch.cuda.current_stream().cuda_stream)
        kernel[grid, block, stream](*args, bs, lut_len, *shape)

    return on_torch_stream, on_torch_stream


clocks.watch(sys.modules[__name__], "floor_of", "floor_call", "chain_call", "best_chain_shape",
             "empty_triton_kernel", "empty_numba_kernel", "launch_shape_text", "shape_label",
             "_named", "_numba_chain_call", "POINTERS", "CHAIN_SHAPES", "CHAIN_BLOCK",
             "CHAIN_FLOORS", "SEEDS_NAME", "FLOOR_OF_PLANNER", "FLOOR_MODE", "CHAIN_OF_PLANNER",
             "CHAIN_PLANNER", "KERNEL_MODULES", "kernel_module", "bind_kernels", "_bind", "_BOUND",
             "_BENCH_DIR")
clocks.watch(torch, "Tensor.add_")  # what the torch-op floor stands for: its rebinding refused
