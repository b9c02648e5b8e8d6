"""Planners an adversarial or careless user might hand the harness, one per promise of README.md it
attacks (``tests/test_break_attempts.py`` shows what the harness does with each). Each has the
launcher signature of spec section 3 and is the pure-Python planner except where its docstring
says otherwise.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import torch

from impls.offsets_planner.python_planner import launch as python_launch
from impls.offsets_planner.validate import validate_launch


class WrongOnSecondCall:
    """Right on its first call, then ``out_verify_num_valid`` one too high on every later call: a
    planner whose state (a warm-up flag, a cache) goes wrong after the first launch."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, **kwargs) -> None:
        self.calls += 1
        python_launch(**kwargs)
        if self.calls > 1:
            kwargs["out_verify_num_valid"].add_(1)


def wrong_on_later_steps(**kwargs) -> None:
    """Right whenever the output buffer still holds poison before the call (a first step), wrong
    (``out_write_num_valid_reqs`` + 1) when it holds a previous step's result: a planner that reads
    its own previous output as state."""
    scalar = kwargs["out_write_num_valid_reqs"]
    fresh = int(scalar.flatten()[0]) < 0 or int(scalar.flatten()[0]) > 1 << 30
    python_launch(**kwargs)
    if not fresh:
        scalar.add_(1)


def _past(tensor: torch.Tensor, extra: int) -> torch.Tensor:
    """``tensor`` widened by ``extra`` elements past its end, in its own storage."""
    return torch.as_strided(tensor, (tensor.numel() + extra,), (1,))


def writes_three_past_scratch(**kwargs) -> None:
    """Right outputs plus a store three elements past ``out_verify_offsets_scratch``'s end (a
    vectorised store rounded up), inside memory the caller owns."""
    python_launch(**kwargs)
    scratch = kwargs["out_verify_offsets_scratch"]
    _past(scratch, 3)[scratch.numel() + 2] = 0


def writes_one_before_offsets(**kwargs) -> None:
    """Right outputs plus a store at index -1 of ``out_write_offsets`` (an off-by-one base)."""
    python_launch(**kwargs)
    offsets = kwargs["out_write_offsets"]
    torch.as_strided(offsets, (1,), (1,), offsets.storage_offset() - 1).fill_(0)


def edits_input_and_restores(**kwargs) -> None:
    """Right outputs; uses ``prefix_lens`` as scratch in place and writes the old values back: the
    values end unchanged, torch's version counter does not."""
    prefix = kwargs["prefix_lens"]
    saved = prefix.clone()
    prefix.add_(1)
    prefix.copy_(saved)
    python_launch(**kwargs)


def edits_input_through_numpy(**kwargs) -> None:
    """Right outputs, then zeroes ``extend_seq_lens[0]`` through a numpy view (no version bump)."""
    python_launch(**kwargs)
    ext = kwargs["extend_seq_lens"]
    if ext.numel() and ext.device.type == "cpu":
        ext.numpy()[0] = 12345


def late_thread_writer(**kwargs) -> None:
    """Right outputs, and a thread that 0.5 s later writes -7 into the element just past
    ``out_write_offsets``'s defined region (the stale tail): a kernel still running after the
    launcher returned, on a stream the caller never synchronised."""
    python_launch(**kwargs)
    offsets = kwargs["out_write_offsets"]
    plan_bs = kwargs["req_pool_indices"].numel()
    if offsets.numel() <= plan_bs + 1:
        return

    def later() -> None:
        time.sleep(0.5)
        offsets[plan_bs + 1] = -7

    threading.Thread(target=later, daemon=True).start()


def sets_num_threads(**kwargs) -> None:
    """Right outputs; leaves ``torch.set_num_threads(1)`` behind (process-global)."""
    python_launch(**kwargs)
    torch.set_num_threads(1)


def sets_default_dtype(**kwargs) -> None:
    """Right outputs; leaves ``torch.set_default_dtype(torch.float64)`` behind."""
    python_launch(**kwargs)
    torch.set_default_dtype(torch.float64)


def enables_anomaly_mode(**kwargs) -> None:
    """Right outputs; leaves autograd's anomaly detection on (process-global)."""
    python_launch(**kwargs)
    torch.autograd.set_detect_anomaly(True)


def hides_input_write(**kwargs) -> None:
    """Right outputs; writes ``extend_seq_lens[0]`` through ``.data`` (a view with a version
    counter of its own, so torch's counter on the input does not move; on any device) and replaces
    ``torch.equal`` with one that always says True: an attack on the observer, which runs in the
    planner's process (in-process, or in the isolation child)."""
    python_launch(**kwargs)
    ext = kwargs["extend_seq_lens"]
    if ext.numel():
        ext.data[0] = 12345
    torch.equal = lambda a, b: True


class Baseline(BaseException):
    """A BaseException that is neither KeyboardInterrupt, SystemExit nor GeneratorExit."""


def raises_base_exception(**kwargs) -> None:
    """Raises a custom :class:`BaseException` subclass on every call."""
    raise Baseline("not an Exception")


class _StrRaises(ValueError):
    def __str__(self) -> str:
        raise RuntimeError("str() of this exception raises")

    def __repr__(self) -> str:
        raise RuntimeError("repr() of this exception raises")


class _ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("repr() raises")


def raises_unprintable(**kwargs) -> None:
    """Raises a ValueError whose ``__str__`` and ``__repr__`` raise."""
    raise _StrRaises(_ReprRaises())


def exits_through_unprintable_systemexit(**kwargs) -> None:
    """Raises SystemExit whose argument's ``__repr__`` raises (the in-process guard formats it)."""
    raise SystemExit(_ReprRaises())


def valueerror_subclass_with_the_message(**kwargs) -> None:
    """Raises what the validator raises, re-wrapped in a ValueError subclass called ``ValueError``
    that is not the validator's class: right type name by ``issubclass``, right message."""
    try:
        validate_launch(**kwargs)
    except ValueError as exc:
        raise type("ValueError", (ValueError,), {})(str(exc)) from None
    python_launch(**kwargs)


def fake_valueerror(**kwargs) -> None:
    """Raises a class named ``ValueError`` that is an ``Exception`` but not a ValueError, with the
    validator's message."""
    try:
        validate_launch(**kwargs)
    except ValueError as exc:
        raise type("ValueError", (Exception,), {})(str(exc)) from None
    python_launch(**kwargs)


def prints_megabytes(**kwargs) -> None:
    """Right outputs, and 4 MB on stdout and stderr each call."""
    python_launch(**kwargs)
    os.write(1, b"x" * (4 << 20) + b"\n")
    os.write(2, b"y" * (4 << 20) + b"\n")


def closes_stdio(**kwargs) -> None:
    """Right outputs, then closes file descriptors 1 and 2 (and Python's sys.stdout/stderr)."""
    python_launch(**kwargs)
    sys.stdout.flush()
    sys.stderr.flush()
    os.close(1)
    os.close(2)


def forks_and_child_continues(**kwargs) -> None:
    """Forks and lets the child return from the launcher too (two processes continue the run)."""
    os.fork()
    python_launch(**kwargs)


def sleeps(**kwargs) -> None:
    """Sleeps 30 s, then is right (a hang for any timeout below that)."""
    time.sleep(30)
    python_launch(**kwargs)


def returns_hostile_value(**kwargs) -> object:
    """Right outputs; returns an object whose repr, ``__eq__`` and ``__bool__`` raise."""
    python_launch(**kwargs)

    class Hostile:
        def __repr__(self):
            raise RuntimeError("repr")

        def __bool__(self):
            raise RuntimeError("bool")

        def __eq__(self, other):
            raise RuntimeError("eq")

        __hash__ = None

    return Hostile()


def shell_name_planner(**kwargs) -> None:
    """The pure-Python planner under a name bound with shell metacharacters (see the tests)."""
    python_launch(**kwargs)


globals()["x;touch BROKEN"] = shell_name_planner


def calls_pytest_skip(**kwargs) -> None:
    """Writes nothing and calls ``pytest.skip``: a planner that hides its own failures as skips
    (pytest's outcome exceptions are BaseExceptions)."""
    import pytest

    pytest.skip("this planner decided its case does not apply")


def calls_pytest_xfail(**kwargs) -> None:
    """Writes nothing and calls ``pytest.xfail`` (an expected failure does not turn a run red)."""
    import pytest

    pytest.xfail("known")
