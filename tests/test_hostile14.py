"""Fourteenth hostile review, kept as tests: wrong planners whose bytes are right in the harness's
tensors and which harm their caller's process another way (planted:
tests/planted/hostile14_planners.py). Each test asserts what the harness must do; an attack that
still works would be a strict xfail whose reason names the hole and a fix. Each planner is also
shown wrong outside the harness, so that a green run of it is a wrong verdict and not a harmless
quirk.

All five passed the whole offsets-planner corpus (``squeezes_the_scalars``: 231 of 231, exit 0)
before this review. Fixed here:

* the caller's tensor objects: the isolation worker hands the planner the same tensor object for
  the same view through a case (as a server does its graph buffers), but never looked at the
  object after a call, and the judge reads only its own tensors' bytes: a planner that left the
  three one-element outputs 0-d (``squeeze_``; the server's next ``t[0]`` raises) passed. Now the
  worker compares every tensor argument with its descriptor after every call (dtype, shape,
  strides, offset, storage: ``Receiver.altered``, conformance/robustness/shared_receiver.py), and a
  change fails the case as changed state does;
* process-global state beyond torch's settings (conformance/robustness/torch_state.py, read
  through torch_settings.py and process_state.py): the bindings of ``torch.nn.functional`` (only
  ``torch`` and ``torch.Tensor`` were watched), the calling thread's floating-point environment
  (``torch.set_flush_denormal(True)``, ``fesetround(FE_UPWARD)``) and Python's cyclic garbage
  collector (``gc.disable()``);
* then (the review's stated limits, closed at once): the working directory (``os.chdir``) and the
  signal handlers (``SIGTERM`` ignored).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from tests.planner_folder_runs import ROOT, planted_run

PLANTED = "tests.planted.hostile14_planners"
CASES = ("spec7-prefill-and-decodes", "steps-same-shape-decodes")
HEAD = "changed process-global torch state, or its caller's tensor objects"


def _run(tmp_path, planner: str, *cases: str):
    """(exit code, output, {case id: status}) of one corpus run of ``planner``."""
    return planted_run(tmp_path, f"{PLANTED}:{planner}", *cases)


def _kwargs() -> dict:
    """Spec section 7's third example (rpi [1, 2, 3], prefix [0, 4, 10], extend [8, 1, 1]) on the
    linear 4 x 16 table, no LUT, outputs as upstream allocates them."""
    return {"req_pool_indices": torch.tensor([1, 2, 3]), "prefix_lens": torch.tensor([0, 4, 10]),
            "extend_seq_lens": torch.tensor([8, 1, 1]),
            "req_to_token": torch.arange(64, dtype=torch.int32).view(4, 16),
            "full_to_swa_index_mapping": None,
            "out_verify_offsets_scratch": torch.zeros(4097, dtype=torch.int64),
            "out_write_offsets": torch.zeros(4, dtype=torch.int64),
            "out_write_seed_slot_indices": torch.zeros(3, dtype=torch.int64),
            "out_verify_num_valid": torch.zeros(1, dtype=torch.int32),
            "out_verify_enable": torch.ones(1, dtype=torch.int32),
            "out_write_num_valid_reqs": torch.zeros(1, dtype=torch.int32),
            "swa_window_size": 0, "verify_capacity": 1000}


# === the caller's tensor objects ==============================================================


def test_the_squeezing_planner_plans_right_but_breaks_its_callers_next_read():
    """Outside the harness: every value is section 7's, two steps running, but after each call the
    caller's ``out_verify_num_valid`` is 0-d, so the server's ``out_verify_num_valid[0]`` raises."""
    from tests.planted.hostile14_planners import squeezes_the_scalars

    kwargs = _kwargs()
    for _ in range(2):  # the same objects again, as a server replays its buffers
        kwargs["out_write_offsets"].zero_()
        squeezes_the_scalars(**kwargs)
        assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]
        assert int(kwargs["out_verify_num_valid"]) == 14 and int(kwargs["out_verify_enable"]) == 1
        assert kwargs["out_verify_num_valid"].shape == ()
        with pytest.raises(IndexError):
            kwargs["out_verify_num_valid"][0]


def test_the_worker_names_every_change_of_an_arguments_tensor_object():
    """``Receiver.altered`` in this process, on a Sender's descriptors: a 0-d output, a
    transposed input, a rebound storage; an untouched argument is not named."""
    from conformance.robustness.shared_receiver import Receiver
    from conformance.robustness.shared_tensors import Sender

    sender, receiver = Sender(), Receiver()
    try:
        message, fds = sender.describe({"a": torch.zeros(1, dtype=torch.int32),
                                        "table": torch.zeros(2, 3, dtype=torch.int32),
                                        "b": torch.zeros(4), "c": torch.zeros(2), "n": 7})
        kwargs = receiver.kwargs(message, [os.dup(fd) for fd in fds])
        assert receiver.altered(message, kwargs) == []
        kwargs["a"].squeeze_()
        kwargs["table"].t_()
        kwargs["b"].set_(torch.zeros(4).untyped_storage())
        lines = receiver.altered(message, kwargs)
        assert [line.split(":")[0] for line in lines] == ["argument a", "argument table",
                                                          "argument b"], lines
        assert "shape (1,) -> ()" in lines[0] and "strides (3, 1) -> (1, 3)" in lines[1], lines
        assert "no longer the caller's memory" in lines[2], lines
    finally:
        sender.close()


@pytest.mark.slow
def test_a_planner_that_leaves_its_outputs_0_d_fails(tmp_path):
    """Fixed: the judge read the right bytes from its own tensors and the worker never looked at
    the planner's objects: both cases passed (and the whole corpus). Now each is ``fail``, naming
    the three arguments."""
    code, out, statuses = _run(tmp_path, "squeezes_the_scalars", *CASES)
    assert code == 1 and statuses == {c: "fail" for c in CASES}, (code, statuses, out[-3000:])
    assert HEAD in out, out[-3000:]
    for name in ("out_verify_num_valid", "out_verify_enable", "out_write_num_valid_reqs"):
        assert f"argument {name}: shape (1,) -> ()" in out, out[-3000:]


# === process-global state beyond torch's settings =============================================


EFFECTS = {
    "rebinds_functional": "print(torch.nn.functional.softmax(torch.ones(2), dim=0).tolist())",
    "flushes_denormals": "tiny = [5e-324]; print(tiny[0] * 1.0)",
    "rounds_upward": "one, tiny = [1.0], [2.0 ** -60]; print(one[0] + tiny[0] > 1.0)",
    "disables_gc": "import gc; print(gc.isenabled())",
    "changes_directory": "import os; print(os.getcwd() == sys.path[0])",
    "ignores_sigterm": "import signal; print(signal.getsignal(signal.SIGTERM).name)",
}
"""Per planner, a line whose output, printed after one right call, shows what it did to the
process (before the call: ``[0.5, 0.5]``, ``5e-324``, ``False``, ``True``, ``True``,
``SIG_DFL``)."""
AFTER = {"rebinds_functional": "[0.0, 0.0]", "flushes_denormals": "0.0",
         "rounds_upward": "True", "disables_gc": "False", "changes_directory": "False",
         "ignores_sigterm": "SIG_IGN"}
STATE_LINES = {"rebinds_functional": "torch bindings: rebound torch.nn.functional.softmax",
               "flushes_denormals": "(0, False) -> (0, True)",
               "rounds_upward": "(0, False) -> (2048, False)",
               "disables_gc": "Python garbage collector enabled: True -> False",
               "changes_directory": "working directory: ",
               "ignores_sigterm": "signal handlers: changed for SIGTERM"}

CALL_THEN = textwrap.dedent("""
    import sys, torch
    sys.path.insert(0, {root!r})
    from tests import test_hostile14 as t
    from tests.planted import hostile14_planners as planted
    {effect}
    kwargs = t._kwargs()
    planted.{planner}(**kwargs)
    assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7: right
    {effect}
""")


@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_each_global_state_planner_changes_its_callers_arithmetic(planner):
    """Outside the harness, in a process of its own: one right call, and the same line of the
    caller's computes another value after it."""
    code = CALL_THEN.format(root=str(ROOT), planner=planner, effect=EFFECTS[planner])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    before, after = proc.stdout.splitlines()
    assert after == AFTER[planner] and before != after, proc.stdout


@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_the_snapshot_names_each_change_and_sets_it_back(planner):
    """conformance/robustness/torch_state.py, in this process: the planner's change is named and
    :func:`restore` puts it back (the in-process runs' path)."""
    from conformance.robustness import torch_state
    from tests.planted import hostile14_planners as planted

    before = torch_state.snapshot()
    softmax = torch.nn.functional.softmax
    try:
        getattr(planted, planner)(**_kwargs())
        changes = torch_state.changes(before, torch_state.snapshot())
        assert any(STATE_LINES[planner] in c for c in changes), changes
        assert torch_state.restore(before) == []
        assert torch_state.changes(before, torch_state.snapshot()) == []
    finally:
        torch.nn.functional.softmax = softmax
        torch_state.restore(before)


@pytest.mark.slow
@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_a_planner_that_changes_its_processs_state_fails(tmp_path, planner):
    """Fixed: none of these was among the settings the worker compares at a case's end, so both
    cases passed. Now each is ``fail``, naming the setting."""
    code, out, statuses = _run(tmp_path, planner, *CASES)
    assert code == 1 and statuses == {c: "fail" for c in CASES}, (code, statuses, out[-3000:])
    assert HEAD in out and STATE_LINES[planner] in out, out[-3000:]
