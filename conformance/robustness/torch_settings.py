"""Getters and setters of torch's process-global settings that torch has no plain pair for
(:data:`conformance.robustness.torch_state.SETTINGS` lists every setting): the default device read
without calling torch, the mode stacks popped back to a depth, the CPU and CUDA RNG states and the
current CUDA device and stream as :class:`Fingerprint` values, autocast, and the bindings of the
public callables of ``torch``, ``torch.Tensor`` and ``torch.nn.functional`` (:data:`BOUND`).

A getter returns a plain, comparable Python object; CUDA's are None until CUDA is initialised
(reading them must not initialise it). A setter raises RuntimeError where the old value cannot be
set back from outside (a mode stack that shrank, CUDA state that did not exist before the case).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import torch


def default_device() -> str:
    """``torch.get_default_device()`` without calling torch (whose calls a mode left pushed would
    answer): the innermost ``DeviceContext`` mode on the TorchFunctionMode stack, else cpu."""
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext

    modes = [m for m in _get_current_function_mode_stack() if isinstance(m, DeviceContext)]
    return str(modes[-1].device) if modes else "cpu"


def set_default_device(device) -> None:
    # torch.get_default_device() is "cpu" when none was set; setting None drops the device context
    torch.set_default_device(None if torch.device(device).type == "cpu" else device)


def set_deterministic(value: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(value[0], warn_only=value[1])


def cudnn_flag(attr: str):
    """(getter, setter) of ``torch.backends.cudnn.<attr>``."""
    return (lambda: getattr(torch.backends.cudnn, attr),
            lambda value: setattr(torch.backends.cudnn, attr, value))


def pop_to(length_of, pop) -> Callable[[int], None]:
    """A setter of a mode stack's depth: pops (``pop``) until ``length_of()`` is the depth."""
    def set_length(length: int) -> None:
        while length_of() > length:
            pop()
        if length_of() != length:
            raise RuntimeError("a mode stack cannot be grown back from outside")
    return set_length


class Fingerprint:
    """A value compared by ``digest`` (a short, printable fingerprint) that keeps ``value`` to set
    it back: an RNG state, a stream, a set of bindings."""

    def __init__(self, digest: str, value=None) -> None:
        self.digest, self.value = digest, value

    def __eq__(self, other) -> bool:
        return isinstance(other, Fingerprint) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __str__(self) -> str:
        return self.digest


def rng_state(state: torch.Tensor) -> Fingerprint:
    """An RNG state tensor as a :class:`Fingerprint` (the first 12 hex digits of its SHA-256)."""
    return Fingerprint("sha256:" + hashlib.sha256(bytes(state.tolist())).hexdigest()[:12], state)


def cuda_rng():
    """Every CUDA device's RNG state, or None before CUDA is initialised."""
    if not torch.cuda.is_initialized():
        return None
    return Fingerprint("|".join(rng_state(s).digest for s in torch.cuda.get_rng_state_all()),
                       torch.cuda.get_rng_state_all())


def set_cuda_rng(state) -> None:
    if state is None:
        raise RuntimeError("CUDA was initialised by the case")
    torch.cuda.set_rng_state_all(state.value)


def cuda_stream():
    """The current CUDA device and its current stream, or None before CUDA is initialised."""
    if not torch.cuda.is_initialized():
        return None
    stream = torch.cuda.current_stream()
    return Fingerprint(f"device {torch.cuda.current_device()}, stream {stream.cuda_stream:#x}",
                       (torch.cuda.current_device(), stream))


def set_cuda_stream(state) -> None:
    if state is None:
        raise RuntimeError("CUDA was initialised by the case")
    torch.cuda.set_device(state.value[0])
    torch.cuda.set_stream(state.value[1])


BOUND = (("torch", torch), ("torch.Tensor", torch.Tensor),
         ("torch.nn.functional", torch.nn.functional))
"""Namespaces whose public callables a planner must not rebind."""


def public_callables(namespaces) -> Fingerprint:
    """Every public callable of ``namespaces`` (``(prefix, namespace)`` pairs), by (prefix, name),
    fingerprinted by identity (a key that is not a ``str`` is passed over: it names nothing an
    attribute access reaches)."""
    objects = {(prefix, name): value for prefix, namespace in namespaces
               for name, value in list(vars(namespace).items())
               if type(name) is str and not name.startswith("_") and callable(value)}
    digest = hash(tuple(map(id, objects.values()))) ^ hash(tuple(objects))
    return Fingerprint(f"{len(objects)} callables, hash {digest & 0xFFFF_FFFF:08x}", objects)


def set_public_callables(namespaces, state: Fingerprint) -> None:
    """Bind every callable of ``state`` (a :func:`public_callables` value of the same
    ``namespaces``) again, and remove one added since."""
    by_prefix = dict(namespaces)
    now = public_callables(namespaces).value
    for key in set(now) - set(state.value):
        delattr(by_prefix[key[0]], key[1])
    for key, value in state.value.items():
        if now.get(key) is not value:
            setattr(by_prefix[key[0]], key[1], value)


def rebound_callables(before: Fingerprint, after: Fingerprint) -> list[str]:
    """``prefix.name`` of every callable that differs between two :func:`public_callables`
    values (rebound, added or removed)."""
    return sorted(f"{p}.{n}" for (p, n) in set(before.value) | set(after.value)
                  if before.value.get((p, n)) is not after.value.get((p, n)))


def bindings() -> Fingerprint:
    """Every public callable of :data:`BOUND`, by (namespace, name), fingerprinted by identity."""
    return public_callables(BOUND)


def set_bindings(state: Fingerprint) -> None:
    set_public_callables(BOUND, state)


rebound = rebound_callables
"""Names of the callables of :data:`BOUND` that differ between two ``torch bindings``."""


def autocast() -> tuple[bool, bool]:
    """Whether autocast is on for (cpu, cuda)."""
    return (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"))
