"""Planners that behave only inside the harness's fixtures: right on the poisoned, guarded buffers
of runs ``a`` and ``b``, wrong on buffers as a server hands them over (issue item: "a planner that
recognises the harness's fixtures ... returns a wrong count on plain buffers").
``tests/test_plain_run.py`` shows each fails, by the plain run alone
(:mod:`conformance.engine.plain`), in process and in the isolation worker.

Each is the pure-Python planner, then ``out_verify_num_valid`` one too high when it thinks it is
not being watched.
"""

from __future__ import annotations

import torch

from impls.offsets_planner.python_planner import launch as python_launch

RPI = "req_pool_indices"
MUST_WRITE = ("out_verify_num_valid", "out_write_num_valid_reqs")


def _must_write_all_zero(kwargs: dict) -> bool:
    """Whether every element the call must write (spec section 5: offsets 0..bs, seeds 0..bs-1,
    the count scalars) holds 0 before it: a fresh zero-filled allocation, never poison."""
    bs = int(kwargs[RPI].shape[0])
    parts = [kwargs["out_write_offsets"][:bs + 1], kwargs["out_verify_offsets_scratch"][:bs + 1],
             kwargs["out_write_seed_slot_indices"][:bs], *(kwargs[n] for n in MUST_WRITE)]
    return all(not bool(torch.any(part != 0)) for part in parts)


def wrong_when_zero_filled(**kwargs) -> None:
    """Right unless every element it must write is 0 beforehand (the poison never is): then
    ``out_verify_num_valid`` one too high."""
    plain = _must_write_all_zero(kwargs)
    python_launch(**kwargs)
    if plain:
        kwargs["out_verify_num_valid"].add_(1)


def wrong_without_guard(**kwargs) -> None:
    """Right unless ``out_verify_num_valid``'s allocation is exactly its one element (no guard zone
    around it, as in every allocation a server makes): then one too high."""
    num_valid = kwargs["out_verify_num_valid"]
    guarded = num_valid.untyped_storage().nbytes() > num_valid.numel() * num_valid.element_size()
    python_launch(**kwargs)
    if not guarded:
        num_valid.add_(1)


def keeps_zero_when_zero_filled(**kwargs) -> None:
    """Right unless every element it must write is 0 beforehand: then
    ``out_write_num_valid_reqs`` (bs) holds 0 after the call (written back as 0, or never written: on a zero-filled buffer a judge
    cannot tell which)."""
    plain = _must_write_all_zero(kwargs)
    python_launch(**kwargs)
    if plain:
        kwargs["out_write_num_valid_reqs"].zero_()
