"""Deliberately wrong entries planners, each with the launcher's signature (docs/spec/entries-planner.md
section 3) and one planted bug, for the entries benchmark's correctness gate
(``tests/test_entries_bench.py``; ``python -m impls.entries_planner.harness.entries --planner
tests.planted.wrong_entries_planners:shifted_position``).

Each wraps the pure-Python entries planner (:mod:`impls.entries_planner.python_planner`), then
plants its bug while or after storing.
"""

from __future__ import annotations

from impls.entries_planner.contract import OUTPUT_NAMES
from impls.entries_planner.python_planner import launch as python_launch

SLOT, TOKEN, POSITION, PREV = OUTPUT_NAMES


def shifted_position(**kw) -> None:
    """Entry 0's expected position one too far (the written region differs at index 0)."""
    python_launch(**kw)
    kw[POSITION][0] += 1


def writes_tail(**kw) -> None:
    """Right in [0, T), then writes 0 at slot index T: the tail must keep its poison."""
    python_launch(**kw)
    total = int(kw["verify_offsets_scratch"][kw["req_pool_indices"].shape[0]])
    kw[SLOT][total] = 0


_CALLED: dict[int, object] = {}


def right_once(**kw) -> None:
    """Right on its first call for a set of outputs, then entry 0's previous slot is 123."""
    python_launch(**kw)
    out = kw[PREV]
    if id(out) in _CALLED:
        out[0] = 123
    _CALLED[id(out)] = out  # the tensor is kept, so its id is not reused while it is a key


_PLANNED: dict[int, tuple] = {}


def stale_after_refill(**kw) -> None:
    """Plans the first inputs it meets for a set of outputs and writes those values again on every
    later call with the same outputs: new contents written into the same input tensors (a server's
    refill before a graph replay) are ignored."""
    key = id(kw[SLOT])
    if key not in _PLANNED:
        python_launch(**kw)
        _PLANNED[key] = (kw[SLOT], {n: kw[n].clone() for n in OUTPUT_NAMES})
    for name, values in _PLANNED[key][1].items():
        kw[name].copy_(values)


def raises_on_clamp(**kw) -> None:
    """Upstream's torch reference on a slot past the LUT: raises where the project clamps
    (docs/spec/entries-planner.md section 6, ``lut-clamp``); right everywhere else."""
    lut = kw["full_to_swa_index_mapping"]
    if lut is not None and lut.numel() and int(kw["req_to_token"].max()) >= lut.numel():
        raise ValueError("kv-canary: SWA slot is outside full_to_swa_index_mapping")
    python_launch(**kw)


def last_entry_clamped_wrong(**kw) -> None:
    """Only the elements the project rule ``lut-clamp`` decides differ: a slot or previous slot
    whose raw slot (``req_to_token[row, p]``) is past the LUT becomes -1 instead of the LUT's last
    entry; every other element is right."""
    python_launch(**kw)
    lut = kw["full_to_swa_index_mapping"]
    if lut is None or not lut.numel():
        return
    rpi, table = kw["req_pool_indices"].tolist(), kw["req_to_token"]
    offsets = kw["verify_offsets_scratch"][: len(rpi) + 1].tolist()
    for t in range(min(offsets[-1], kw[SLOT].numel())):
        row = rpi[max(r for r in range(len(rpi)) if offsets[r] <= t)]
        p = int(kw[POSITION][t])
        if int(table[row, p]) >= lut.numel():
            kw[SLOT][t] = -1
        if p >= 1 and int(table[row, p - 1]) >= lut.numel():
            kw[PREV][t] = -1


def rebinds_outputs(**kw) -> None:
    """Points every output tensor at fresh storage (``set_``) and plans there: the caller's
    memory keeps its poison."""
    for name in OUTPUT_NAMES:
        kw[name].set_(kw[name].clone())
    python_launch(**kw)


def scribbles_on_the_table(**kw) -> None:
    """Right, then writes 7 into ``req_to_token[0, 0]`` (an input: read-only)."""
    python_launch(**kw)
    kw["req_to_token"][0, 0] = 7


def returns_the_total(**kw) -> int:
    """Right, then returns the total (a launcher returns None)."""
    python_launch(**kw)
    return int(kw["verify_offsets_scratch"][kw["req_pool_indices"].shape[0]])


def wrong_error_text(**kw) -> None:
    """Every documented error raised with its text upper-cased."""
    from impls.offsets_planner.errors import PlanError

    try:
        python_launch(**kw)
    except PlanError as exc:
        raise PlanError(exc.error_id, str(exc).upper()) from None


def clamped_wrong_and_position(**kw) -> None:
    """As :func:`last_entry_clamped_wrong`, and entry 0's position one too far: a contract
    element differs on a case that pins a project rule."""
    last_entry_clamped_wrong(**kw)
    kw[POSITION][0] += 1
