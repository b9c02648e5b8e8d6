"""Planted planners that fake a floor of the benchmark by its module: the bench imports a floor's
kernels from a module of its own (``conformance/bench/chain_triton.py``, ``chain_numba.py``,
``empty_triton.py``) by name, and a planner runs in the bench's process before the floors are
timed (``test_plan`` runs first). ``tests/test_bench_floor_modules.py`` runs the bench on them.

* ``fakes_chain_triton``: plans with the pure-Python planner; resolving it puts a module of its
  own in ``sys.modules['conformance.bench.chain_triton']`` (before the bench imported the real
  one), whose ``chain_kernel`` writes the very seeds the floor's check compares (the plan's) and
  sleeps :data:`EXTRA_S` per launch: the ``chain-triton`` floor is slower, so every Triton
  planner's ratio to it (``x chain``) shrinks.

It patches when the harness resolves it (this module's ``__getattr__``), i.e. at the planner's
import as the harness sees it, so that importing this module for another reason patches nothing.
With ``CONFORMANCE_FAKE_FLOOR_LOG`` set, each launch of the fake appends a line to that file
(what the test reads to see whether the bench timed it).
"""

from __future__ import annotations

import os
import sys
import time
import types

from impls.offsets_planner import python_planner

TARGET = "conformance.bench.chain_triton"
EXTRA_S = 0.02
"""Seconds a launch of the fake chain kernel sleeps: the floor it stands for made slower."""
LOG_ENV = "CONFORMANCE_FAKE_FLOOR_LOG"


def _chain(rpi, prefix, extend, table, lut, out, bs, stride0, max_reqs, max_seq_len, lut_len,
           has_lut: bool) -> None:
    """What conformance/bench/chain_triton.py's kernel writes, in Python: per lane the table
    entry the request points at, through the LUT, or -1."""
    flat = table.reshape(-1)
    for lane in range(bs):
        row, p, e = int(rpi[lane]), int(prefix[lane]), int(extend[lane])
        pos = min(p - 1, max_seq_len - 1)
        has = 0 < row < max_reqs and p > 0 and e > 0 and pos >= 0
        slot = int(flat[row * stride0 + pos]) if has else -1
        if has and has_lut:
            slot = int(lut[min(slot, lut_len - 1)]) if slot >= 0 else -1
        out[lane] = slot


class _FakeKernel:
    """``chain_kernel[grid](*args, BLOCK=..., HAS_LUT=..., num_warps=...)`` as the floor calls
    it: the right seeds, :data:`EXTRA_S` later."""

    def __getitem__(self, grid):
        def launch(*args, BLOCK=None, HAS_LUT=False, num_warps=None):  # noqa: N803
            _chain(*args, has_lut=bool(HAS_LUT))
            time.sleep(EXTRA_S)
            log = os.environ.get(LOG_ENV)
            if log:
                with open(log, "a") as handle:
                    handle.write(f"fake chain_kernel launched, grid {grid}\n")
        return launch


def fake_module() -> types.ModuleType:
    """The module put in ``sys.modules`` in place of conformance/bench/chain_triton.py."""
    module = types.ModuleType(TARGET, "a fake of the chain floor's kernel module")
    module.chain_kernel = _FakeKernel()
    return module


_PLANTED: list[types.ModuleType] = []


def __getattr__(name: str):
    if name != "fakes_chain_triton":
        raise AttributeError(name)
    if not _PLANTED:
        _PLANTED.append(fake_module())
        sys.modules[TARGET] = _PLANTED[0]
    return python_planner.launch
