"""Hostile planners against the guarded allocations of the one-call engine
(:mod:`conformance.engine.allocations`, :mod:`conformance.engine.one_call`): each is right where the
engine looks at it, and reaches memory or judge state it must not
(``tests/test_hostile_guarded.py`` says which the engine catches).

Each factory takes ``honest``, a launcher of the subject (``subject.get_planner("python")``), and
the name of the tensor argument it attacks, and returns a fresh launcher (no state shared between
tests). An attack on the judge's own state returns a launcher with ``undo()``, which puts back
what it changed (the tests call it in ``finally``).
"""

from __future__ import annotations

import ctypes
import sys
import threading
import types

import numpy as np
import torch

from conformance.engine import allocations, one_call, verdict
from conformance.engine.inputs import GUARD


# --- writes outside a tensor -------------------------------------------------------------------

def restores_the_guard(honest, name: str):
    """Right, and uses the element just past ``name`` and the one just before it (its guard zone)
    as scratch: writes 0 into both, then puts back what they held before returning."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        wide = t.untyped_storage()
        whole = torch.empty(0, dtype=t.dtype).set_(wide, 0, (wide.nbytes() // t.element_size(),))
        at = (t.storage_offset() - 1, t.storage_offset() + t.numel())
        saved = [int(whole[i]) for i in at]
        for i in at:
            whole[i] = 0
        for i, value in zip(at, saved):
            whole[i] = value
    return launch


def writes_past_the_end_with_numpy(honest, name: str):
    """Right, then writes 0 one element past ``name`` through a NumPy view (no bounds check)."""
    def launch(**kw):
        honest(**kw)
        a = kw[name].numpy().reshape(-1)  # a view: the tensors are contiguous
        np.lib.stride_tricks.as_strided(a, shape=(a.size + 1,), strides=a.strides)[-1] = 0
    return launch


def writes_before_the_start_with_ctypes(honest, name: str):
    """Right, then writes 0 into the int64 just before ``name``'s first element, at its address
    (``data_ptr``) through ctypes."""
    def launch(**kw):
        honest(**kw)
        ctypes.c_int64.from_address(kw[name].data_ptr() - 8).value = 0
    return launch


def writes_past_the_end_as_int32(honest, name: str):
    """Right, then writes 0 into the low half of the int64 just past ``name``, through an int32 view
    of the same storage (another dtype: 4 of its 8 bytes)."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        t.view(torch.int32).as_strided((2 * t.numel() + 1,), (1,))[-1] = 0
    return launch


def grows_into_the_guard(honest, name: str):
    """Right, then resizes its own ``name`` two elements longer (the storage has room: the guard
    zone) and writes 0 into the two new elements."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        t.resize_(t.numel() + 2)
        t[-2:] = 0
    return launch


def writes_past_an_empty_tensor(honest, name: str):
    """Right, then writes 0 into the element at ``name``'s start, which a tensor of no elements
    does not have (the first element of its guard zone after it)."""
    def launch(**kw):
        honest(**kw)
        kw[name].as_strided((1,), (1,))[0] = 0
    return launch


# --- the tensor's storage rebound or resized ----------------------------------------------------

def rebinds_to_its_own_storage(honest, name: str):
    """Rebinds ``name`` (``set_``) to a zeroed tensor of its own and writes the plan there: the
    harness's tensor is never written."""
    def launch(**kw):
        kw[name].set_(torch.zeros_like(kw[name]))
        honest(**kw)
    return launch


def rebinds_into_the_guard_zone(honest, name: str):
    """Rebinds ``name`` to the start of its own storage (``set_``, offset 0: the guard zone before
    it and its first elements) and writes the plan there."""
    def launch(**kw):
        t = kw[name]
        t.set_(t.untyped_storage(), 0, t.shape, t.stride())
        honest(**kw)
    return launch


def grows_the_storage(honest, name: str):
    """Right, then grows ``name``'s storage by one int64 (``untyped_storage().resize_``): torch moves
    it to new memory (the harness's views follow: they share the storage)."""
    def launch(**kw):
        honest(**kw)
        storage = kw[name].untyped_storage()
        storage.resize_(storage.nbytes() + 8)
    return launch


# --- what only the harness's allocations look like ------------------------------------------------

def right_only_in_the_harness_layout(honest, name: str):
    """Right when ``name`` lies where the harness puts every argument (at element GUARD of a
    storage exactly GUARD elements longer on each side), else ``name[0]`` one too high: a server's
    tensor (its own allocation, or a slice of a pool) gets a wrong plan."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        harness = (t.storage_offset() == GUARD and t.untyped_storage().nbytes()
                   == (t.numel() + 2 * GUARD) * t.element_size())
        if not harness and t.numel():
            t[0] += 1
    return launch


# --- writes after the call returned ------------------------------------------------------------

def corrupts_the_previous_calls_input(honest, name: str, value: int = 7):
    """Right, and keeps input ``name``; at its next call it writes ``value`` into the kept tensor's
    element 0 (a server passes the same table to every call: this corrupts it for the next)."""
    kept: list[torch.Tensor] = []

    def launch(**kw):
        honest(**kw)
        for old in kept:
            old.view(-1)[0] = value
        kept[:] = [kw[name]]
    return launch


def writes_the_previous_calls_guard(honest, name: str):
    """Right, and keeps ``name``; at its next call it writes 0 into the element just before the
    kept tensor's start (its guard zone), through a NumPy view of the kept storage."""
    kept: list[torch.Tensor] = []

    def launch(**kw):
        honest(**kw)
        for old in kept:
            ctypes.c_int64.from_address(old.data_ptr() - 8).value = 0
        kept[:] = [kw[name]]
    return launch


def writes_the_guard_after_returning(honest, name: str, gate: threading.Event, threads: list):
    """Right; a thread it leaves writes 0 one element past ``name`` once ``gate`` is set (after the
    last call returned, nothing reads that allocation again)."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        wide = t.as_strided((t.numel() + 1,), (1,))

        def late():
            if gate.wait(10):
                wide[-1] = 0
        thread = threading.Thread(target=late, daemon=True)
        thread.start()
        threads.append(thread)
    return launch


# --- the judge's own state, from inside the call (lasting?) -------------------------------------

def _undoable(launch, undo):
    launch.undo = undo
    return launch


def disables_the_guard_judge(honest):
    """Right, and replaces ``Allocations.judge`` (a class attribute: the module's binding of the
    class is unchanged) with a no-op, for every later judgement."""
    real = allocations.Allocations.__dict__["judge"]

    def launch(**kw):
        honest(**kw)
        allocations.Allocations.judge = lambda *a, **k: None
    return _undoable(launch, lambda: setattr(allocations.Allocations, "judge", real))


def disables_every_difference(honest):
    """Right, and replaces ``VerdictData.add`` (a class attribute) with a no-op: no difference of
    any later judgement is counted."""
    real = verdict.VerdictData.__dict__["add"]

    def launch(**kw):
        honest(**kw)
        verdict.VerdictData.add = lambda *a, **k: None
    return _undoable(launch, lambda: setattr(verdict.VerdictData, "add", real))


def rebinds_behind_an_unsortable_key(honest):
    """Right, and from inside the call replaces the engine's output judge with a no-op and puts an
    int key into the engine module's namespace beside it: sorting the changed names (a str and
    an int) raises before the module is set back."""
    real = one_call._judge_outputs

    def launch(**kw):
        honest(**kw)
        names = vars(one_call)
        names[0] = 0
        names["_judge_outputs"] = lambda *a, **k: None

    def undo():
        vars(one_call).pop(0, None)
        one_call._judge_outputs = real
    return _undoable(launch, undo)


def rebinds_behind_a_lying_module_class(honest):
    """Right, and replaces the engine's output judge with a no-op after rebinding the engine
    module's ``__class__`` to a ModuleType subclass whose ``__dict__`` answers a copy taken
    before (what ``vars(module)`` reads): the judge sees its namespace unchanged."""
    real = one_call._judge_outputs

    def launch(**kw):
        honest(**kw)
        copy = dict(vars(one_call))

        class Lying(types.ModuleType):
            @property
            def __dict__(self):
                return copy
        one_call.__class__ = Lying
        types.ModuleType.__dict__["__dict__"].__get__(one_call)["_judge_outputs"] = \
            lambda *a, **k: None

    def undo():
        object.__setattr__(one_call, "__class__", types.ModuleType)
        types.ModuleType.__dict__["__dict__"].__get__(one_call)["_judge_outputs"] = real
    return _undoable(launch, undo)


def blinds_torch(honest):
    """Right, and replaces ``torch.Tensor.__ne__`` with one that finds no element different: the
    bytes the judge compares after every later call (guard zones, hidden storage) all look
    unchanged."""
    real = torch.Tensor.__ne__

    def ne(a, b):
        out = real(a, b)
        return out & False if isinstance(out, torch.Tensor) and out.dtype == torch.bool else out

    def launch(**kw):
        honest(**kw)
        torch.Tensor.__ne__ = ne
    return _undoable(launch, lambda: setattr(torch.Tensor, "__ne__", real))


# --- errors the judge reads -----------------------------------------------------------------------

def raises_with_an_unreadable_id(message: str):
    """Raises a ValueError with the case's exact text whose ``error_id`` property raises KeyError."""
    class UnreadableId(ValueError):
        @property
        def error_id(self):
            raise KeyError("error_id")

    def launch(**kw):
        raise UnreadableId(message)
    return launch


class _Nameless(type):
    """A metaclass whose classes' ``__name__`` raises KeyError."""

    @property
    def __name__(cls):
        raise KeyError("__name__")


class NamelessError(RuntimeError, metaclass=_Nameless):
    """An error whose class's name raises KeyError when read, and whose text raises too."""

    def __str__(self):
        raise ValueError("no text")


def raises_nameless(**kw):
    raise NamelessError()

