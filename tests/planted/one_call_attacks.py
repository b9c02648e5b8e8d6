"""Hostile planners for the one-call engine (:mod:`conformance.engine.one_call`): each is right, or
right where the engine looks, and wrong in one way a kernel author could hide
(``tests/test_one_call_attacks.py`` says which the engine catches).

Each factory takes ``honest``, a launcher of the subject (``subject.get_planner("python")``), and
the name of the output it attacks, and returns a fresh launcher (no state shared between tests).
The launchers take the subject's keyword arguments (docs/spec/entries-planner.md section 3,
docs/spec/canary-plan.md section 3) and return None unless an attack says otherwise.
"""

from __future__ import annotations

import sys
import threading

import pytest
import torch

HARNESS_MAGNITUDE = 1 << 40
"""At least the magnitude of every int64 poison value (``POISON_RANGES``): a plan holds none."""
SCRATCH_GARBAGE = 1 << 40
"""The fixed value the entries subject puts past ``[bs]`` in the scratch (its ``build``)."""


def late_writer(honest, gate: threading.Event, threads: list):
    """Returns at once; a thread writes the honest plan once ``gate`` is set (writes that land
    after the call returned, not ordered with the caller)."""
    def launch(**kw):
        t = threading.Thread(target=lambda: (gate.wait(10), honest(**kw)), daemon=True)
        t.start()
        threads.append(t)
    return launch


def garbage_after_return(honest, name: str, gate: threading.Event, threads: list):
    """Right, then a thread writes 0 into ``name[0]`` once ``gate`` is set: the outputs change after
    the call returned."""
    def launch(**kw):
        honest(**kw)
        out = kw[name]
        t = threading.Thread(target=lambda: (gate.wait(10), out.__setitem__(0, 0)), daemon=True)
        t.start()
        threads.append(t)
    return launch


def corrupts_the_previous_call(honest, name: str):
    """Right, and keeps ``name``; at its next call it writes 0 into the kept tensor's element 0."""
    kept: list[torch.Tensor] = []

    def launch(**kw):
        honest(**kw)
        for old in kept:
            old[0] = 0
        kept[:] = [kw[name]]
    return launch


def corrupts_past_the_previous_call(honest, name: str):
    """Right, and keeps ``name``; at its next call it writes 0 one element past the kept tensor's
    end (through a wider view of its storage), where its guard zone lies."""
    kept: list[torch.Tensor] = []

    def launch(**kw):
        honest(**kw)
        for old in kept:
            old.as_strided((old.numel() + 1,), (1,))[-1] = 0
        kept[:] = [kw[name]]
    return launch


def borrows_an_input(honest, name: str):
    """Uses input ``name`` as scratch during the call (zeroes it) and puts it back before returning."""
    def launch(**kw):
        saved = kw[name].clone()
        honest(**{**kw, name: saved})
        kw[name].zero_()
        kw[name].copy_(saved)
    return launch


def right_only_under_poison(honest, name: str):
    """Right when ``name`` arrives holding poison-sized values (the harness's fill), else ``name[0]``
    one too high: a production caller's zeroed outputs get a wrong plan."""
    def launch(**kw):
        harness = kw[name].numel() and abs(int(kw[name][0])) >= HARNESS_MAGNITUDE
        honest(**kw)
        if not harness and kw[name].numel():
            kw[name][0] += 1
    return launch


def right_only_with_scratch_garbage(honest, name: str):
    """Right when the scratch's element ``bs + 1`` is the subject's fixed garbage, else ``name[0]``
    one too high."""
    def launch(**kw):
        bs = kw["req_pool_indices"].shape[0]
        scratch = kw["verify_offsets_scratch"]
        harness = scratch.numel() > bs + 1 and int(scratch[bs + 1]) == SCRATCH_GARBAGE
        honest(**kw)
        if not harness and kw[name].numel():
            kw[name][0] += 1
    return launch


def rewrites_what_is_there(honest, name: str):
    """Right, then writes every element of ``name`` again with the value it holds (the tail too)."""
    def launch(**kw):
        honest(**kw)
        kw[name].copy_(kw[name].clone())
    return launch


def resizes_away(name: str):
    """Resizes ``name`` to no elements and writes nothing."""
    def launch(**kw):
        kw[name].resize_(0)
    return launch


def frees_the_storage(honest, name: str):
    """Right, then shrinks ``name``'s storage to 0 bytes (the caller's views lose their memory)."""
    def launch(**kw):
        honest(**kw)
        kw[name].untyped_storage().resize_(0)
    return launch


def writes_one_past_the_end(honest, name: str):
    """Right, then writes 0 one element past the end of ``name`` through a wider view."""
    def launch(**kw):
        honest(**kw)
        t = kw[name]
        t.as_strided((t.numel() + 1,), (1,))[-1] = 0
    return launch


class EqualsNone:
    """Compares equal to None, is falsy and prints as ``None``."""

    def __eq__(self, other):
        return other is None or isinstance(other, EqualsNone)

    __hash__ = object.__hash__

    def __bool__(self):
        return False

    def __repr__(self):
        return "None"


class Unprintable:
    """A value whose ``repr`` raises ValueError."""

    def __repr__(self):
        raise ValueError("no repr")


def returns(value, honest):
    """Right, then returns ``value``."""
    def launch(**kw):
        honest(**kw)
        return value
    return launch


class AlwaysEqual(str):
    """A ``str`` that compares equal to every object."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


class MatchesAnyText(ValueError):
    """A ValueError whose text (``str``) compares equal to every message; it prints ``nonsense``."""

    def __str__(self):
        return AlwaysEqual("nonsense")


class PosesAsValueError(RuntimeError):
    """A RuntimeError that says its ``__class__`` is ValueError (``except ValueError`` misses it)."""

    @property
    def __class__(self):
        return ValueError


class LyingId(ValueError):
    """A ValueError with an ``error_id`` equal to every id."""

    error_id = AlwaysEqual("any")


class UnprintableError(RuntimeError):
    """An error whose text raises ValueError when read."""

    def __str__(self):
        raise ValueError("no text")


def raises(exc_factory):
    """Raises ``exc_factory(case message)`` on every call; the message is not known here, so the
    factory ignores it."""
    def launch(**kw):
        raise exc_factory()
    return launch


def skips(**kw):
    """``pytest.skip`` from inside the launch (a BaseException: an item of it reads skipped)."""
    pytest.skip("not applicable")


def xfails(**kw):
    """``pytest.xfail`` from inside the launch (an item of it reads xfailed)."""
    pytest.xfail("known")


def exits(**kw):
    raise SystemExit(0)


class Escape(BaseException):
    """An exception outside ``Exception``."""


def escapes(**kw):
    raise Escape("out")


def _caller_frame(local: str):
    """The nearest caller frame with a local named ``local`` (the judge's, from inside the launch)."""
    frame = sys._getframe(2)
    while frame is not None and local not in frame.f_locals:
        frame = frame.f_back
    return frame


def rewrites_the_golden(honest, name: str):
    """Writes ``name[0]`` one too high, and from inside the call replaces the subject's ``golden``
    with one that says so (the judge asks for the golden after the call). ``undo`` restores it."""
    state = {}

    def launch(**kw):
        honest(**kw)
        kw[name][0] += 1
        got = int(kw[name][0])
        subject = _caller_frame("subject").f_locals["subject"]
        real = state.setdefault("real", (subject, subject.golden))[1]

        def golden(case):
            want = real(case)
            if want.get(name):
                want[name] = [got, *want[name][1:]]
            return want
        subject.golden = golden
    launch.undo = lambda: state and setattr(state["real"][0], "golden", state["real"][1])
    return launch


def disables_the_judge(honest):
    """Right, and from inside the call replaces the engine's output judge with a no-op (it stays
    so for every later judgement). ``undo`` restores it."""
    from conformance.engine import one_call
    real = one_call._judge_outputs

    def launch(**kw):
        honest(**kw)
        one_call._judge_outputs = lambda *a, **k: None
    launch.undo = lambda: setattr(one_call, "_judge_outputs", real)
    return launch


def edits_the_case(honest, name: str):
    """Writes ``name[0]`` one too high and edits the judged case's ``expect`` (reached through the
    judge's frame) to say so."""
    def launch(**kw):
        honest(**kw)
        kw[name][0] += 1
        case = _caller_frame("case").f_locals["case"]
        if case["expect"].get(name):
            case["expect"][name][0] = int(kw[name][0])
    return launch


def sets_torch_state(honest, how):
    """Right, then changes torch's global state with ``how()``."""
    def launch(**kw):
        honest(**kw)
        how()
    return launch


def writes_the_hidden_half(name: str, message: str):
    """Writes 0 into the storage elements of ``name`` that its strided view skips, then raises the
    case's documented error (``ValueError(message)``)."""
    def launch(**kw):
        t = kw[name]
        t.as_strided((t.untyped_storage().nbytes() // t.element_size(),), (1,), 0)[1::2] = 0
        raise ValueError(message)
    return launch


def right_only_under_poison_forging_the_plain_fill(honest, name: str):
    """:func:`right_only_under_poison`, and at every call it makes the ``plain`` run's fill
    poison-sized too: it draws the int64 stale-plan fill of every length its arguments could
    take through the harness's own ``stale_plan_values`` and overwrites what that returned in
    place (a fill the harness kept in a cache came back poison-sized to the ``plain`` run)."""
    from conformance.engine import inputs

    def launch(**kw):
        for tensor in kw.values():
            if isinstance(tensor, torch.Tensor) and tensor.dtype == torch.int64:
                fill = inputs.stale_plan_values(torch.int64, max(tensor.numel(), 1))
                fill.fill_(HARNESS_MAGNITUDE + 1)
        right_only_under_poison(honest, name)(**kw)
    return launch


def right_only_under_poison_narrowing_the_plain_fill(honest, name: str):
    """:func:`right_only_under_poison`, and it rebinds the range the ``plain`` run's fill is
    drawn from (``conformance.engine.inputs.STALE_PLAN_RANGE``) to poison-sized values, so that
    every later ``plain`` run looks like the harness's poison."""
    from conformance.engine import inputs

    def launch(**kw):
        inputs.STALE_PLAN_RANGE = (HARNESS_MAGNITUDE, HARNESS_MAGNITUDE + 1)
        right_only_under_poison(honest, name)(**kw)
    return launch
