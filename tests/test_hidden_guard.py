"""The hidden guard after every shared CPU storage (conformance/robustness/shared_tensors.py) and
its judging (conformance/engine/judge.py ``past_end``): a write past the end of an argument's
memory is seen even where the planner holds a storage of exactly its tensor's size; the harness's
own storage is never mapped in the worker, only copied to and from its home around each call."""

from __future__ import annotations

import ctypes
import os
import mmap

import pytest
import torch

from conformance.corpus.loader import load_corpus
from conformance.corpus.corpus_subject import CASES_DIR
from conformance.engine.judge import ConformanceFailure, judge
from conformance.engine.observe import Observation, observe
from conformance.engine.runner import Target
from conformance.engine.verdict import CONTRACT, status_of
from conformance.robustness.guard_pages import slack_bytes
from conformance.robustness.shared_receiver import Receiver
from conformance.robustness.shared_tensors import Sender
from impls.offsets_planner.python_planner import launch as python_launch

CPU = torch.device("cpu")
SMEAR = 0x4141_4141_4141_4141


def _shared(kwargs: dict, seed: int = 7) -> tuple[Sender, dict]:
    """(the harness's end, the planner's arguments as the worker maps them) in one process."""
    sender = Sender(seed)
    message, fds = sender.describe(kwargs)
    return sender, Receiver().kwargs(message, [os.dup(fd) for fd in fds])


def _poke(tensor: torch.Tensor, element: int, value: int) -> None:
    """``value`` as int64 at ``tensor``'s element ``element`` (may be past its end), by ctypes."""
    ctypes.c_int64.from_address(tensor.data_ptr() + 8 * element).value = value


@pytest.mark.parametrize("n", [5, 512, 513])  # 512 int64: a storage that ends on a page boundary
def test_a_write_past_the_end_of_an_exact_storage_is_seen_and_the_guard_refilled(n):
    harness = torch.arange(n, dtype=torch.int64)
    sender, theirs = _shared({"out": harness})
    out = theirs["out"]
    assert out.untyped_storage().nbytes() == 8 * n  # the planner sees its exact size
    assert out.tolist() == list(range(n))
    out[0] = -1  # the home, copied back into the harness's storage after the call
    assert harness[0].item() == 0
    _poke(out, n, SMEAR)
    _poke(out, n + 2, SMEAR)
    found = sender.after_call()
    assert harness[0].item() == -1
    assert [(f["field"], f["index"], f["past"], f["got"]) for f in found] == [
        ("out", n, 1, SMEAR), ("out", n + 2, 3, SMEAR)]
    assert all(f["expected"] != SMEAR for f in found)
    assert sender.after_call() == []  # the fill is back: the next call is judged on its own
    assert harness[:3].tolist() == [-1, 1, 2] and harness.numel() == n
    sender.close()


def test_the_guard_reaches_to_the_end_of_the_page_after_the_storage():
    assert slack_bytes(40) == mmap.PAGESIZE - 40 + mmap.PAGESIZE
    assert slack_bytes(mmap.PAGESIZE) == mmap.PAGESIZE
    harness = torch.zeros(5, dtype=torch.int64)
    sender, theirs = _shared({"out": harness})
    last = (8 * 5 + slack_bytes(40)) // 8 - 1  # the guard's last element
    _poke(theirs["out"], last, 1)
    assert [f["past"] for f in sender.after_call()] == [last - 5 + 1]


def test_a_view_is_reported_by_its_own_index_and_a_write_inside_the_storage_is_not_past_end():
    whole = torch.zeros(12, dtype=torch.int64)
    sender, theirs = _shared({"out": whole[4:8]})  # the poisoned runs' shape: a guarded allocation
    _poke(theirs["out"], 6, 9)  # inside the storage (the guard zone the judge compares)
    assert sender.after_call() == []
    _poke(theirs["out"], 8, 9)  # the storage's first byte past its end: view index 8
    assert [(f["index"], f["past"], f["got"]) for f in sender.after_call()] == [(8, 5, 9)]


def test_the_worker_sees_the_harness_s_bytes_of_each_call_and_never_its_memory():
    harness = torch.zeros(4, dtype=torch.int64)
    sender, theirs = _shared({"out": harness})
    out = theirs["out"]
    assert out.data_ptr() != harness.data_ptr()
    harness[1] = 5  # the next step's values, written in place between calls
    out[2] = 7  # what the planner left
    sender.describe({"out": harness})  # the next call: the harness's bytes win
    assert out.tolist() == [0, 5, 0, 0]
    out[3] = 9
    assert sender.after_call() == [] and harness.tolist() == [0, 5, 0, 9]


def test_the_guard_fill_is_drawn_from_the_seed():
    fills = []
    for seed in (1, 1, 2):
        sender, theirs = _shared({"out": torch.zeros(5, dtype=torch.int64)}, seed)
        _poke(theirs["out"], 5, 0)
        fills.append(sender.after_call()[0]["expected"])
    assert fills[0] == fills[1] != fills[2]


def test_a_past_end_record_is_an_oob_verdict_with_its_element():
    case = next(c for c in load_corpus([CASES_DIR])[0] if c.id == "spec7-prefill-and-decodes")
    seen = observe(case, Target("python", python_launch, CPU))
    plain = seen.steps[-1]
    assert plain.run == "plain" and plain.past_end == []
    plain.past_end = [{"field": "out_write_offsets", "index": 4, "past": 1, "expected": 5,
                       "got": SMEAR}]
    seen = Observation.from_json(seen.to_json())  # the record survives the observation's JSON
    with pytest.raises(ConformanceFailure) as failure:
        judge(case, seen, "p", CPU)
    verdict = failure.value.verdict
    assert status_of(verdict, ("contract",)) == ("oob", (CONTRACT,))
    (diff,) = verdict.differences
    assert (diff.run, diff.what, diff.field, diff.index, diff.expected, diff.got, diff.rule) == (
        "plain", "outside", "out_write_offsets", 4, 5, SMEAR, CONTRACT)
    assert verdict.outside == ("the planner wrote outside out_write_offsets (1 past its end, "
                               "into memory the harness mapped after its allocation)")
    text = str(failure.value)
    assert ("out_write_offsets: wrote 1 element(s) past the end of its allocation, the first 1 "
            f"past its end (got {SMEAR} where the hidden guard held 5)") in text
    assert "spec §6: no implementation may ever read or write outside a tensor" in text
