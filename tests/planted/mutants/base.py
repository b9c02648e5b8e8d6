"""The pure-Python planner (:mod:`impls.offsets_planner.python_planner`) as a class of small steps, so that a mutant
overrides ONE step with one realistic kernel bug and reuses everything else.

Unmutated (:data:`unmutated`, the control of ``python -m conformance mutants``) it plans exactly as
the pure-Python planner does: it validates through the same entry
(:func:`impls.offsets_planner.python_planner.validate_arguments`), reads the table and the LUT with the same gather,
and finishes (int64 / int32 wraps, the three scalars) with :func:`impls.offsets_planner.python_planner.finish`; only
the per-request rules of spec section 5 are restated here, one method each, so that a mutant can
change one of them. ``tests/test_mutants.py`` checks the control against the pure-Python planner.

Steps, in launch order (:meth:`Planner.launch`):

* :meth:`Planner.validate` -- spec section 4 (plan, buffer set);
* :meth:`Planner.seed_positions` -- per request, the table column its seed is read from, or None
  (:meth:`Planner.seed_position`, :meth:`Planner.in_table`, :meth:`Planner.clamp_position`);
* :meth:`Planner.read_slots` -- the table entries at (row, column), one gather;
* :meth:`Planner.translate` -- through the LUT (:meth:`Planner.lut_index`);
* :meth:`Planner.place_seeds` -- seeds [bs] (``NO_SEED`` where none; ``None`` = never stored);
* :meth:`Planner.verify_len` / :meth:`Planner.write_len` / :meth:`Planner.scan` -- offsets [bs+1];
* :meth:`Planner.finish` -- wraps and scalars; :meth:`Planner.store` -- the six outputs.

A mutant is a launcher with exactly the planner's keyword signature (spec section 3), built by
:func:`launcher` from a subclass whose docstring is one line saying its bug.
"""

from __future__ import annotations

from itertools import accumulate

import torch

from impls.offsets_planner import python_planner
from impls.offsets_planner.buffer_set import BufferSet
from impls.offsets_planner.constants import NO_SEED
from impls.offsets_planner.contract import ARGUMENT_NAMES, REQUEST_INPUT_NAMES
from impls.offsets_planner.validate import LaunchPlan

wrap = python_planner._wrap
"""``wrap(value, bits)``: two's-complement wrap to ``bits`` bits, as the planner's stores do."""

Results = tuple[list, list, list, int, int, int]
"""verify offsets [bs+1], write offsets [bs+1], seeds [bs], num_valid, enable, write_num_valid_reqs."""


class Planner:
    """No bug: the pure-Python planner, step by step."""

    # --- spec section 4 -------------------------------------------------------------------------
    def validate(self, kwargs: dict) -> tuple[LaunchPlan, BufferSet]:
        """The launcher's checks (spec section 4); raises ``PlanError``."""
        return python_planner.validate_arguments(kwargs)

    # --- spec section 5, per request ------------------------------------------------------------
    def active(self, row: int) -> bool:
        """Not a padding row (spec section 2: ``REQ_POOL_IDX_PADDING`` is 0)."""
        return row != 0

    def verify_len(self, row: int, prefix: int, window: int) -> int:
        """``max(prefix - window_start, 0)`` if active, else 0; ``window_start = max(prefix - W,
        0)`` when W > 0, else 0."""
        if not self.active(row):
            return 0
        start = max(prefix - window, 0) if window > 0 else 0
        return max(prefix - start, 0)

    def write_len(self, row: int, extend: int) -> int:
        """``max(extend, 0)`` if active, else 0."""
        return max(extend, 0) if self.active(row) else 0

    def scan(self, lengths: list[int]) -> list[int]:
        """The exclusive prefix sum [bs+1] of ``lengths`` [bs], exact."""
        return [0, *accumulate(lengths)]

    def in_table(self, row: int, plan: LaunchPlan) -> bool:
        """Whether ``row`` is a row of ``req_to_token`` (spec section 6: no read otherwise)."""
        return 0 <= row < plan.max_reqs

    def clamp_position(self, position: int, plan: LaunchPlan) -> int:
        """The column actually read for ``prefix - 1`` (spec section 6: clamped to the row)."""
        return min(position, plan.max_seq_len - 1)

    def seed_position(self, row: int, prefix: int, extend: int, plan: LaunchPlan) -> int | None:
        """The column the seed is read from, or None: an active row inside a table with columns,
        a prefix and a write."""
        if plan.max_seq_len <= 0 or not self.active(row) or not self.in_table(row, plan):
            return None
        if prefix <= 0 or self.write_len(row, extend) <= 0:
            return None
        return self.clamp_position(prefix - 1, plan)

    def seed_positions(self, rpi: list[int], prefix: list[int], extend: list[int],
                       plan: LaunchPlan) -> list[int | None]:
        """:meth:`seed_position` of every request, in request order."""
        return [self.seed_position(r, p, e, plan) for r, p, e in zip(rpi, prefix, extend)]

    def read_slots(self, table: torch.Tensor, cells: list[tuple[int, int]],
                   plan: LaunchPlan) -> list[int]:
        """The table entries at ``cells`` (row, column): one gather of the flat table."""
        cols = plan.max_seq_len
        return python_planner._gather(table, [row * cols + pos for row, pos in cells])

    def lut_index(self, slot: int, lut_len: int) -> int | None:
        """The LUT index a slot is translated through, or None (:func:`python_planner.lut_index`)."""
        return python_planner.lut_index(slot, lut_len)

    def translate(self, slots: list[int], plan: LaunchPlan) -> list[int]:
        """``slots`` translated through the LUT (one gather), negative slots passed through."""
        if plan.lut_len <= 0:
            return slots
        indexed = [(k, self.lut_index(s, plan.lut_len)) for k, s in enumerate(slots)]
        indexed = [(k, i) for k, i in indexed if i is not None]
        entries = python_planner._gather(plan.lut_tensor, [i for _, i in indexed])
        out = list(slots)
        for (k, _), entry in zip(indexed, entries):
            out[k] = entry
        return out

    def place_seeds(self, bs: int, seeded: list[int], seeds: list[int]) -> list[int | None]:
        """Seeds [bs]: ``NO_SEED`` except at the requests ``seeded``."""
        out: list[int | None] = [NO_SEED] * bs
        for i, seed in zip(seeded, seeds):
            out[i] = seed
        return out

    # --- outputs --------------------------------------------------------------------------------
    def finish(self, verify_offsets: list[int], write_offsets: list[int], seeds: list,
               plan: LaunchPlan, rpi: list[int]) -> Results:
        """Wrapped offsets and seeds and the three scalars (spec section 5)."""
        if None in seeds:  # a seed never stored: wrap the others
            done = python_planner.finish(verify_offsets, write_offsets,
                                         [NO_SEED if s is None else s for s in seeds],
                                         plan.verify_capacity)
            return (done[0], done[1], [None if s is None else d for s, d in zip(seeds, done[2])],
                    *done[3:])
        return python_planner.finish(verify_offsets, write_offsets, seeds, plan.verify_capacity)

    def store(self, kwargs: dict, plan: LaunchPlan, buffers: BufferSet, results: Results) -> None:
        """Write the six results into the outputs' defined regions; a ``None`` value is skipped."""
        values = (*results[:3], [results[3]], [results[4]], [results[5]])
        for out, vals in zip(buffers.tensors[2:], values):
            if None in vals:
                for index, value in enumerate(vals):
                    if value is not None:
                        out[index] = value
            else:
                python_planner._write(out, vals)

    # --- the launch -----------------------------------------------------------------------------
    def plan(self, kwargs: dict, plan: LaunchPlan, buffers: BufferSet) -> Results:
        """The six results for validated arguments."""
        rpi, prefix, extend = (kwargs[name].tolist() for name in REQUEST_INPUT_NAMES)
        positions = self.seed_positions(rpi, prefix, extend, plan)
        seeded = [i for i, pos in enumerate(positions) if pos is not None]
        slots = self.read_slots(buffers.tensors[0], [(rpi[i], positions[i]) for i in seeded], plan)
        seeds = self.place_seeds(len(rpi), seeded, self.translate(slots, plan))
        window = plan.swa_window_size
        verify = self.scan([self.verify_len(r, p, window) for r, p in zip(rpi, prefix)])
        write = self.scan([self.write_len(r, e) for r, e in zip(rpi, extend)])
        return self.finish(verify, write, seeds, plan, rpi)

    def launch(self, kwargs: dict) -> None:
        """The launcher of spec section 3 on its 13 keyword arguments."""
        plan, buffers = self.validate(kwargs)
        self.store(kwargs, plan, buffers, self.plan(kwargs, plan, buffers))


def launcher(planner_class: type[Planner]):
    """A launcher with exactly the pure-Python planner's keyword signature that plans with one
    instance of ``planner_class`` (kept for the process: a mutant may keep state between calls).
    Its docstring is the class's; ``launch.planner_class`` is the class."""
    planner = planner_class()

    def launch(
        *,
        req_pool_indices: torch.Tensor,
        prefix_lens: torch.Tensor,
        extend_seq_lens: torch.Tensor,
        req_to_token: torch.Tensor,
        full_to_swa_index_mapping: torch.Tensor | None,
        out_verify_offsets_scratch: torch.Tensor,
        out_write_offsets: torch.Tensor,
        out_write_seed_slot_indices: torch.Tensor,
        out_verify_num_valid: torch.Tensor,
        out_verify_enable: torch.Tensor,
        out_write_num_valid_reqs: torch.Tensor,
        swa_window_size: int,
        verify_capacity: int,
    ) -> None:
        given = locals()
        planner.launch({name: given[name] for name in ARGUMENT_NAMES})

    launch.__doc__ = planner_class.__doc__
    launch.planner_class = planner_class
    return launch


unmutated = launcher(Planner)
