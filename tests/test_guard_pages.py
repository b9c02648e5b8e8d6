"""The fenced inputs of the isolation worker (conformance/robustness/guard_pages.py): the layout
that puts one end of an input's views on a page boundary, and the worker's mapping that faults a
read outside them, whose value no output needs to show. Each fault is provoked in a child process
that maps a home as the worker does (a Sender and a Receiver in one process: the Receiver's
mapping is the worker's) and is expected to die of SIGSEGV; the same child's read inside returns
its value."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.robustness.guard_pages import PAGE, fenced_base, view_extent, window
from conformance.robustness.shared_receiver import Receiver
from conformance.robustness.shared_tensors import Sender

ROOT = Path(__file__).resolve().parent.parent
TABLE = "req_to_token"

CHILD = """
import ctypes, os, sys, torch
from conformance.robustness.shared_receiver import Receiver
from conformance.robustness.shared_tensors import Sender
guarded, flat, write = sys.argv[1] == "guarded", int(sys.argv[2]), sys.argv[3:] == ["write"]
values = torch.arange(64, dtype=torch.int32).view(4, 16)
if guarded:  # runs a and b: 16 elements of guard zone each side, inside the storage
    whole = torch.full((96,), 7, dtype=torch.int32)
    whole[16:80] = values.reshape(-1)
    values = whole[16:80].view(4, 16)
sender = Sender(5, fenced={"req_to_token"})
message, fds = sender.describe({"req_to_token": values, "out": torch.zeros(3, dtype=torch.int64)})
table = Receiver().kwargs(message, [os.dup(fd) for fd in fds])["req_to_token"]
if write:
    ctypes.c_int32.from_address(table.data_ptr() + 4 * flat).value = -9
    print("wrote", sender.after_call(), flush=True)
else:
    print("read", ctypes.c_int32.from_address(table.data_ptr() + 4 * flat).value, flush=True)
"""


def _in_a_worker_like_mapping(layout: str, flat: int,
                              *write: str) -> subprocess.CompletedProcess:
    """A child that maps a 4 x 16 int32 table as the worker does (``layout``: ``exact``, the plain
    run's, or ``guarded``, runs a and b's) and reads its flat element ``flat`` by address (or
    writes -9 there, with ``"write"``, and prints what the harness found in the guards)."""
    return subprocess.run([sys.executable, "-c", CHILD, layout, str(flat), *write], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _shared(kwargs: dict, fenced=(TABLE,)) -> tuple[Sender, dict, dict]:
    """(the harness's end, its message's descriptors by name, the worker's arguments)."""
    sender = Sender(9, fenced=fenced)
    message, fds = sender.describe(kwargs)
    return sender, message["kwargs"], Receiver().kwargs(message, [os.dup(fd) for fd in fds])


def test_the_layout_puts_the_views_end_or_start_on_a_page_boundary():
    exact = torch.zeros(64, dtype=torch.int32)  # 256 bytes, no bytes before the view: the end
    assert view_extent(exact) == (0, 256)
    assert fenced_base(0, 256) == 2 * PAGE - 256
    assert window(fenced_base(0, 256), 0, 256) == (PAGE, 2 * PAGE)
    guarded = torch.zeros(96, dtype=torch.int32)[16:80]  # a guard zone before it: the start
    assert view_extent(guarded) == (64, 320)
    assert fenced_base(64, 320) == 2 * PAGE - 64
    assert window(fenced_base(64, 320), 64, 320) == (2 * PAGE, 3 * PAGE)
    assert fenced_base(0, PAGE) == PAGE and window(PAGE, 0, PAGE) == (PAGE, 2 * PAGE)
    strided = torch.zeros(8, 4, dtype=torch.int64)[:, 1]  # elements 1, 5, .., 29
    assert view_extent(strided) == (8, 240)
    assert view_extent(torch.zeros(4, 0, dtype=torch.int32)) == (0, 0)
    assert window(PAGE, 0, 0) == (PAGE, PAGE)  # an empty table: no page to touch


@pytest.mark.parametrize("layout, flat, value", [("exact", 63, 63), ("exact", 0, 0),
                                                 ("guarded", 0, 0), ("guarded", 63, 63),
                                                 ("guarded", 64, 7), ("guarded", 79, 7)])
def test_a_read_inside_the_table_s_pages_returns_its_value(layout, flat, value):
    """The table's own elements, and in runs a and b the back guard zone in its last page (the
    fill proof of conformance/engine/outside.py judges a read there)."""
    child = _in_a_worker_like_mapping(layout, flat)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.split() == ["read", str(value)]


@pytest.mark.parametrize("layout, flat", [("exact", 64), ("exact", 67), ("exact", 64 + 1000),
                                          ("guarded", -1), ("guarded", -12), ("guarded", -16),
                                          ("guarded", 64 + 1024)])
def test_a_read_outside_the_table_faults_in_the_worker(layout, flat):
    """The plain run's exact table: one element past its end (and further) faults; runs a and
    b's guarded table: one element before its start (its guard zone, row -1) faults, and so does a
    read past the rest of its last page."""
    child = _in_a_worker_like_mapping(layout, flat)
    assert child.returncode == -signal.SIGSEGV, (child.returncode, child.stdout,
                                                 child.stderr[-2000:])
    assert "read" not in child.stdout


def test_a_write_past_a_fenced_input_faults_and_one_inside_its_page_is_still_recorded():
    """A write into a fenced page is a crash, no longer an ``outside`` record; in the exact
    table's first page, before its start (not fenced), the hidden guard still records it."""
    child = _in_a_worker_like_mapping("exact", 64, "write")
    assert child.returncode == -signal.SIGSEGV and "wrote" not in child.stdout, child.stdout
    child = _in_a_worker_like_mapping("exact", -1, "write")
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout.startswith("wrote [{'field': 'req_to_token', 'index': -1, 'past': -64, ")
    assert "'got': -9}]" in child.stdout


def test_the_harness_s_mapping_and_the_guards_stay_its_own():
    """Only the worker's view is fenced: the harness still copies in and out and reads the
    guards through the file; a write inside the view reaches the harness."""
    harness = torch.arange(64, dtype=torch.int32).view(4, 16)
    sender, described, theirs = _shared({TABLE: harness})
    assert described[TABLE][-2:] == (2 * PAGE - 256, (PAGE, 2 * PAGE))  # base, pages
    theirs[TABLE][3, 15] = -5
    assert sender.after_call() == []
    assert harness[3, 15].item() == -5 and harness[0, :3].tolist() == [0, 1, 2]
    sender.close()


def test_outputs_and_unnamed_arguments_are_never_fenced():
    table, out = torch.zeros(64, dtype=torch.int32), torch.zeros(5, dtype=torch.int64)
    _, described, _ = _shared({TABLE: table, "out": out})
    assert described["out"][-2:] == (PAGE, None) and described[TABLE][-1] == (PAGE, 2 * PAGE)
    shared = torch.zeros(32, dtype=torch.int64)  # an input and an output on one storage
    _, described, _ = _shared({TABLE: shared[:8], "out": shared[8:]})
    assert described[TABLE][-2:] == (PAGE, None) and described["out"][-1] is None


def test_a_later_longer_view_widens_the_window_and_an_output_view_unfences():
    storage = torch.zeros(1024, dtype=torch.int64)  # 8 KiB: a per-request input's allocation
    sender, described, theirs = _shared({"prefix_lens": storage[:2]}, fenced={"prefix_lens"})
    base = described["prefix_lens"][-2]
    assert (base + 16) % PAGE == 0 and described["prefix_lens"][-1] == (PAGE, 2 * PAGE)
    message, _ = sender.describe({"prefix_lens": storage[:600]})  # a later step's larger bs
    assert message["kwargs"]["prefix_lens"][-1] == (PAGE, 4 * PAGE)  # bytes [0, 4800)
    message, _ = sender.describe({"prefix_lens": storage[:600], "out": storage[600:]})
    assert message["kwargs"]["prefix_lens"][-1] is None
    sender.close()
