"""Thirteenth hostile review, kept as tests: wrong planners aimed at the newest parts of the
harness -- the linger that makes a worker's death after its case's last call that case's failure,
and the plain run (planted: tests/planted/hostile13_planners.py). Each test asserts what the
harness must do; an attack that still works is a strict xfail whose reason names the hole and a
fix. Each planner is also shown wrong outside the harness, so that a green run of it is a wrong
verdict and not a harmless quirk.

Fixed here:
* a worker that, after its last case's last call, stops itself (SIGSTOP, or any hang) or stops its
  parent never dies, so the linger saw nothing and the harness's own SIGKILL, five seconds after
  telling it to end, was nobody's death: the run was green. Now a worker that does not end within
  5 s of being told to is a death of its last case (conformance/robustness/worker_process.py).
* error cases never ran plain: a planner that raised its documented errors only on the harness's
  poisoned outputs, and swallowed them on buffers as a server hands them over, passed all 113
  ``err-`` launcher cases. Now every launcher case runs plain (conformance/engine/plain.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

from tests.planner_folder_runs import ROOT, planted_run

PLANTED = "tests.planted.hostile13_planners"


def _run(tmp_path, planner: str, *cases: str):
    """(exit code, output, {case id: status}) of one corpus run of ``planner``."""
    return planted_run(tmp_path, f"{PLANTED}:{planner}", *cases)


def _kwargs(bs_capacity: int = 8, enable: int = 1, **requests) -> dict:
    """A launcher's keyword arguments on the spec's linear 4 x 16 table (section 7), no LUT, the
    outputs as upstream allocates them (zeros, ``enable`` ones) unless ``enable`` says."""
    table = torch.arange(64, dtype=torch.int32).view(4, 16)
    return {"req_pool_indices": torch.tensor(requests["rpi"]),
            "prefix_lens": torch.tensor(requests["prefix"]),
            "extend_seq_lens": torch.tensor(requests["extend"]),
            "req_to_token": table, "full_to_swa_index_mapping": None,
            "out_verify_offsets_scratch": torch.zeros(4097, dtype=torch.int64),
            "out_write_offsets": torch.zeros(bs_capacity + 1, dtype=torch.int64),
            "out_write_seed_slot_indices": torch.zeros(bs_capacity, dtype=torch.int64),
            "out_verify_num_valid": torch.zeros(1, dtype=torch.int32),
            "out_verify_enable": torch.full((1,), enable, dtype=torch.int32),
            "out_write_num_valid_reqs": torch.zeros(1, dtype=torch.int32),
            "swa_window_size": 0, "verify_capacity": 1000}


def _state(pid: int) -> str:
    """The one-letter state of process ``pid`` (``T``: stopped), ``X`` when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("State:"):
                    return line.split()[1]
    except OSError:
        pass
    return "X"


def _wait_for_state(pid: int, want: str, seconds: float) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end and _state(pid) != want:
        time.sleep(0.05)
    return _state(pid)


CALL_ONCE = textwrap.dedent("""
    import sys, time, torch
    sys.path.insert(0, {root!r})
    from tests.planted import hostile13_planners as planted
    table = torch.arange(64, dtype=torch.int32).view(4, 16)
    kwargs = dict(req_pool_indices=torch.tensor([1, 2, 3]), prefix_lens=torch.tensor([0, 4, 10]),
                  extend_seq_lens=torch.tensor([8, 1, 1]), req_to_token=table,
                  full_to_swa_index_mapping=None,
                  out_verify_offsets_scratch=torch.zeros(4097, dtype=torch.int64),
                  out_write_offsets=torch.zeros(4, dtype=torch.int64),
                  out_write_seed_slot_indices=torch.zeros(3, dtype=torch.int64),
                  out_verify_num_valid=torch.zeros(1, dtype=torch.int32),
                  out_verify_enable=torch.ones(1, dtype=torch.int32),
                  out_write_num_valid_reqs=torch.zeros(1, dtype=torch.int32),
                  swa_window_size=0, verify_capacity=1000)
    planted.{planner}(**kwargs)
    assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7: the right plan
    print("planned", flush=True)
    time.sleep(4)
    print("still running", flush=True)
""")


# === a hang after the case's last call ========================================================


def test_the_self_stopping_planner_freezes_the_process_after_the_step():
    """Outside the harness: one right call, then the process that made it is stopped for good
    (a server's process hangs after the step) within two seconds."""
    code = CALL_ONCE.format(root=str(ROOT), planner="stops_itself_after_the_case")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "planned"
        assert _wait_for_state(proc.pid, "T", 5.0) == "T"
        time.sleep(4.5)
        assert proc.poll() is None and _state(proc.pid) == "T"  # it never printed "still running"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_a_planner_that_stops_itself_after_its_last_case_fails_that_case(tmp_path):
    """Fixed: the stopped worker never died, so the linger (conformance/robustness/
    worker_process.py) waited for nothing, and the SIGKILL the harness sends a worker that does
    not end within 5 s of being told to was nobody's death: exit 0, every case pass. Now such a
    worker is a death of its last case (``crash``, a teardown error)."""
    code, out, statuses = _run(tmp_path, "stops_itself_after_the_case",
                               "spec7-prefill-and-decodes", "steps-same-shape-decodes")
    assert code == 1 and "crash" in statuses.values(), (code, statuses, out[-3000:])
    assert "did not end within 5 s of being told to, after the case's last call" in out, \
        out[-3000:]
    assert "it hung or was stopped" in out, out[-3000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert sorted(str(r["after_last_call"]) for r in doc["results"]) == ["None", "hang"]
    assert "crash: the worker hung or was stopped after the case's last call" in out, out[-3000:]


def test_the_parent_stopping_planner_stops_its_callers_parent():
    """Outside the harness: a process whose child made one right call is stopped (SIGSTOP from
    that child) within two seconds of the call."""
    child = CALL_ONCE.format(root=str(ROOT), planner="stops_its_parent_after_the_case")
    parent_code = (f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])")
    parent = subprocess.Popen([sys.executable, "-c", parent_code])
    try:
        assert _wait_for_state(parent.pid, "T", 30.0) == "T"
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.slow
def test_a_planner_that_stops_its_parent_after_its_last_case_fails_that_case(tmp_path):
    """Fixed: stopping the worker's parent (the shepherd) is a ``crash`` when the harness sees it
    after a reply (``WorkerProcess.tampered``); after the last case's last call no reply comes, the
    worker ends at stdin EOF but its stopped parent cannot, and the harness's SIGKILL after 5 s
    was nobody's death. Now it is the last case's, named as tampering."""
    code, out, statuses = _run(tmp_path, "stops_its_parent_after_the_case",
                               "spec7-prefill-and-decodes", "steps-same-shape-decodes")
    assert code == 1 and "crash" in statuses.values(), (code, statuses, out[-3000:])
    assert "the planner stopped the worker's parent process (SIGSTOP to os.getppid())" in out, \
        out[-3000:]


# === documented errors raised only on poisoned outputs ========================================


def test_the_poison_validating_planner_swallows_errors_on_a_servers_buffers():
    """Outside the harness: bs 3 on a write plan of capacity 2 must raise spec section 4 item
    14's ValueError; on outputs as upstream allocates them (zeros, enable 1) the call returns
    None, raising only when ``out_verify_enable`` holds a value no caller leaves there."""
    from tests.planted.hostile13_planners import validates_only_on_poison

    requests = {"rpi": [1, 2, 3], "prefix": [4, 6, 2], "extend": [1, 1, 1]}
    assert validates_only_on_poison(**_kwargs(bs_capacity=2, **requests)) is None
    with pytest.raises(ValueError, match=r"^kv-canary: bs=3 exceeds write_req_capacity=2$"):
        validates_only_on_poison(**_kwargs(bs_capacity=2, enable=-123456789, **requests))


ERROR_CASES = ("err-bs-exceeds-capacity", "err-dtype-prefix-lens", "err-contiguous-req-to-token",
               "err-verify-capacity-negative", "err-steps-bs-exceeds-between-valid")


@pytest.mark.slow
def test_documented_errors_raised_only_on_poisoned_outputs_fail(tmp_path):
    """Fixed: error cases ran only on the poisoned, guarded buffers (the plain run took valid cases
    only), so this planner passed all 113 ``err-`` launcher cases and, being the pure-Python
    planner elsewhere, the whole corpus. Now every launcher case runs plain too, where each of
    these returns normally: ``no-error``, a contract failure seen only on plain buffers."""
    code, out, statuses = _run(tmp_path, "validates_only_on_poison", *ERROR_CASES)
    assert code == 1 and statuses == {c: "fail" for c in ERROR_CASES}, \
        (code, statuses, out[-3000:])
    assert "both poisoned runs matched, so this appeared only on plain buffers" in out, out[-3000:]
    assert "but the call returned normally" in out, out[-3000:]


def test_a_stopped_worker_that_ran_no_case_is_nobodys_death():
    """The hang record needs a case that ended last (and no end the harness made): a worker
    stopped before any case ran is killed at the pool's close with no death recorded."""
    from conformance.robustness.isolation import WorkerPool

    pool = WorkerPool()
    try:
        w = pool.get(f"{PLANTED}:stops_itself_after_the_case")
        w.spawn()
        w.ensure_ready()
        os.kill(w.pid, signal.SIGSTOP)  # stopped, but no case ever ran: nobody's
        assert pool.close() == []
    finally:
        pool.close()
