"""Serving-like inputs for the entries planner's benchmark, with the offsets planner's of the same
step (specs ``docs/spec/entries-planner.md`` and ``docs/spec/offsets-planner.md``, section 3 each).

:data:`DESCRIPTION` says what a step holds (the sweep prints it); :func:`build` makes one step,
:func:`add_reference` the Python entries planner's outputs for it, :func:`fresh_entries_kw` /
:func:`fresh_plan_kw` new per-step tensors for one timed planner, :func:`refill` a server's
in-place refill of them. Sizes per device: :data:`GPU`, :data:`CPU` (:class:`Profile`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from conformance.bench.workloads import POISON, WRITE_REQ_CAPACITY
from impls.entries_planner import contract as ec
from impls.offsets_planner.buffers import PlanBuffers
from impls.offsets_planner.contract import OUTPUT_NAMES as OFFSETS_OUTPUTS
from impls.offsets_planner.contract import REQUEST_INPUT_NAMES, SWA_WINDOW_NAME, VERIFY_CAPACITY_NAME
from impls.offsets_planner.contract import VERIFY_ENABLE_NAME as OFFSETS_ENABLE

VARIANTS = ("full", "swa-lut", "pool")
DESCRIPTION = """\
One step of bs requests, drawn with a seed: one row in eight a padding row (`req_pool_indices`
0, leftover prefix and extend values, as CUDA-graph padding); live rows distinct, drawn from the
table's rows 1..rows-1; prefix lengths log-uniform in [prefix_lo, prefix_hi], one live request in
eight a new one with a short prefix in [1, prefix_lo); extend 1 (a decode) except one row in eight,
a prefill chunk of 16..512 tokens (read by the offsets planner only). The KV pool bounds the tokens
in flight: when the live prefixes add up to more than the pool, every prefix is scaled down by the
same factor until they fit (at bs 4096 they do not fit otherwise). The verify capacity is the
pool's size, so every variant's total fits and `verify_enable` is 1.

Variants: `full` (full attention: no LUT, W 0, no pool), `swa-lut` (a sliding window W, slots
translated through the LUT of int64 SWA slots), `pool` (full attention with the expected-token
pool: int32 token ids, `valid_lens` = the prefix, one request in four shorter, offset 0). The table
(int32 slots drawn in [1, lut_len)), the LUT and the pool are one set per device, as one server's
are. The scratch and enable the entries planners read are the Python offsets planner's for the
step; every output starts as poison."""
RPI, PREFIX, EXTEND = REQUEST_INPUT_NAMES
SCRATCH_OUT = OFFSETS_OUTPUTS[0]
"""``out_verify_offsets_scratch``: the offsets planner's output the entries planner reads."""
PLAN_NAMES = (ec.SCRATCH_NAME, ec.ENABLE_NAME)
ENTRIES_REQUEST_NAMES = (RPI, PREFIX, ec.VALID_LENS_NAME)
"""The entries planner's per-step inputs a server refills (beside the scratch and the enable)."""


@dataclass(frozen=True)
class Profile:
    """Sizes of one device's workload (module docstring)."""

    rows: int
    cols: int
    prefix_lo: int
    prefix_hi: int
    kv_pool_tokens: int
    window: int
    lut_len: int
    vocab: int = 151_936


GPU = Profile(rows=4097, cols=4096, prefix_lo=128, prefix_hi=3072, kv_pool_tokens=1 << 20,
              window=1024, lut_len=1 << 22)
CPU = Profile(rows=33, cols=64, prefix_lo=4, prefix_hi=48, kv_pool_tokens=512, window=8,
              lut_len=4096)
"""CPU: tiny sizes for Triton's interpreter and Numba's simulator."""


def profile_for(device: torch.device) -> Profile:
    return GPU if device.type == "cuda" else CPU


def request_vectors(bs: int, p: Profile, seed: int) -> tuple[torch.Tensor, ...]:
    """(req_pool_indices, prefix_lens, extend_seq_lens, valid_lens), int64 [bs] on the CPU."""
    g = torch.Generator().manual_seed(seed * 100_003 + bs)
    padding = torch.randint(0, 8, (bs,), generator=g) == 0
    padding[:1] = False  # at least one live request: a batch of padding alone plans nothing
    active = (~padding).nonzero().flatten()
    rpi = torch.zeros(bs, dtype=torch.int64)
    rpi[active] = torch.randperm(p.rows - 1, generator=g)[: active.numel()] + 1
    lo, hi = torch.log(torch.tensor(float(p.prefix_lo))), torch.log(torch.tensor(float(p.prefix_hi)))
    prefix = torch.exp(lo + (hi - lo) * torch.rand(bs, generator=g)).to(torch.int64)
    new = torch.randint(0, 8, (bs,), generator=g) == 0
    prefix[new] = torch.randint(1, p.prefix_lo, (int(new.sum()),), generator=g)
    while int(prefix[active].sum()) > p.kv_pool_tokens:  # the KV pool bounds the batch
        prefix = torch.clamp(prefix * p.kv_pool_tokens // int(prefix[active].sum()), min=1)
    extend = torch.ones(bs, dtype=torch.int64)
    prefill = torch.randint(0, 8, (bs,), generator=g) == 0
    extend[prefill] = torch.randint(16, 513, (int(prefill.sum()),), generator=g)
    valid = prefix.clone()
    short = torch.randint(0, 4, (bs,), generator=g) == 0
    valid[short] = (prefix[short] * torch.rand(int(short.sum()), generator=g)).to(torch.int64)
    return rpi, prefix, extend, valid


_SHARED: dict[tuple, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}


def shared_tensors(device: torch.device, p: Profile):
    """The device's (table int32 [rows, cols], LUT int64 [lut_len], pool int32 [rows, cols])."""
    key = (str(device), p)
    if key not in _SHARED:
        g = torch.Generator(device=device).manual_seed(4321)
        table = torch.randint(1, p.lut_len, (p.rows, p.cols), generator=g, device=device,
                              dtype=torch.int32)
        lut = torch.randint(0, p.lut_len, (p.lut_len,), generator=g, device=device)
        pool = torch.randint(0, p.vocab, (p.rows, p.cols), generator=g, device=device,
                             dtype=torch.int32)
        _SHARED[key] = (table, lut, pool)
    return _SHARED[key]


@dataclass
class Workload:
    """One step's inputs. ``offsets_kw``: the offsets launcher's 13 arguments, its outputs as the
    Python offsets planner left them (``offsets_poison``: the same tensors' contents before);
    ``entries_kw``: the entries launcher's 14 arguments (scratch and enable: ``offsets_kw``'s
    outputs), its outputs poisoned; ``reference``: the Python entries planner's four outputs on a
    copy of them (None until :func:`add_reference`)."""

    bs: int
    variant: str
    device: torch.device
    offsets_kw: dict
    offsets_poison: dict
    entries_kw: dict
    total: int
    reference: dict | None = None
    facts: dict = field(default_factory=dict)
    flat_reference: dict | None = None
    """The Python pipeline's nine plan fields on this step (the whole plan in one call; filled by
    the sweep's first whole-plan call)."""


def build(bs: int, variant: str, device: torch.device, seed: int = 0) -> Workload:
    """One step of ``variant`` at ``bs`` (module docstring); no entries reference yet."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    p = profile_for(device)
    table, lut, pool = shared_tensors(device, p)
    rpi, prefix, extend, valid = (t.to(device) for t in request_vectors(bs, p, seed))
    window = p.window if variant == "swa-lut" else 0
    buffers = PlanBuffers.allocate(write_req_capacity=WRITE_REQ_CAPACITY,
                                   **{VERIFY_CAPACITY_NAME: p.kv_pool_tokens}, device=device)
    offsets_kw = {RPI: rpi, PREFIX: prefix, EXTEND: extend, ec.TABLE_NAME: table,
                  ec.LUT_NAME: lut if variant == "swa-lut" else None, SWA_WINDOW_NAME: window,
                  **buffers.launcher_kwargs()}
    for name in OFFSETS_OUTPUTS:
        offsets_kw[name].fill_(POISON)
    poison = {name: offsets_kw[name].clone() for name in OFFSETS_OUTPUTS}
    from impls.offsets_planner.python_planner import launch as python_offsets

    python_offsets(**offsets_kw)
    entries_kw = {RPI: rpi, PREFIX: prefix, ec.TABLE_NAME: table,
                  ec.LUT_NAME: offsets_kw[ec.LUT_NAME],
                  ec.SCRATCH_NAME: offsets_kw[SCRATCH_OUT],
                  ec.ENABLE_NAME: offsets_kw[OFFSETS_ENABLE],
                  ec.POOL_NAME: pool if variant == "pool" else None,
                  ec.VALID_LENS_NAME: valid if variant == "pool" else None,
                  ec.OFFSET_NAME: 0, ec.WINDOW_NAME: window}
    for name in ec.OUTPUT_NAMES:
        entries_kw[name] = torch.full((p.kv_pool_tokens,), POISON, dtype=torch.int64,
                                      device=device)
    total = int(offsets_kw[SCRATCH_OUT][bs])
    live = rpi != 0
    facts = {"bs": bs, "variant": variant, "active requests": int(live.sum()),
             "padding rows": int((~live).sum()), "total entries": total,
             "verify capacity": p.kv_pool_tokens, "enable": int(entries_kw[ec.ENABLE_NAME][0]),
             "prefix p50": int(prefix[live].median()) if live.any() else 0,
             "prefix max": int(prefix[live].max()) if live.any() else 0, "window": window}
    return Workload(bs, variant, device, offsets_kw, poison, entries_kw, total, facts=facts)


def add_reference(w: Workload) -> Workload:
    """Fill ``w.reference`` with the Python entries planner's four outputs (full tensors: the
    written region and the untouched tail) on a poisoned copy of ``w``'s outputs."""
    from impls.entries_planner.python_planner import launch as python_entries

    kw = fresh_entries_kw(w)
    python_entries(**kw)
    w.reference = {name: kw[name] for name in ec.OUTPUT_NAMES}
    return w


def _clone_outputs(w: Workload) -> dict:
    return {name: torch.full_like(w.entries_kw[name], POISON) for name in ec.OUTPUT_NAMES}


def fresh_entries_kw(w: Workload, contents: Workload | None = None) -> dict:
    """The entries launcher's arguments on new per-step tensors (request inputs, scratch, enable
    holding ``contents``' values, default ``w``'s) and new poisoned outputs; tables shared."""
    src = contents or w
    kw = dict(w.entries_kw, **_clone_outputs(w))
    for name in (*ENTRIES_REQUEST_NAMES, *PLAN_NAMES):
        if kw[name] is not None:
            kw[name] = src.entries_kw[name].clone()
    return kw


def fresh_plan_kw(w: Workload, contents: Workload | None = None) -> tuple[dict, dict]:
    """(offsets arguments, entries arguments) of one whole step on new tensors: the offsets
    planner's request inputs holding ``contents``' values (default ``w``'s) and outputs poisoned;
    the entries planner reads that scratch and enable, and shares the request tensors."""
    src = contents or w
    off = dict(w.offsets_kw, **{n: src.offsets_kw[n].clone() for n in REQUEST_INPUT_NAMES},
               **{n: t.clone() for n, t in w.offsets_poison.items()})
    ent = dict(w.entries_kw, **_clone_outputs(w), **{RPI: off[RPI], PREFIX: off[PREFIX]})
    ent[ec.SCRATCH_NAME], ent[ec.ENABLE_NAME] = off[SCRATCH_OUT], off[OFFSETS_ENABLE]
    if ent[ec.VALID_LENS_NAME] is not None:
        ent[ec.VALID_LENS_NAME] = src.entries_kw[ec.VALID_LENS_NAME].clone()
    return off, ent


def refill(kw: dict, w: Workload, names: tuple[str, ...], offsets: dict | None = None) -> None:
    """Write ``w``'s values into ``kw``'s tensors ``names`` in place (a server's next step), and
    poison ``kw``'s entries outputs again (and ``offsets``' outputs, for a whole step)."""
    source = {**w.offsets_kw, **w.entries_kw}
    for name in names:
        if kw.get(name) is not None:
            kw[name].copy_(source[name])
    for name in ec.OUTPUT_NAMES:
        kw[name].fill_(POISON)
    for name, before in w.offsets_poison.items() if offsets is not None else ():
        offsets[name].copy_(before)
