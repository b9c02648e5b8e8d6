"""Planners that attack isolation itself, one per way a planner in the isolation worker could try
to pass without computing the plan (``tests/test_isolation_attacks.py`` shows each one fails).

Each has the launcher signature of spec section 3 and is the pure-Python planner except where its
docstring says otherwise. The module-level attacks (a top level that rebinds the judge, one that
sleeps) are :mod:`tests.planted.judge_at_import` and :mod:`tests.planted.sleeps_at_import`.
"""

from __future__ import annotations

import gc
import inspect
import os
import signal

import torch

from impls.offsets_planner.python_planner import launch as python_launch


def hunts_goldens(**kwargs) -> None:
    """Writes ``out_write_num_valid_reqs`` one too high, then looks for the case being run to make
    its golden agree: every frame of its callers (a local named ``case``) and every object on the
    heap (anything with ``steps`` and ``expect``, any dict with an ``expect`` key) -- what a
    planner in the harness's process finds. In the worker there is none."""
    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].add_(1)
    found = [info.frame.f_locals.get("case") for info in inspect.stack()]
    found += [obj for obj in gc.get_objects()
              if (hasattr(obj, "steps") and hasattr(obj, "expect"))
              or (isinstance(obj, dict) and "expect" in obj)]
    for case in filter(None, found):
        for step in getattr(case, "steps", ()):
            if isinstance(getattr(step, "expect", None), dict) and \
                    "out_write_num_valid_reqs" in step.expect:
                step.expect["out_write_num_valid_reqs"] += 1


def rebinds_observer(**kwargs) -> None:
    """Right outputs; writes ``extend_seq_lens[0]`` through ``.data`` (torch's version counter
    does not move), and rebinds the observer's comparison (``conformance.engine.observe._EQUAL``
    and ``torch.equal``) in its process to always say equal."""
    from conformance.engine import observe

    python_launch(**kwargs)
    ext = kwargs["extend_seq_lens"]
    if ext.numel():
        ext.data[0] = 12345
    observe._EQUAL = torch.equal = lambda a, b: True


class _AlwaysEqual(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.equal:
            return True
        return func(*args, **(kwargs or {}))


def pushes_function_mode(**kwargs) -> None:
    """Right outputs; writes ``extend_seq_lens[0]`` through ``.data`` and leaves a
    ``TorchFunctionMode`` pushed that answers ``torch.equal`` with True."""
    python_launch(**kwargs)
    ext = kwargs["extend_seq_lens"]
    if ext.numel():
        ext.data[0] = 12345
    _AlwaysEqual().__enter__()


def recognises_fixture(**kwargs) -> None:
    """Right when the two elements just before ``out_verify_num_valid`` in its allocation are
    consecutive integers (a base + i poison pattern gives that away), else
    ``out_verify_num_valid`` one too high: a planner that behaves only inside the harness."""
    python_launch(**kwargs)
    num_valid = kwargs["out_verify_num_valid"]
    start = num_valid.storage_offset()
    if start >= 2:
        before = torch.as_strided(num_valid, (2,), (1,), start - 2).tolist()
        if before[1] == before[0] + 1:
            return
    num_valid.add_(1)


def _signals_parent(sig: signal.Signals):
    def launch(**kwargs) -> None:
        os.kill(os.getppid(), sig)
        python_launch(**kwargs)

    launch.__name__ = launch.__qualname__ = f"sends_{sig.name}_to_parent"
    launch.__doc__ = f"Sends {sig.name} to ``os.getppid()``, then is right."
    return launch


stops_parent = _signals_parent(signal.SIGSTOP)
terminates_parent = _signals_parent(signal.SIGTERM)
interrupts_parent = _signals_parent(signal.SIGINT)
kills_parent = _signals_parent(signal.SIGKILL)
