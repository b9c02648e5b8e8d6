"""Planted planners for the fifth hostile review of the benchmark (``tests/test_hostile5.py``):
each is an external ``module:attr`` planner that the bench imports in its own process. Each patches
when the harness resolves it (this module's ``__getattr__``: at the planner's import as the
harness sees it), so that importing this module for another reason patches nothing.

* ``agrees_with_patched_reference``: plans every request without a seed (its seeds all ``-1``:
  it skips the table and LUT gathers, the dependent loads a plan cannot avoid), and on resolution
  rebinds ``seed_positions`` in ``impls/offsets_planner/python_planner.py``, the module whose
  ``plan_values`` the bench's re-judging calls (``conformance.bench.rejudge.reference_values``):
  the reference then plans no seed either, and every judged call agrees with it. ``plan_values``
  itself is watched by name; the helpers it calls through its module's globals are not.
* ``rebinds_plan_values`` (the obvious way, for contrast): the same wrong plan, with
  ``conformance.bench.rejudge.plan_values`` itself rebound to a reference without seeds.
* ``slows_torch_op``: plans right (the pure-Python planner); on resolution rebinds
  ``torch.Tensor.add_`` to sleep :data:`EXTRA_S` on the one call shape of the ``torch-op`` floor
  (``x.add_(1)`` on a one-element float32 tensor): the floor of ``python`` and of every external
  planner is slower, so this planner's own ratio to its floor (``x floor``) shrinks.
* ``hooks_chain_triton``: plans right; on resolution adds a pre-run hook (Triton's public
  ``add_pre_run_hook``) that sleeps :data:`EXTRA_S` to the bench's own, genuine, bound
  ``chain_kernel`` of ``conformance/bench/chain_triton.py``: the object is the one the bench bound
  and watches, only its state changed, so every ``triton`` ratio to the chain floor shrinks.
* ``fakes_empty_numba``: plans right; on resolution, before the floor's first use, sets the empty
  Numba kernel the floor launches (``empty_kernel`` of ``conformance/bench/empty_numba.py``, the
  module the bench bound at collection; before that module existed, the lazily compiled
  ``conformance.bench.floors._NUMBA_KERNEL``, on no watch list) to a kernel of its own that sleeps
  :data:`EXTRA_S` per launch: the ``empty-numba`` floor of ``numba-cuda`` is slower, so its
  ``x floor`` ratio shrinks.

With ``HOSTILE5_LOG`` set, each slowed floor call appends a line to that file (what the test reads
to see that the bench timed the slowed floor).
"""

from __future__ import annotations

import os
import time

import torch

from impls.offsets_planner import python_planner

EXTRA_S = 0.005
"""Seconds each slowed floor call sleeps."""
LOG_ENV = "HOSTILE5_LOG"
_REAL_SEED_POSITIONS = python_planner.seed_positions
_PATCHED: set[str] = set()


def _log(what: str) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a") as handle:
            handle.write(what + "\n")


def plan_without_seeds(**kw) -> None:
    """The wrong plan: the shared validator, then verify and write offsets and the scalars as
    spec section 5 says, but every seed ``-1`` (no table or LUT read), whatever the table holds.
    Uses the real helpers (captured at import), never the patched ones."""
    plan, buffers = python_planner.validate_arguments(kw)
    rpi, prefix, extend = (kw[n].tolist() for n in ("req_pool_indices", "prefix_lens",
                                                    "extend_seq_lens"))
    verify, write = python_planner.request_offsets(rpi, prefix, extend, plan.swa_window_size)
    results = python_planner.finish(verify, write, [-1] * len(rpi), plan.verify_capacity)
    for out, values in zip(buffers.tensors[2:], (*results[:3], results[3:4], results[4:5],
                                                 results[5:])):
        python_planner._write(out, values)


def _no_seed_positions(rpi, prefix, extend, *, max_reqs, max_seq_len):
    return [None] * len(rpi)


def _patch_reference() -> None:
    python_planner.seed_positions = _no_seed_positions


def _rebind_plan_values() -> None:
    from conformance.bench import rejudge

    real = rejudge.plan_values

    def plan_values(rpi, *args, **kwargs):
        kwargs["positions"] = [None] * len(rpi)
        return real(rpi, *args, **kwargs)

    rejudge.plan_values = plan_values


def _patch_torch_op() -> None:
    real = torch.Tensor.add_

    def add_(self, other, *args, **kwargs):
        if (other == 1 and not args and not kwargs and self.dtype == torch.float32
                and self.numel() == 1):
            time.sleep(EXTRA_S)
            _log("torch-op floor slowed")
        return real(self, other, *args, **kwargs)

    torch.Tensor.add_ = add_


def _hook_chain_triton() -> None:
    from conformance.bench import chain_triton  # the module the bench bound at collection

    def hook(*args, **kwargs):
        time.sleep(EXTRA_S)
        _log("chain-triton floor slowed")

    chain_triton.chain_kernel.add_pre_run_hook(hook)


class _SlowEmptyNumba:
    """``kernel[1, 32](array)`` as ``floors.floor_call`` launches the empty Numba kernel."""

    def __getitem__(self, config):
        def launch(*args):
            time.sleep(EXTRA_S)
            _log("empty-numba floor slowed")
        return launch


def _fake_empty_numba() -> None:
    from conformance.bench import empty_numba  # the module the bench bound at collection

    empty_numba.empty_kernel = _SlowEmptyNumba()


_ATTACKS = {
    "agrees_with_patched_reference": (_patch_reference, plan_without_seeds),
    "rebinds_plan_values": (_rebind_plan_values, plan_without_seeds),
    "slows_torch_op": (_patch_torch_op, python_planner.launch),
    "hooks_chain_triton": (_hook_chain_triton, python_planner.launch),
    "fakes_empty_numba": (_fake_empty_numba, python_planner.launch),
}


def __getattr__(name: str):
    if name not in _ATTACKS:
        raise AttributeError(name)
    patch, launcher = _ATTACKS[name]
    if name not in _PATCHED:
        _PATCHED.add(name)
        patch()
    return launcher
