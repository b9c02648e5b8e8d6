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
initialised (reading them must not initialise it).

Beyond torch, what a server's own computation on the calling thread and in its process depends
on (tests/test_hostile14.py): the thread's floating-point environment (rounding mode, subnormals
flushed: ``torch.set_flush_denormal``, ``fesetround``), read on the thread that calls the planner,
whether Python's cyclic garbage collector runs, the working directory (a server's relative paths)
and every signal's Python handler (how a server stops: ``SIGTERM`` ignored, ``SIGINT`` swallowed;
set back only from the main thread). Not watched: ``os.environ`` (libraries a planner uses may
set their own variables on first use).
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import hashlib
from collections.abc import Callable

import torch
import torch.utils.deterministic  # noqa: F401 - fill_uninitialized_memory


def _default_device() -> str:
    """``torch.get_default_device()`` without calling torch (whose calls a mode left pushed would
    answer): the innermost ``DeviceContext`` mode on the TorchFunctionMode stack, else cpu."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext

    modes = [m for m in _get_current_function_mode_stack() if isinstance(m, DeviceContext)]
    return str(modes[-1].device) if modes else "cpu"


def _set_default_device(device) -> None:
    # torch.get_default_device() is "cpu" when none was set; setting None drops the device context
    torch.set_default_device(None if torch.device(device).type == "cpu" else device)


def _set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def _cudnn(attr: str):
    return (lambda: getattr(torch.backends.cudnn, attr),
            lambda value: setattr(torch.backends.cudnn, attr, value))


def _pop_to(length_of, pop) -> Callable[[int], None]:
    def set_length(length: int) -> None:
        while length_of() > length:
            pop()
        if length_of() != length:
            raise RuntimeError("a mode stack cannot be grown back from outside")
    return set_length


class _State:
    """A value compared by ``digest`` (a short, printable fingerprint) that keeps ``value`` to set
    it back: an RNG state, a stream, a set of bindings."""

    def __init__(self, digest: str, value=None) -> None:
        self.digest, self.value = digest, value

    def __eq__(self, other) -> bool:
        return isinstance(other, _State) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __str__(self) -> str:
        return self.digest


def _rng_state(state: torch.Tensor) -> _State:
    return _State("sha256:" + hashlib.sha256(bytes(state.tolist())).hexdigest()[:12], state)


def _cuda_rng():
    if not torch.cuda.is_initialized():
        return None
    return _State("|".join(_rng_state(s).digest for s in torch.cuda.get_rng_state_all()),
                  torch.cuda.get_rng_state_all())


def _set_cuda_rng(state) -> None:
    if state is None:
        raise RuntimeError("CUDA was initialised by the case")
    torch.cuda.set_rng_state_all(state.value)


def _cuda_stream():
    if not torch.cuda.is_initialized():
        return None
    stream = torch.cuda.current_stream()
    return _State(f"device {torch.cuda.current_device()}, stream {stream.cuda_stream:#x}",
                  (torch.cuda.current_device(), stream))


def _set_cuda_stream(state) -> None:
    if state is None:
        raise RuntimeError("CUDA was initialised by the case")
    torch.cuda.set_device(state.value[0])
    torch.cuda.set_stream(state.value[1])


SIGNALS = "signal handlers"
"""The setting of every signal's Python handler (its change is named by signal)."""


BOUND = (("torch", torch), ("torch.Tensor", torch.Tensor),
         ("torch.nn.functional", torch.nn.functional))
"""Namespaces whose public callables a planner must not rebind."""


def _bindings() -> _State:
    objects = {(prefix, name): value for prefix, namespace in BOUND
               for name, value in vars(namespace).items()
               if not name.startswith("_") and callable(value)}
    digest = hash(tuple(map(id, objects.values()))) ^ hash(tuple(objects))
    return _State(f"{len(objects)} callables, hash {digest & 0xFFFF_FFFF:08x}", objects)


def _set_bindings(state: _State) -> None:
    namespaces = dict(BOUND)
    now = _bindings().value
    for key in set(now) - set(state.value):
        delattr(namespaces[key[0]], key[1])
    for key, value in state.value.items():
        if now.get(key) is not value:
            setattr(namespaces[key[0]], key[1], value)


def rebound(before: _State, after: _State) -> list[str]:
    """Names of the callables of :data:`BOUND` that differ between two ``torch bindings``."""
    return sorted(f"{p}.{n}" for (p, n) in set(before.value) | set(after.value)
                  if before.value.get((p, n)) is not after.value.get((p, n)))


_LIBC = ctypes.CDLL(None)
"""The process's C library (``fegetround`` / ``fesetround``: C99 ``<fenv.h>``)."""
_SUBNORMAL = [5e-324]
"""The smallest subnormal double, kept in a list so that no compiler folds :func:`_float_env`'s
product."""


def _float_env() -> tuple[int, bool]:
    """This thread's floating-point environment: (``fegetround()``, whether subnormals are
    flushed to zero). The smallest subnormal times 1 is itself unless FTZ or DAZ is set (x86
    MXCSR, AArch64 FPCR), as ``torch.set_flush_denormal(True)`` does."""
    return (_LIBC.fegetround(), _SUBNORMAL[0] * 1.0 == 0.0)


def _set_float_env(value: tuple[int, bool]) -> None:
    if _LIBC.fesetround(value[0]) != 0:
        raise RuntimeError("fesetround refused the rounding mode")
    torch.set_flush_denormal(value[1])


def _set_gc(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()


def _handlers() -> tuple[tuple[int, object], ...]:
    """Every signal's Python-level handler (``signal.getsignal``), by signal number: a planner
    that installs one (``SIGTERM`` ignored, ``SIGINT`` swallowed) changes how its server stops."""
    out = []
    for sig in sorted(signal.valid_signals()):
        try:
            out.append((int(sig), signal.getsignal(sig)))
        except (OSError, ValueError):
            continue
    return tuple(out)


def _set_handlers(value: tuple[tuple[int, object], ...]) -> None:
    """Install ``value``'s handlers again (main thread only: ``signal.signal`` raises elsewhere;
    a handler installed from C, ``None``, cannot be)."""
    now = dict(_handlers())
    for number, handler in value:
        if now.get(number) is not handler:
            if handler is None:
                raise ValueError(f"{_signal_name(number)}: a handler installed outside Python")
            signal.signal(number, handler)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def handlers_changed(before, after) -> list[str]:
    """The names of the signals whose handler differs between two :func:`_handlers` values."""
    was, now = dict(before), dict(after)
    return [_signal_name(n) for n in sorted(set(was) | set(now)) if was.get(n) is not now.get(n)]


def _autocast() -> tuple[bool, bool]:
    return (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"))


SETTINGS: dict[str, tuple[Callable[[], object], Callable[[object], None]]] = {
    "default device": (_default_device, _set_default_device),
    "default dtype": (torch.get_default_dtype, torch.set_default_dtype),
    "grad mode": (torch.is_grad_enabled, torch.set_grad_enabled),
    "inference mode": (torch.is_inference_mode_enabled, None),
    "deterministic algorithms": (
        lambda: (torch.are_deterministic_algorithms_enabled(),
                 torch.is_deterministic_algorithms_warn_only_enabled()), _set_deterministic),
    "anomaly detection": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    "float32 matmul precision": (torch.get_float32_matmul_precision,
                                 torch.set_float32_matmul_precision),
    "cuda matmul allow_tf32": (lambda: torch.backends.cuda.matmul.allow_tf32,
                               lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v)),
    "cudnn enabled": _cudnn("enabled"),
    "cudnn deterministic": _cudnn("deterministic"),
    "cudnn benchmark": _cudnn("benchmark"),
    "intra-op threads": (torch.get_num_threads, torch.set_num_threads),
    "TorchFunctionMode stack depth": (torch._C._len_torch_function_stack,
                                      _pop_to(torch._C._len_torch_function_stack,
                                              torch._C._pop_torch_function_stack)),
    "TorchDispatchMode stack depth": (torch._C._len_torch_dispatch_stack,
                                      _pop_to(torch._C._len_torch_dispatch_stack,
                                              torch._C._pop_torch_dispatch_stack)),
    "torch function handling": (torch._C._is_torch_function_enabled, None),
    "CPU RNG state": (lambda: _rng_state(torch.get_rng_state()),
                      lambda state: torch.set_rng_state(state.value)),
    "CUDA RNG state": (_cuda_rng, _set_cuda_rng),
    "CUDA current device and stream": (_cuda_stream, _set_cuda_stream),
    "autocast (cpu, cuda)": (_autocast, None),
    "cudnn allow_tf32": _cudnn("allow_tf32"),
    "mkldnn enabled": (lambda: torch.backends.mkldnn.enabled,
                       lambda v: setattr(torch.backends.mkldnn, "enabled", v)),
    "warn always": (torch.is_warn_always_enabled, torch.set_warn_always),
    "deterministic fill of uninitialized memory": (
        lambda: torch.utils.deterministic.fill_uninitialized_memory,
        lambda v: setattr(torch.utils.deterministic, "fill_uninitialized_memory", v)),
    "torch bindings": (_bindings, _set_bindings),
    "floating-point environment (rounding mode, subnormals flushed)": (_float_env,
                                                                      _set_float_env),
    "Python garbage collector enabled": (gc.isenabled, _set_gc),
    "working directory": (os.getcwd, os.chdir),
    SIGNALS: (_handlers, _set_handlers),
}
"""Name -> (getter, setter or None when it cannot be set back from outside its context)."""


NAMED_CHANGES = {"torch bindings": ("rebound", rebound),
                 SIGNALS: ("changed for", handlers_changed)}
"""Settings whose value is a whole map: a change names the keys that changed (what it did, and
the function that lists them) instead of printing both values."""


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
        if before[name] == after.get(name):
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
        if now[name] == value:
            continue
        setter = SETTINGS[name][1]
        try:
            if setter is None:
                raise RuntimeError
            with torch._C.DisableTorchFunction():
                setter(value)
        except Exception:  # noqa: BLE001 - reported to the caller, which replaces the process
            stuck.append(name)
    return stuck
