"""The Numba CUDA planner's launch shapes (:mod:`impls.offsets_planner.numba_cuda_planner`): the
design, grid, block size, chunk and kernel key of a launch of bs requests (bs in [0, 4096]).

The rows come from the planner's design table: :data:`DESIGNS` on the GPU, :data:`SIM_DESIGNS` in
Numba's CUDA simulator, :data:`FALLBACK_DESIGN` for a look-back row without its workspace. That
table, the mode (``SIMULATED``), :data:`SIM_THREADS`, :data:`SIM_CHUNK`, :data:`GPU_THREADS`,
``_ITEMS``, ``_largest`` and the look-back kernel module are read on the planner module at call
time (the names in ``:data:`` here are its), so that a value set there (a test, a sweep) takes
effect here.
"""

from __future__ import annotations


def design_for(bs: int, lookback: bool = True) -> tuple[str, int, int, int]:
    """``(design, threads, chunk, scan blocks)`` of :data:`DESIGNS` (GPU) or :data:`SIM_DESIGNS`
    (simulator) for ``bs`` in [0, 4096]; with ``lookback`` False a look-back row gives
    :data:`FALLBACK_DESIGN` (its threads and chunk in the simulator: :data:`SIM_THREADS`,
    :data:`SIM_CHUNK`)."""
    for largest, design in nb.SIM_DESIGNS if nb.SIMULATED else nb.DESIGNS:
        if bs <= largest:
            if design[0] in nb.LOOKBACK_DESIGNS and not lookback:
                return (("blocked", nb.SIM_THREADS, nb.SIM_CHUNK, 0) if nb.SIMULATED
                        else nb.FALLBACK_DESIGN)
            return design
    raise ValueError(f"bs={bs} exceeds {nb.DESIGNS[-1][0]}")


def _largest(design: str) -> int:
    """The largest bs of ``design``'s row in the table this mode takes."""
    return max(b for b, d in (nb.SIM_DESIGNS if nb.SIMULATED else nb.DESIGNS) if d[0] == design)


def launch_shape(bs: int, lookback: bool = True) -> tuple[int, int, int, tuple]:
    """``(blocks, threads per block, chunk, kernel key)`` for ``bs`` requests
    (:func:`design_for`, ``lookback`` passed on).

    ``roles``: ``ceil(bs / chunk)`` seed blocks (chunk: requests a seed block), then the scan
    blocks, each scan thread owning at most ``items`` requests (a power of two, one compiled
    kernel per value); key ``("roles", items, scans, threads)``. ``blocked``: at least one block
    of ``chunk`` requests; on the GPU ``threads`` is the smallest multiple of 32 >= bs up to
    :data:`GPU_THREADS`, one request a thread; key ``("blocked",)``. ``roles-lookback``:
    ``ceil(bs / chunk)`` scan blocks (at least one) then ``ceil(bs / seed_tile)`` seed blocks; key
    ``("roles-lookback", items, threads, per_lane, seed_tile, chunk)``, ``per_lane`` the
    earlier-block words one lane polls at the row's largest bs, ``seed_tile`` the row's fourth
    value (0: ``threads``), ``chunk`` compiled in as a constant (as ``threads``).
    ``warp-lookback``: 32 threads, ``ceil(bs / chunk)`` scan blocks (at least one) then
    ``ceil(bs / 32)`` seed blocks; key ``("warp-lookback", chunk / 32, per_lane)``.

    Raises:
        RuntimeError: a ``blocked`` chunk that needs more than the kernel's requests a thread.
        ValueError: a ``roles-lookback`` row the kernel cannot plan right: threads not a multiple
            of 32 in [32, 1024] (a polling lane reads every 32nd word), a seed tile above threads
            (a seed block plans one request a thread), or more scan blocks at the row's largest bs
            than a workspace set holds (128); a ``warp-lookback`` row of other than 32 threads,
            a chunk that is not a positive multiple of 32, or too many scan blocks.
    """
    design, threads, chunk, scans = design_for(bs, lookback)
    if design == "roles-lookback":
        items = max(1, -(-chunk // threads))
        items = 1 << (items - 1).bit_length()
        blocks = -(-nb._largest(design) // chunk)
        per_lane = -(-4 * blocks // 32)
        seed_tile = scans or threads  # a roles-lookback row's fourth value: its seed tile
        if (threads % 32 or not 32 <= threads <= 1024 or seed_tile > threads
                or 4 * blocks > nb.lookback_kernel.SET_WORDS):
            raise ValueError(f"numba-cuda planner: roles-lookback row of {threads} threads, chunk "
                             f"{chunk}, seed tile {seed_tile} ({blocks} scan blocks at bs "
                             f"{nb._largest(design)}): threads must be a multiple of 32 in [32, "
                             f"1024], the seed tile at most threads, the scan blocks at most "
                             f"{nb.lookback_kernel.SET_WORDS // 4}")
        return (max(1, -(-bs // chunk)) + -(-bs // seed_tile), threads, chunk,
                ("roles-lookback", items, threads, per_lane, seed_tile, chunk))
    if design == "warp-lookback":
        blocks = -(-nb._largest(design) // chunk) if chunk > 0 else 0
        if (threads != 32 or chunk % 32 or chunk <= 0
                or 4 * blocks > nb.lookback_kernel.SET_WORDS):
            raise ValueError(f"numba-cuda planner: warp-lookback row of {threads} threads, chunk "
                             f"{chunk} ({blocks} scan blocks at bs {nb._largest(design)}): threads "
                             f"must be 32, the chunk a positive multiple of 32, the scan blocks "
                             f"at most {nb.lookback_kernel.SET_WORDS // 4}")
        return (max(1, -(-bs // chunk)) + -(-bs // 32), 32, chunk,
                ("warp-lookback", chunk // 32, -(-4 * blocks // 32)))
    if design == "roles":
        items = max(1, -(-bs // threads))
        items = 1 << (items - 1).bit_length()
        return -(-bs // chunk) + scans, threads, chunk, ("roles", items, scans, threads)
    if not nb.SIMULATED:
        threads = chunk = min(threads, max(32, (bs + 31) // 32 * 32))
    if -(-chunk // threads) > nb._ITEMS:  # the kernel plans at most _ITEMS requests a thread
        raise RuntimeError(f"numba-cuda planner: {chunk} requests a block need more than "
                           f"{nb._ITEMS} a thread with {threads} threads")
    return max(1, -(-bs // chunk)), threads, chunk, ("blocked",)


def kernel_keys() -> list[tuple]:
    """Every kernel key :func:`launch_shape` gives for bs in [0, 4096] (what
    :func:`impls.offsets_planner.numba_cuda_probe.probe` compiles on the GPU, so that no compile
    or module load happens inside a graph capture)."""
    keys: list[tuple] = []
    for bs in range(nb.DESIGNS[-1][0] + 1):
        for lookback in (True, False):
            key = launch_shape(bs, lookback)[3]
            if key not in keys:
                keys.append(key)
    return keys


from impls.offsets_planner import numba_cuda_planner as nb  # noqa: E402 (last: it imports this)
