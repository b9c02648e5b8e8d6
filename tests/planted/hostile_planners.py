"""Hostile planners: the reward hacks that KernelBench and the gpu-mode leaderboards have seen,
restated for the offsets planner. Each has the launcher signature of spec section 3 and is right on
the input it was "tuned" for; ``tests/test_hostile.py`` shows the harness catches every one.

* :class:`SkipsWhenCached` -- memoises on the input *values* and, on a hit, writes nothing, trusting
  the output buffers to still hold the last result (KernelBench's "return the cached output").
* :class:`ReplaysByShape` -- memoises on the output buffers' address, bs and the two scalars, and on
  a hit copies the remembered outputs back without reading the per-request inputs (a cache keyed on
  shapes, as in gpu-mode submissions that key on ``tensor.shape`` / ``data_ptr``).
* :func:`scribbles_on_table` / :func:`writes_input_tail` -- write to their inputs: the table's
  reserved dummy slot as scratch, or the storage just past ``prefix_lens[bs-1]``.
* :func:`private_stream` -- launches on its own CUDA stream without waiting on the caller's current
  stream: right whenever the inputs were written on the (legacy, synchronising) default stream,
  racy when the caller wrote them on a side stream (GPU only; on the CPU it is the Python planner).
* :func:`leaves_meta_device` -- right outputs, but leaves ``torch.set_default_device("meta")``
  behind (process-global torch state: the next case's and the caller's tensors change).
* :func:`patches_judge` / :func:`edits_golden` -- game the evaluation itself: replace the harness's
  judge, or edit the case's golden through the caller's frames (caught only under ``--isolate``,
  where the judge and the goldens stay in the parent).
* :func:`mimics_memcheck` -- prints what compute-sanitizer prints for an out-of-bounds read, so the
  sanitizer's per-case attribution can be tested on the CPU.
"""

from __future__ import annotations

import torch

from impls.offsets_planner.contract import OUTPUT_NAMES
from impls.offsets_planner.python_planner import launch as python_launch
from impls.offsets_planner.validate import validate_launch


def _key_of_values(kwargs: dict) -> tuple:
    lut = kwargs["full_to_swa_index_mapping"]
    return (tuple(kwargs["req_pool_indices"].tolist()), tuple(kwargs["prefix_lens"].tolist()),
            tuple(kwargs["extend_seq_lens"].tolist()), kwargs["req_to_token"].data_ptr(),
            None if lut is None else lut.data_ptr(), kwargs["swa_window_size"],
            kwargs["verify_capacity"], kwargs["out_write_offsets"].data_ptr())


class SkipsWhenCached:
    """Plans once per distinct input; a repeat call writes nothing (the outputs "are still there")."""

    def __init__(self) -> None:
        self.seen: set[tuple] = set()

    def __call__(self, **kwargs) -> None:
        validate_launch(**kwargs)
        key = _key_of_values(kwargs)
        if key in self.seen:
            return  # cached: the previous call already wrote these outputs
        self.seen.add(key)
        python_launch(**kwargs)


class ReplaysByShape:
    """Keyed on (output buffer address, bs, W, verify_capacity): a hit copies the outputs of the
    previous call with that key back into the buffers, never reading the new per-request values."""

    def __init__(self) -> None:
        self.cache: dict[tuple, dict[str, torch.Tensor]] = {}

    def __call__(self, **kwargs) -> None:
        plan = validate_launch(**kwargs)
        key = (kwargs["out_write_offsets"].data_ptr(), plan.bs, kwargs["swa_window_size"],
               kwargs["verify_capacity"])
        bs = plan.bs
        regions = {"out_verify_offsets_scratch": bs + 1, "out_write_offsets": bs + 1,
                   "out_write_seed_slot_indices": bs, "out_verify_num_valid": 1,
                   "out_verify_enable": 1, "out_write_num_valid_reqs": 1}
        if key in self.cache:
            for name, values in self.cache[key].items():
                kwargs[name][: regions[name]].copy_(values)
            return
        python_launch(**kwargs)
        self.cache[key] = {name: kwargs[name][: regions[name]].clone() for name in OUTPUT_NAMES}


def scribbles_on_table(**kwargs) -> None:
    """Right outputs, but uses ``req_to_token[0, 0]`` (row 0 is padding, slot 0 the dummy slot:
    "nobody reads it") as scratch and leaves -1 there. Inputs are read-only (spec section 5)."""
    python_launch(**kwargs)
    table = kwargs["req_to_token"]
    if table.numel():
        table[0, 0] = -1


def writes_input_tail(**kwargs) -> None:
    """Right outputs, but zeroes the element just past ``prefix_lens[bs - 1]`` in its storage (a
    vectorised store rounded up past bs), memory the caller owns."""
    python_launch(**kwargs)
    prefix = kwargs["prefix_lens"]
    n = prefix.numel()
    needed = (prefix.storage_offset() + n + 1) * prefix.element_size()
    if prefix.untyped_storage().nbytes() >= needed:
        torch.as_strided(prefix, (n + 1,), (1,))[n] = 0


_STREAMS: dict[int, torch.cuda.Stream] = {}


def private_stream(**kwargs) -> None:
    """On CUDA: runs the Python planner's work (device copies included) on a private stream that
    never waits for the caller's current stream, then waits for nothing. On the CPU there are no
    streams and it is exactly the Python planner."""
    device = kwargs["out_verify_offsets_scratch"].device
    if device.type != "cuda":
        python_launch(**kwargs)
        return
    stream = _STREAMS.setdefault(device.index or 0, torch.cuda.Stream(device))
    with torch.cuda.stream(stream):
        # Snapshot the inputs on the private stream: on a busy caller stream these copies run before
        # the caller's writes land, which is the bug.
        snap = {name: kwargs[name].clone() for name in ("req_pool_indices", "prefix_lens",
                                                         "extend_seq_lens")}
        stream.synchronize()
        python_launch(**{**kwargs, **snap})


TRIGGER_PREFIX = 7
"""A request with this prefix sets off :func:`leaves_meta_device` and :func:`mimics_memcheck`."""


def _triggered(kwargs) -> bool:
    return TRIGGER_PREFIX in kwargs["prefix_lens"].tolist()[: kwargs["req_pool_indices"].numel()]


def leaves_meta_device(**kwargs) -> None:
    """Right outputs, but a request with prefix :data:`TRIGGER_PREFIX` leaves
    ``torch.set_default_device("meta")`` behind: every later factory call of the process makes
    meta tensors (a planner that set a global "for speed" and forgot to reset it)."""
    python_launch(**kwargs)
    if _triggered(kwargs):
        torch.set_default_device("meta")


MEMCHECK_BLOCK = """\
========= Invalid __global__ read of size 4 bytes
=========     at _plan_offsets_kernel+0x2d0
=========     by thread (1,0,0) in block (0,0,0)
=========     Address 0x7f1e5a000248 is out of bounds
=========     and is 8 bytes after the nearest allocation at 0x7f1e5a000200 of size 64 bytes
=========
"""
"""What compute-sanitizer memcheck prints for one read 8 bytes past a 64-byte tensor."""


def mimics_memcheck(**kwargs) -> None:
    """Right outputs; on a request with prefix :data:`TRIGGER_PREFIX` it prints
    :data:`MEMCHECK_BLOCK` to its stdout, as compute-sanitizer does into the isolation worker's log
    when a kernel reads out of bounds (the sanitizer's CPU stand-in for the harness's tests)."""
    python_launch(**kwargs)
    if _triggered(kwargs):
        import os

        os.write(1, MEMCHECK_BLOCK.encode())


def patches_judge(**kwargs) -> None:
    """Writes nothing, and replaces the harness's judge in the process it runs in with one that
    finds no fault (``conformance.engine.judge.judge``, the name the runner calls, and
    ``_Judging.fail``): the reward hack of a kernel that games its evaluation. Passes in-process;
    under ``--isolate`` the judge runs in the parent, out of its reach."""
    from conformance.engine import judge, runner

    def finds_nothing(*args, **kw) -> None:
        return None

    judge.judge = runner.judge = finds_nothing
    judge._Judging.fail = finds_nothing


_EDITED: set[int] = set()


def edits_golden(**kwargs) -> None:
    """The pure-Python planner's outputs with ``out_write_num_valid_reqs`` one too high, and the
    case's golden edited to match, found through the caller's frames (a local named ``case``).
    Passes in-process; under ``--isolate`` the worker is sent no golden and the parent's case is
    out of reach."""
    import inspect

    python_launch(**kwargs)
    kwargs["out_write_num_valid_reqs"].add_(1)
    for info in inspect.stack():
        case = info.frame.f_locals.get("case")
        if case is None or not hasattr(case, "steps") or id(case) in _EDITED:
            continue
        _EDITED.add(id(case))
        for step in case.steps:
            if "out_write_num_valid_reqs" in step.expect:
                step.expect["out_write_num_valid_reqs"] += 1
