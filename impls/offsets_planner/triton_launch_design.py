"""The Triton planner's launch designs (:mod:`impls.offsets_planner.triton_planner`): which kernel,
in what shape, plans a batch of bs requests (bs in [0, 4096]).

A launch's ``BLOCK`` is the bucket of :data:`BLOCKS` that holds bs, and :data:`DESIGNS` (on the
GPU; :data:`INTERPRETER_DESIGNS` under Triton's interpreter) maps it to the design that plans it in
one launch: seed programs that do only the chain of dependent loads a seed needs (request values,
table entry, LUT entry) beside scan programs that do only the scans, totals and scalars
(:mod:`impls.offsets_planner.triton_roles`); from bs 513 on the scan is spread over several
programs that pass their totals on by a look-back
(:mod:`impls.offsets_planner.triton_roles_lookback`).
:func:`impls.offsets_planner.triton_planner.plan_launch` with a configuration runs the planner's
earlier kernel instead (:data:`CONFIG`): ``ceil(bs / TILE)`` programs each scan their own ``TILE``
lanes; when ``TILE < BLOCK`` each also sums the lengths of every lane before its tile (a masked,
``BLOCK``-wide reduction, no inter-program communication), and the last program writes the totals
and scalars.

The tables are read when a launch is prepared, once per buffer set and bs
(:mod:`impls.offsets_planner.triton_prepared_launch`).
"""

from __future__ import annotations

BLOCKS: tuple[int, ...] = (32, 128, 512, 2048, 4096)
"""Lane buckets: a launch's ``BLOCK`` is the smallest that holds bs (0..4096)."""

CONFIG: dict[int, tuple[int, int]] = {32: (32, 1), 128: (128, 4), 512: (256, 8), 2048: (256, 8),
                                      4096: (512, 16)}
"""``BLOCK -> (TILE, num_warps)``: lanes per program and warps per program for each bucket.
``TILE == BLOCK`` is one program; ``TILE < BLOCK`` is ``ceil(bs / TILE)`` programs, each summing
the lengths before its tile itself. The fastest of a sweep on an H200, 2026-11-30 (device us per
plan, bs = block: 1.61 / 2.32 / 3.10 / 4.93 / 6.19; one program over 4096 lanes took 18.9):
``reports/gpu/triton-bench.md``."""


DESIGNS: dict[int, tuple] = {32: ("roles", 32, 2, 2), 128: ("roles", 32, 2, 2),
                             512: ("roles", 32, 8, 2), 2048: ("roles-lookback", 32, 128, 8),
                             4096: ("roles-lookback", 64, 512, 8)}
"""``BLOCK -> design`` of a default launch (no configuration given): ``("roles", seed tile,
num_warps, scan programs)`` (:mod:`impls.offsets_planner.triton_roles`: seed programs that do only
the gather chain and scan programs that do only the scans, none waiting on another) or
``("roles-lookback", seed tile, scan tile, num_warps)``
(:mod:`impls.offsets_planner.triton_roles_lookback`: the scan spread over several programs that
pass their totals on by a look-back with an exact fallback, a per-device workspace). The fastest
correct configs of the one-pass sweep on an H200, 2026-12-03
(``reports/gpu/2026-12-03-d/one_pass/``: replay us per plan at bs 1 / 8 / 64 / 512 / 1024 / 4096:
2.14-2.20 / 2.20 / 2.20 / 2.59 / 3.43 / 3.61, against 2.36 / 2.51 / 2.87 / 3.77 / 5.03 / 6.97
for :data:`CONFIG`'s kernel); its look-back scan programs reduce and scan both sides as one
``[scan tile, 2]`` tensor (``JOINED``: 3.46 -> 3.29 us at bs 1024, 3.59 -> 3.50 at 4096,
``reports/gpu/2026-12-03-e/one_pass-triton-joined/``), and sends its first poll before its scan
(:data:`impls.offsets_planner.triton_planner.EARLY_POLL`: 3.35 us at 4096, 1.30x the chain floor,
``reports/gpu/2026-12-04-a/final/``). :func:`impls.offsets_planner.triton_planner.plan_launch`
with a configuration runs that kernel."""

INTERPRETER_DESIGNS: dict[int, tuple] = {32: ("roles", 32, 1, 1), 128: ("roles", 128, 1, 1),
                                         512: ("roles", 512, 1, 1),
                                         2048: ("roles-lookback", 2048, 1024, 1),
                                         4096: ("roles-lookback", 4096, 1024, 1)}
"""The same designs with the fewest programs, for Triton's interpreter (which runs programs one
after another, each op a numpy call: fewer, wider programs cost less there; the GPU's shapes are
:data:`DESIGNS`, and every shape is byte-for-byte the same plan)."""


def block_for(bs: int) -> int:
    """The smallest block of :data:`BLOCKS` with at least ``bs`` lanes (bs in [0, 4096]).

    Raises:
        ValueError: bs above the largest block (4096).
    """
    for block in BLOCKS:
        if bs <= block:
            return block
    raise ValueError(f"bs={bs} exceeds the largest block {BLOCKS[-1]}")
