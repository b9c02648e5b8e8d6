"""Twelfth hostile review: wrong planners that try to pass the corpus from inside the isolation
worker without touching the harness. Each computes the pure-Python planner's plan (so only its one
bug can fail it) and adds one bug the spec forbids (tests/test_hostile12.py says what the harness
made of each).

* :func:`reads_seed_slot_and_discards`: upstream's read of the seed slot for a request with a
  prefix but no write (spec section 6 row "a prefix but extend 0"), and of a row outside the table,
  each value thrown away: a read outside ``req_to_token`` (a contract failure, section 8) that
  leaves every output right.
* :func:`launders_the_read_past_the_table`: :func:`tests.planted.divergent_planners.reads_past_row`
  with the value it read past the table plus one, so that it is no longer the guard zone's fill
  (the one proof of a read outside that the CPU judge had before the worker's pages around the
  inputs were fenced, conformance/robustness/guard_pages.py).
* :func:`delta_writes`: writes only the offsets that changed since its own last write to the same
  buffer, trusting its memo whenever element ``[0]`` still holds the 0 it wrote there; a caller that
  zeroes ``write_offsets`` between launches (upstream's wrapper does, before every launch) gets
  zeros where the plan did not change.
* :func:`dies_after_the_case`: a thread that kills the worker (SIGSEGV) one second after the last
  call it saw, when no call came since: in a server the process dies after the step.
* :func:`forges_the_reply_ahead`: writes its own ``returned`` reply on the worker's reply pipe
  before planning, then plans; the harness may read the outputs before they are written.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

import torch

from impls.offsets_planner.python_planner import launch as _launch
from impls.offsets_planner.validate import validate_launch

PAGE = 4096


def _read_table_at(table: torch.Tensor, flat: int) -> int | None:
    """The int32 at flat element ``flat`` of ``table``'s row-major memory, read through a raw
    address as a kernel reads it (no bounds check), when it lies within a page of the table (the
    memory that is mapped around every storage in the worker); None further away."""
    nbytes = table.numel() * table.element_size()
    at = flat * table.element_size()
    if not -PAGE < at < nbytes + PAGE:
        return None
    return ctypes.c_int32.from_address(table.data_ptr() + at).value


def reads_seed_slot_and_discards(**kwargs):
    """The right plan; before it, for each active request with a prefix whose seed the contract
    says is not read -- no write (extend <= 0), or a row outside the table -- the seed slot
    ``req_to_token[row, prefix - 1]`` is read anyway, unclamped, as upstream's kernel reads it, and
    the value thrown away. On the corpus's ``hazard-zero-extend-past-table`` (row 3, prefix 20, a
    4 x 16 table) the read lands 3 elements past the table's end; on ``hazard-row-too-large`` a row
    past the last; on ``hazard-row-negative`` before the table's start."""
    plan = validate_launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.dim() == 2 and table.shape[1] > 0:
        rows, cols = table.shape
        stride = table.stride(0)
        triples = zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist(),
                      kwargs["extend_seq_lens"].tolist())
        for row, prefix, extend in list(triples)[:plan.bs]:
            if row != 0 and prefix > 0 and (extend <= 0 or not 0 <= row < rows):
                _read_table_at(table, row * stride + prefix - 1)  # value discarded
    _launch(**kwargs)


def launders_the_read_past_the_table(**kwargs):
    """:func:`tests.planted.divergent_planners.reads_past_row` (upstream's unclamped seed read
    past the row), with every value it read *past the table's last element* stored plus one: a
    value no guard zone holds, so the judge has no proof of the read outside and the seed (decided
    by project rule ``past-row``) reads ``differs``."""
    _launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.dim() != 2 or kwargs["full_to_swa_index_mapping"] is not None:
        return
    rows, cols = table.shape
    seeds = kwargs["out_write_seed_slot_indices"]
    triples = zip(kwargs["req_pool_indices"].tolist(), kwargs["prefix_lens"].tolist(),
                  kwargs["extend_seq_lens"].tolist())
    for r, (row, prefix, extend) in enumerate(triples):
        if row != 0 and 0 <= row < rows and extend > 0 and cols > 0 and prefix - 1 >= cols:
            flat = row * cols + prefix - 1
            value = _read_table_at(table, min(flat, rows * cols + PAGE // 4 - 1))
            if value is None:
                continue
            seeds[r] = value + 1 if flat >= rows * cols else value


_MEMO: dict[int, tuple[torch.Tensor, list[int]]] = {}
"""id of an output tensor -> (the tensor, kept alive so that its id is never reused; the values
this planner last wrote into its first bs + 1 elements)."""
DELTA = ("out_write_offsets", "out_verify_offsets_scratch")
"""The outputs written as deltas: both exclusive scans, whose element [0] is always 0."""


def delta_writes(**kwargs):
    """The right plan, but the two scans are written as a delta against this planner's memo of
    its own last write to the same buffer: only the elements whose value changed are stored. The
    memo is trusted when element ``[0]`` still holds what it wrote there (0): a fresh poison fill
    fails that check and gets the whole scan, and so does a new buffer. A caller that zeroes the
    buffer between launches (upstream's wrapper zeroes ``write_offsets`` before every launch)
    passes the check and keeps zeros wherever the plan did not change."""
    validate_launch(**kwargs)  # every documented error, on the caller's own tensors
    private = {name: kwargs[name].clone() for name in DELTA}
    _launch(**{**kwargs, **private})
    bs = kwargs["req_pool_indices"].numel()
    for name in DELTA:
        out, new = kwargs[name], private[name][:bs + 1].tolist()
        kept = _MEMO.get(id(out))
        old = kept[1] if kept is not None and int(out[0]) == kept[1][0] else None
        for i, value in enumerate(new):
            if old is None or i >= len(old) or old[i] != value:
                out[i] = value
        _MEMO[id(out)] = (out, new)


_LAST_CALL = [0.0]
_WATCHER: list[threading.Thread] = []


def _kill_when_idle() -> None:
    while True:
        time.sleep(0.1)
        if _LAST_CALL[0] and time.monotonic() - _LAST_CALL[0] > 1.0:
            os.kill(os.getpid(), 11)  # SIGSEGV: the worker dies between cases


def dies_after_the_case(**kwargs):
    """The right plan; a thread started at the first call kills the process (SIGSEGV) once a
    second has passed without a call: after the last call of a case, when the harness has its
    answers and no reply is pending."""
    _launch(**kwargs)
    _LAST_CALL[0] = time.monotonic()
    if not _WATCHER:
        _WATCHER.append(threading.Thread(target=_kill_when_idle, daemon=True))
        _WATCHER[0].start()


def _reply_fd() -> int | None:
    """The worker's reply pipe: ``--reply-fd N`` of its own command line."""
    argv = open("/proc/self/cmdline", "rb").read().split(b"\0")
    for flag, value in zip(argv, argv[1:]):
        if flag == b"--reply-fd":
            return int(value)
    return None


def forges_the_reply_ahead(**kwargs):
    """Writes ``{"status": "returned", ...}`` on the worker's reply pipe first, then plans after a
    pause: the harness takes the forged line as this call's reply and reads the outputs at once,
    before the plan is written; the worker's own reply then answers the next call early."""
    fd = _reply_fd()
    if fd is not None:
        os.write(fd, b'{"status": "returned", "returned_none": true, "returned_repr": "None"}\n')
        time.sleep(0.05)
    _launch(**kwargs)
