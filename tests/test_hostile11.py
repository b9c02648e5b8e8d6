"""Eleventh hostile review, kept as tests: planners that attack the hidden guards around every CPU
storage shared with the isolation worker (conformance/robustness/shared_tensors.py) from inside
the worker. Planted: tests/planted/hostile11_guard.py. Each test asserts what the harness must do;
an attack that still works is a strict xfail whose reason names the hole and the fix.

Two holes were closed in this review (shared_tensors.py): the worker could cut the shared file
(``ftruncate`` on the descriptor its ``mmap`` keeps), which took the pages from under pytest's own
mapping, a SIGBUS in pytest that ended the run without results; and the guard lay only after a
storage, so a write just before an argument's first element (``out[-1]``) on the plain run's
exact-size buffers went unseen. Each storage now lives in a sealed ``memfd`` of the harness's own,
with a guard page before it as well as after it.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os

import pytest
import torch

from conformance.robustness.guard_pages import FRONT
from conformance.robustness.shared_receiver import Receiver
from conformance.robustness.shared_tensors import Sender
from tests.planner_folder_runs import corpus_run, results_of

PLANTED = "tests.planted.hostile11_guard"
CASE = "spec7-prefill-and-decodes"
SMEAR = 0x4141_4141_4141_4141
IN_ONE_RUN = ("correct", "restores_the_guard", "truncate_shared_files", "underflow_on_plain",
              "writes_into_another_arguments_guard", "late_write_from_a_thread")


def _item(planner: str) -> str:
    return f"{CASE}[{PLANTED}:{planner}]"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """One corpus run of the planners of :data:`IN_ONE_RUN` on one case: (exit code, output,
    {planner: status}, {planner: its result as the results file keeps it})."""
    results = tmp_path_factory.mktemp("hostile11") / "results.json"
    proc = corpus_run(None, results, *(a for p in IN_ONE_RUN for a in ("--planner",
                                                                       f"{PLANTED}:{p}")),
                      "--case", CASE)
    assert results.exists(), proc.stdout[-3000:] + proc.stderr[-2000:]
    statuses = {r["id"]: r["status"] for r in results_of(results)}
    kept = {r["id"]: r for r in results_of(results)}
    return (proc.returncode, proc.stdout + proc.stderr,
            {p: statuses.get(_item(p)) for p in IN_ONE_RUN},
            {p: kept.get(_item(p)) for p in IN_ONE_RUN})


def _report(out: str, planner: str) -> str:
    block = out[out.index(f"_ {_item(planner)} _"):]
    return block[:block.index("\n_", 1)] if "\n_" in block[1:] else block


# === the harness's end, in one process ========================================================


def _shared(kwargs: dict, seed: int = 11) -> tuple[Sender, dict, list[int]]:
    sender = Sender(seed)
    message, fds = sender.describe(kwargs)
    theirs = [os.dup(fd) for fd in fds]
    return sender, Receiver().kwargs(message, [os.dup(fd) for fd in theirs]), theirs


def test_the_worker_cannot_cut_or_seal_the_shared_file():
    """Caught: the file is a memfd sealed against shrinking, growing and further seals before
    the worker gets it. Cut, the harness's own mapping lost its pages (a SIGBUS in pytest on its
    next read); sealed ``F_SEAL_FUTURE_WRITE``, the harness's ``pwrite`` of its guards failed."""
    harness = torch.arange(5, dtype=torch.int64)
    sender, _, (fd,) = _shared({"out": harness})
    with pytest.raises(PermissionError):
        os.ftruncate(fd, 0)
    with pytest.raises(PermissionError):
        os.ftruncate(fd, 10 * mmap.PAGESIZE)
    with pytest.raises(PermissionError):
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x10))
    assert harness.tolist() == [0, 1, 2, 3, 4]  # still readable: nothing was cut
    os.close(fd)
    sender.close()


def test_a_write_before_the_first_element_is_seen_in_the_front_guard():
    """Caught: a page of guard before every storage; ``index`` is negative there."""
    harness = torch.zeros(5, dtype=torch.int64)
    sender, theirs, fds = _shared({"out": harness})
    out = theirs["out"]
    assert out.untyped_storage().nbytes() == 40  # still exactly its size for the planner
    ctypes.c_int64.from_address(out.data_ptr() - 8).value = SMEAR
    ctypes.c_int64.from_address(out.data_ptr() - FRONT).value = 7  # the page's first byte
    found = sender.after_call()
    assert [(f["index"], f["past"], f["got"]) for f in found] == [
        (-FRONT // 8, -FRONT // 8 - 4, 7), (-1, -5, SMEAR)]
    assert sender.after_call() == []  # both fills are back
    assert harness.tolist() == [0] * 5
    for fd in fds:
        os.close(fd)
    sender.close()


def test_every_view_of_a_shared_storage_holds_what_the_worker_left_after_the_call():
    """The home is copied back into the harness's storage, whole: views made before the call
    (and views not handed to the worker) read what the planner wrote."""
    whole = torch.arange(12, dtype=torch.int64)
    view, other = whole[4:8], whole[0:2]
    sender, theirs, fds = _shared({"out": view})
    theirs["out"][0] = -4
    assert sender.after_call() == []
    assert whole.tolist()[:5] == [0, 1, 2, 3, -4] and view[0].item() == -4
    other[1] = -1  # the harness's write reaches the worker at the next call
    sender.describe({"out": view})
    seen = torch.empty(0, dtype=torch.int64).set_(theirs["out"].untyped_storage(), 0, (12,), (1,))
    assert seen.tolist()[:5] == [0, -1, 2, 3, -4]
    for fd in fds:
        os.close(fd)
    sender.close()


# === planners in the worker ===================================================================


@pytest.mark.slow
def test_a_correct_planner_and_one_that_restores_the_guard_pass(hostile_run):
    """No false ``oob``: nothing written outside, or nothing left there."""
    _, out, statuses, kept = hostile_run
    assert statuses["correct"] == "pass", out[-3000:]
    assert statuses["restores_the_guard"] == "pass", out[-3000:]


@pytest.mark.slow
def test_cutting_the_shared_file_in_the_call_is_refused(hostile_run):
    """Caught: ``ftruncate`` raises in the planner (the file is sealed), which fails the case."""
    _, out, statuses, kept = hostile_run
    assert statuses["truncate_shared_files"] == "fail", out[-3000:]
    assert "raised PermissionError on a valid step" in _report(out, "truncate_shared_files")


@pytest.mark.slow
def test_a_write_just_before_an_output_on_plain_buffers_is_oob(hostile_run):
    """Caught (was green: the guard lay only after a storage, and the planner mapped a page of its
    own under the lowest one): the front guard page."""
    _, out, statuses, kept = hostile_run
    assert statuses["underflow_on_plain"] == "oob", out[-3000:]
    report = _report(out, "underflow_on_plain")
    assert "wrote 1 element(s) outside its allocation, the first 1 before its start (got " \
           f"{SMEAR} where the hidden guard held" in report, report[:3000]


@pytest.mark.slow
def test_a_write_into_another_arguments_guard_is_reported_under_that_argument(hostile_run):
    _, out, statuses, kept = hostile_run
    assert statuses["writes_into_another_arguments_guard"] == "oob", out[-3000:]
    report = _report(out, "writes_into_another_arguments_guard")
    assert "out_write_seed_slot_indices: wrote 1 element(s) past the end of its allocation, the " \
           "first 1 past its end" in report, report[:3000]


@pytest.mark.slow
def test_a_late_write_into_the_guard_after_the_last_call_is_seen(hostile_run):
    """Caught: the case's shared storages are read once more before the worker's next case, or
    after the linger at the end of the run (conformance/robustness/late_writes.py)."""
    _, out, statuses, kept = hostile_run
    assert statuses["late_write_from_a_thread"] == "oob", out[-3000:]
    assert "the planner wrote after the case's last call returned" in out, out[-3000:]
    # what the results file keeps of it, and what the summary's failure groups say (data, not
    # the report's text: conformance/reporting/failure_groups.py)
    late, correct = kept["late_write_from_a_thread"], kept["correct"]
    assert late["after_last_call"] == "write-outside"
    assert correct["after_last_call"] is None
    assert kept["underflow_on_plain"]["after_last_call"] is None
    # its rerun is the one its report prints: isolated, as the failure needs
    assert late["rerun"].endswith(" --isolate") and f"rerun: {late['rerun']}" in out
    assert not correct["rerun"].endswith(" --isolate")
    assert "oob: wrote outside an argument after the case's last call" in out, out[-3000:]


@pytest.mark.slow
def test_cutting_the_shared_files_between_calls_does_not_end_pytest(tmp_path):
    """Caught (was a SIGBUS in pytest, exit 135, no results): a worker thread that cuts every
    shared file to nothing again and again between calls; the files are sealed, every cut fails,
    and the run completes. The planner computes right and leaves nothing changed: it passes."""
    results = tmp_path / "results.json"
    proc = corpus_run(None, results, "--planner", f"{PLANTED}:truncate_between_calls",
                      "--case", CASE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = __import__("json").loads(results.read_text())
    assert doc["complete"] is True
    assert [r["status"] for r in doc["results"]] == ["pass"]
