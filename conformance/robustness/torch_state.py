"""Process-global torch state a planner must leave as it found it.

A launcher that sets the default device, dtype, grad mode or a determinism flag changes every
later tensor op of the process it runs in: in a server, the model's; in the harness, the next
case's and the next planner's. :func:`snapshot` reads each setting; :func:`changes` names what
differs; :func:`restore` puts the old values back (in-process runs), while the isolation worker is
replaced instead (:mod:`conformance.robustness.isolation`).

Also checked: the ``TorchFunctionMode`` / ``TorchDispatchMode`` stacks (a mode left pushed answers
every later op, ``torch.equal`` included), the CPU and CUDA RNG states (a planner that draws
random numbers shifts every later draw of its caller), autocast, the current CUDA device and stream,
and the bindings of ``torch``'s, ``torch.Tensor``'s and ``torch.nn.functional``'s public callables
(a planner that rebinds ``torch.equal`` changes what every later caller computes; one that
rebinds ``F.softmax``, what every later model does). CUDA settings are read only once CUDA is
initialised (reading them must not initialise it). The getters and setters torch has no plain
pair for: :mod:`conformance.robustness.torch_settings`.

Beyond torch, what a server's own computation on the calling thread and in its process depends
on (tests/test_hostile14.py): the thread's floating-point environment (rounding mode, subnormals
flushed: ``torch.set_flush_denormal``, ``fesetround``), read on the thread that calls the planner,
whether Python's cyclic garbage collector runs and its thresholds (``gc.set_threshold(0)`` stops
it too), the Python profile and trace hooks (tests/test_hostile15.py), the working directory (a
server's relative paths)
and every signal's Python handler (how a server stops: ``SIGTERM`` ignored, ``SIGINT`` swallowed;
set back only from the main thread; :mod:`conformance.robustness.process_state`), the umask,
the resource limits, the states of Python's ``random`` and numpy's global generator and the
bindings of ``builtins`` (tests/test_hostile16.py); the interpreter's limits, the error hooks, the
standard streams, ``logging.disable``, the default socket timeout, the signal mask, the interval
timers, the bindings of ``random`` and ``numpy.random``, the warnings filters and ``sys.modules``
(:mod:`conformance.robustness.process_settings`, tests/test_hostile17.py); ``os.environ`` and the
import system (``sys.path``, ``sys.meta_path``, ``sys.path_hooks``, ``sys.path_importer_cache``):
:mod:`conformance.robustness.import_state` (tests/test_hostile18.py) says which of their changes
are a library's own (a variable added by a module's first import, a folder appended) and no
change. Of ``sys.modules`` only a module replaced or removed is a change. Code the process runs
later (``gc.callbacks``, ``atexit``, the warnings and display hooks), its child processes, the
locale, ``decimal``'s context, ``logging``'s configuration and the signal wakeup descriptor:
:mod:`conformance.robustness.runtime_state`; torch's other backend flags: :data:`BACKEND_FLAGS`
(tests/test_hostile19.py).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable

import torch
import torch.utils.deterministic  # noqa: F401 - fill_uninitialized_memory

from conformance.robustness import import_state, process_settings, runtime_state

from conformance.robustness.process_state import (
    builtins_bindings,
    builtins_rebound,
    float_env,
    gc_thresholds,
    handlers,
    handlers_changed,
    hooks_changed,
    numpy_state,
    python_hooks,
    random_state,
    rlimits,
    rlimits_changed,
    set_builtins_bindings,
    set_float_env,
    set_gc,
    set_gc_thresholds,
    set_handlers,
    set_numpy_state,
    set_python_hooks,
    set_random_state,
    set_rlimits,
    set_umask,
    umask,
)
from conformance.robustness.torch_settings import (
    autocast,
    bindings,
    cuda_rng,
    cuda_stream,
    cudnn_flag,
    default_device,
    pop_to,
    rebound,
    rng_state,
    set_bindings,
    set_cuda_rng,
    set_cuda_stream,
    set_default_device,
    set_deterministic,
)

SIGNALS = "signal handlers"
"""The setting of every signal's Python handler (its change is named by signal)."""
HOOKS = "Python profile and trace hooks"
"""The setting of the profile and trace hooks (its change is named by hook)."""
RLIMITS = "resource limits"
"""The setting of every resource limit (its change is named by limit, with both values)."""
BUILTINS = "builtins bindings"
"""The setting of every name of ``builtins`` (its change is named by name)."""


_CUDA = torch.backends.cuda
BACKEND_FLAGS = {
    "scaled dot product attention backends (flash, mem-efficient, math, cudnn)": (
        lambda: (_CUDA.flash_sdp_enabled(), _CUDA.mem_efficient_sdp_enabled(),
                 _CUDA.math_sdp_enabled(), _CUDA.cudnn_sdp_enabled()),
        lambda v: (_CUDA.enable_flash_sdp(v[0]), _CUDA.enable_mem_efficient_sdp(v[1]),
                   _CUDA.enable_math_sdp(v[2]), _CUDA.enable_cudnn_sdp(v[3]))),
    "cuda matmul reduced-precision reductions (fp16, bf16)": (
        lambda: (_CUDA.matmul.allow_fp16_reduced_precision_reduction,
                 _CUDA.matmul.allow_bf16_reduced_precision_reduction),
        lambda v: (setattr(_CUDA.matmul, "allow_fp16_reduced_precision_reduction", v[0]),
                   setattr(_CUDA.matmul, "allow_bf16_reduced_precision_reduction", v[1]))),
    "preferred linalg library": (
        lambda: str(_CUDA.preferred_linalg_library()),
        lambda v: _CUDA.preferred_linalg_library(v.split(".")[-1].lower())),
    "opt_einsum (enabled, strategy)": (
        lambda: (torch.backends.opt_einsum.enabled, torch.backends.opt_einsum.strategy),
        lambda v: (setattr(torch.backends.opt_einsum, "enabled", v[0]),
                   setattr(torch.backends.opt_einsum, "strategy", v[1]))),
    "nn.MultiheadAttention fast path": (torch.backends.mha.get_fastpath_enabled,
                                        torch.backends.mha.set_fastpath_enabled),
    "inter-op threads": (torch.get_num_interop_threads, None),
}
"""torch's backend flags beyond matmul precision and cuDNN's (tests/test_hostile19.py): which
kernels ``F.scaled_dot_product_attention`` may pick (all off: the caller's attention raises),
fp16 / bf16 GEMMs' reduced-precision reductions (its model's numerics), the linear-algebra
library, ``torch.einsum``'s contraction order, the ``MultiheadAttention`` fast path and the
inter-op thread count (set once per process: read only)."""


SETTINGS: dict[str, tuple[Callable[[], object], Callable[[object], None]]] = {
    "default device": (default_device, set_default_device),
    "default dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "grad mode": (torch.is_grad_enabled, torch.set_grad_enabled),
    "inference mode": (torch.is_inference_mode_enabled, None),
    "deterministic algorithms": (
        lambda: (torch.are_deterministic_algorithms_enabled(),
                 torch.is_deterministic_algorithms_warn_only_enabled()), set_deterministic),
    "anomaly detection": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    "float32 matmul precision": (torch.get_float32_matmul_precision,
                                 torch.set_float32_matmul_precision),
    "cuda matmul allow_tf32": (lambda: torch.backends.cuda.matmul.allow_tf32,
                               lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
    "cudnn enabled": cudnn_flag("enabled"),
    "cudnn deterministic": cudnn_flag("deterministic"),
    "cudnn benchmark": cudnn_flag("benchmark"),
    "intra-op threads": (torch.get_num_threads, torch.set_num_threads),
    "TorchFunctionMode stack depth": (torch._C._len_torch_function_stack,
                                      pop_to(torch._C._len_torch_function_stack,
                                             torch._C._pop_torch_function_stack)),
    "TorchDispatchMode stack depth": (torch._C._len_torch_dispatch_stack,
                                      pop_to(torch._C._len_torch_dispatch_stack,
                                             torch._C._pop_torch_dispatch_stack)),
    "torch function handling": (torch._C._is_torch_function_enabled, None),
    "CPU RNG state": (lambda: rng_state(torch.get_rng_state()),
                      lambda state: torch.set_rng_state(state.value)),
    "CUDA RNG state": (cuda_rng, set_cuda_rng),
    "CUDA current device and stream": (cuda_stream, set_cuda_stream),
    "autocast (cpu, cuda)": (autocast, None),
    "cudnn allow_tf32": cudnn_flag("allow_tf32"),
    "mkldnn enabled": (lambda: torch.backends.mkldnn.enabled,
                       lambda v: setattr(torch.backends.mkldnn, "enabled", v)),
    "warn always": (torch.is_warn_always_enabled, torch.set_warn_always),
    "deterministic fill of uninitialized memory": (
        lambda: torch.utils.deterministic.fill_uninitialized_memory,
        lambda v: setattr(torch.utils.deterministic, "fill_uninitialized_memory", v)),
    "torch bindings": (bindings, set_bindings),
    **BACKEND_FLAGS,
    "floating-point environment (rounding mode, subnormals flushed)": (float_env,
                                                                       set_float_env),
    "Python garbage collector enabled": (gc.isenabled, set_gc),
    "Python garbage collector thresholds": (gc_thresholds, set_gc_thresholds),
    HOOKS: (python_hooks, set_python_hooks),
    "working directory": (os.getcwd, os.chdir),
    SIGNALS: (handlers, set_handlers),
    "umask": (umask, set_umask),
    RLIMITS: (rlimits, set_rlimits),
    "Python random state": (random_state, set_random_state),
    "numpy global random state": (numpy_state, set_numpy_state),
    BUILTINS: (builtins_bindings, set_builtins_bindings),
    **process_settings.SETTINGS,
    **import_state.SETTINGS,
    **runtime_state.SETTINGS,
}
"""Name -> (getter, setter or None when it cannot be set back from outside its context)."""


NAMED_CHANGES = {"torch bindings": ("rebound", rebound),
                 SIGNALS: ("changed for", handlers_changed),
                 HOOKS: ("changed:", hooks_changed),
                 BUILTINS: ("rebound", builtins_rebound),
                 RLIMITS: ("changed:", rlimits_changed),
                 **process_settings.NAMED_CHANGES,
                 **import_state.NAMED_CHANGES,
                 **runtime_state.NAMED_CHANGES}
"""Settings whose value is a whole map: a change names the keys that changed (what it did, and
the function that lists them, by identity) instead of printing both values. Whether such a
setting changed is that function's answer, never ``==``: its values hold the planner's objects (a
signal handler, a hook), whose ``__eq__`` can say they equal what they replaced
(tests/test_hostile15.py)."""


def _same(name: str, before: object, after: object) -> bool:
    """Whether setting ``name`` reads the same in ``before`` and ``after`` (its lister's answer
    for a setting of :data:`NAMED_CHANGES` whose values both read)."""
    named = NAMED_CHANGES.get(name)
    if named is not None and not isinstance(before, str) and not isinstance(after, str):
        return not named[1](before, after)
    return before == after


def snapshot() -> dict[str, object]:
    """Every setting of :data:`SETTINGS` now (values are plain, comparable Python objects), read
    with torch function handling off (a mode left pushed must not answer the reads); a setting
    whose getter raises reads as ``<unreadable: Type>``."""
    out = {}
    with torch._C.DisableTorchFunction():
        for name, (get, _) in SETTINGS.items():
            try:
                out[name] = get()
            except Exception as exc:  # noqa: BLE001 - a planner can leave torch unreadable
                out[name] = f"<unreadable: {type(exc).__name__}>"
    return out


LAZY_CUDA = ("CUDA RNG state", "CUDA current device and stream")
"""Settings that exist only once CUDA is initialised (None before): the first CUDA op of a process
creates them, which is no change a planner made."""


def changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """``["default dtype: torch.float32 -> torch.float64", ...]`` for every setting that differs
    (for ``torch bindings``: the names rebound)."""
    out = []
    for name in before:
        if _same(name, before[name], after.get(name)):
            continue
        if before[name] is None and name in LAZY_CUDA:
            continue  # CUDA initialised by the case's first CUDA op: not a setting it changed
        named = NAMED_CHANGES.get(name)
        if named is not None and not isinstance(before[name], str) \
                and not isinstance(after.get(name), str):  # both read (not "<unreadable: ...>")
            words, which = named
            out.append(f"{name}: {words} {', '.join(which(before[name], after[name]))}")
        else:
            out.append(f"{name}: {before[name]} -> {after[name]}")
    return out


def restore(before: dict[str, object]) -> list[str]:
    """Set every changed setting back to its value in ``before`` (the mode stacks first: a mode
    left pushed would answer the other setters); returns the names that could not be set back (a
    setting without a setter, or one whose setter raised)."""
    stuck = []
    now = snapshot()
    first = ("TorchFunctionMode stack depth", "TorchDispatchMode stack depth")
    for name in [*first, *(n for n in before if n not in first)]:
        value = before[name]
        if _same(name, now[name], value) and _same(name, value, now[name]):
            continue  # both ways: a lister may name only what one side added
        setter = SETTINGS[name][1]
        try:
            if setter is None:
                raise RuntimeError
            with torch._C.DisableTorchFunction():
                setter(value)
        except Exception:  # noqa: BLE001 - reported to the caller, which replaces the process
            stuck.append(name)
    return stuck
