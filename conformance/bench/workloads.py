"""Benchmark inputs that look like serving, shared by every benchmark script.

:func:`build` makes the 13 launcher keyword arguments (spec section 3) for one batch:

* ``serving`` (the suite's default): mostly decode rows (extend 1, prefix anywhere in the row),
  one active row in eight a prefill chunk (prefix 0 to half a row, extend 16 to 1024), one row in
  eight a padding row (``req_pool_indices == 0``, as CUDA-graph padding), sliding-window attention
  with a LUT (W = 4096 on the GPU, 64 on the CPU);
* ``decode``: extend 1 everywhere, one row in eight padding, full attention, no LUT.

The table (``req_to_token``, int32 KV slots) and the LUT (int64) are shared by every batch of a
device, as one server's are: :data:`GPU_TABLE` (4096 rows x 32768 columns, 512 MiB) on CUDA,
:data:`CPU_TABLE` on the CPU. Active rows are distinct, drawn from 1..rows-1. Every value is random
(never zeros: constant inputs let caches and branch predictors flatter a kernel) and the outputs are poisoned with :data:`POISON`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conformance.corpus.corpus_subject import buffers as _buffers
from conformance.corpus.corpus_subject import contract as _contract

PlanBuffers = _buffers.PlanBuffers
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SWA_WINDOW_NAME = _contract.SWA_WINDOW_NAME
TABLE_INPUT_NAMES = _contract.TABLE_INPUT_NAMES
VERIFY_CAPACITY_NAME = _contract.VERIFY_CAPACITY_NAME

GPU_TABLE: tuple[int, int] = (4096, 32768)
"""req_to_token rows x columns on the GPU: a 4096-request pool, 32k-token rows."""
CPU_TABLE: tuple[int, int] = (4096, 256)
"""On the CPU: as many rows (bs 4096 needs distinct rows), short ones (interpreter/simulator)."""
GPU_LUT_LEN, CPU_LUT_LEN = 1 << 22, 1 << 16
"""SWA LUT entries (full-attention slot -> SWA slot); table slots are drawn below it."""
GPU_WINDOW, CPU_WINDOW = 4096, 64
"""swa_window_size W of the ``serving`` scenario."""
POISON = -12345
WORKLOADS = ("serving", "decode")
"""How a batch's values are drawn (:func:`spec_for`)."""
SCENARIOS = ("reused", "fresh", "varying-bs")
"""How a server hands the planner its request tensors (:func:`request_pool`): ``reused``, one set
of tensors every call (every cache keyed on identity hits; its contents are rewritten in place
before each judged call, :mod:`conformance.bench.rejudge`); ``fresh``, new tensors with new
contents every call (new objects and addresses, same bs), made on the planner's device;
``varying-bs``, the same with a bs drawn per call, seeded, from 1 to the benchmark's bs. Contents
are redrawn between rounds (:func:`refresh`), so no call of a round meets contents met before."""
POOL_SIZE = {"cuda": 512, "cpu": 16}
"""Distinct request-tensor sets a ``fresh`` or ``varying-bs`` benchmark cycles through, by device
type, made before timing starts. On the GPU more than any planner cache ever held (256), so no call
finds its tensors cached; on the CPU fewer, since each is also called once before timing and the
interpreter and the simulator are slow."""
ROW_ALIGN = 64
"""A pool's request rows start 64 elements (512 bytes of int64) apart: every entry is as aligned as
a tensor of its own (kernels specialise on pointer alignment)."""
WRITE_REQ_CAPACITY = 4096
"""Output buffers are sized for the largest batch, as upstream allocates them once per server."""


@dataclass(frozen=True)
class Spec:
    """How to draw one batch; :func:`spec_for` gives the suite's defaults per scenario/device."""

    table: tuple[int, int]
    lut_len: int = 0
    window: int = 0
    padding_every: int = 8
    prefill_every: int = 0
    prefill_extend: tuple[int, int] = (16, 1024)
    seed: int = 0


def spec_for(scenario: str, device: str, table: tuple[int, int] | None = None,
             seed: int = 0) -> Spec:
    """The :class:`Spec` of a named scenario (see the module docstring) on ``device``."""
    gpu = torch.device(device).type == "cuda"
    table = table or (GPU_TABLE if gpu else CPU_TABLE)
    if scenario == "decode":
        return Spec(table=table, seed=seed)
    if scenario == "serving":
        return Spec(table=table, lut_len=GPU_LUT_LEN if gpu else CPU_LUT_LEN,
                    window=min(GPU_WINDOW if gpu else CPU_WINDOW, table[1]), prefill_every=8,
                    seed=seed)
    raise ValueError(f"unknown workload {scenario!r}: use one of {', '.join(WORKLOADS)}")


_SHARED: dict[tuple, tuple[torch.Tensor, torch.Tensor | None]] = {}


def shared_tensors(device: torch.device, table: tuple[int, int], lut_len: int):
    """The device's table (int32, slots in [1, max(lut_len, 2^22))) and LUT (or None), cached."""
    key = (str(device), table, lut_len)
    if key not in _SHARED:
        g = torch.Generator(device=device).manual_seed(1234)
        high = lut_len if lut_len else 1 << 22
        t = torch.randint(1, high, table, generator=g, device=device, dtype=torch.int32)
        lut = (torch.randint(1, 1 << 30, (lut_len,), generator=g, device=device)
               if lut_len else None)
        if len(_SHARED) > 4:  # a benchmark uses one or two; keep device memory bounded
            _SHARED.clear()
        _SHARED[key] = (t, lut)
    return _SHARED[key]


def request_vectors(bs: int, spec: Spec) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(req_pool_indices, prefix_lens, extend_seq_lens), int64 [bs] on the CPU (see the module
    docstring for the mix)."""
    rows, cols = spec.table
    g = torch.Generator().manual_seed(spec.seed * 100_003 + bs)
    padding = (torch.randint(0, spec.padding_every, (bs,), generator=g) == 0
               if spec.padding_every else torch.zeros(bs, dtype=torch.bool))
    active = (~padding).nonzero().flatten()
    if active.numel() > rows - 1:  # not enough distinct rows: pad the surplus
        padding[active[rows - 1:]] = True
        active = active[: rows - 1]
    rpi = torch.zeros(bs, dtype=torch.int64)
    rpi[active] = torch.randperm(rows - 1, generator=g)[: active.numel()] + 1
    prefix = torch.randint(1, max(cols, 2), (bs,), generator=g)
    extend = torch.ones(bs, dtype=torch.int64)
    if spec.prefill_every:
        prefill = torch.randint(0, spec.prefill_every, (bs,), generator=g) == 0
        lo, hi = spec.prefill_extend
        extend[prefill] = torch.randint(lo, hi + 1, (int(prefill.sum()),), generator=g)
        prefix[prefill] = torch.randint(0, max(cols // 2, 1), (int(prefill.sum()),), generator=g)
    # padding rows carry leftover values, as a padded CUDA-graph batch does
    return rpi, prefix, extend


def build(bs: int, spec: Spec, device: str | torch.device) -> dict:
    """The launcher's 13 keyword arguments for a batch of ``bs`` requests drawn by ``spec``."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    table, lut = shared_tensors(device, spec.table, spec.lut_len)
    rpi, prefix, extend = request_vectors(bs, spec)
    window = spec.window if lut is not None else 0
    # verify capacity: room for every request's whole window (or row): verify stays enabled
    per_request = window if window > 0 else spec.table[1]
    buffers = PlanBuffers.allocate(write_req_capacity=WRITE_REQ_CAPACITY,
                                   **{VERIFY_CAPACITY_NAME: max(1, WRITE_REQ_CAPACITY
                                                                * per_request)},
                                   device=device)
    kw = dict(zip(REQUEST_INPUT_NAMES, (rpi.to(device), prefix.to(device), extend.to(device))))
    kw.update(zip(TABLE_INPUT_NAMES, (table, lut)))
    kw[SWA_WINDOW_NAME] = window
    kw.update(buffers.launcher_kwargs())
    for name, value in kw.items():
        if name.startswith("out_"):
            value.fill_(POISON)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return kw


def request_pool(kw: dict, scenario: str, *, size: int | None = None, seed: int = 0) -> list[dict]:
    """The launcher arguments of every call of a scenario (:data:`SCENARIOS`), built from ``kw``.

    ``reused``: one dict, with its own copies of ``kw``'s three request tensors (so that
    :func:`refresh` changes no other benchmark's). ``fresh``: ``size`` (default
    :data:`POOL_SIZE`) dicts, each with its own request tensors and its own contents (``kw``'s,
    then :func:`refresh` with ``seed``: new rows, prefixes and extend order per entry).
    ``varying-bs``: the same, cut to the first ``k`` requests, ``k`` drawn uniformly from [1, bs]
    with ``seed`` (a batch's prefix: rows stay distinct). A pool's request tensors are row views
    of one ``[size, stride]`` tensor per name (each entry contiguous, with its own address, rows
    :data:`ROW_ALIGN` elements apart as the allocator would align them), so that :func:`refresh`
    redraws them all in three tensor ops. All entries share ``kw``'s table, LUT
    and outputs (a server's buffer set).
    """
    names = REQUEST_INPUT_NAMES
    if scenario == "reused":
        return [dict(kw, **{n: kw[n].clone() for n in names})]
    bs = int(kw[names[0]].shape[0])
    size = size or POOL_SIZE[kw[names[0]].device.type]
    if scenario == "fresh":
        sizes = [bs] * size
    elif scenario == "varying-bs":
        g = torch.Generator().manual_seed(seed)
        sizes = torch.randint(1, max(bs, 1) + 1, (size,), generator=g).tolist()
    else:
        raise ValueError(f"unknown scenario {scenario!r}: use one of {', '.join(SCENARIOS)}")
    stride = -(-max(bs, 1) // ROW_ALIGN) * ROW_ALIGN
    bases = {n: kw[n].new_zeros((size, stride)) for n in names}
    for n in names:
        bases[n][:, :bs] = kw[n]
    pool = [dict(kw, **{n: bases[n][j, :k] for n in names}) for j, k in enumerate(sizes)]
    refresh(pool, torch.Generator().manual_seed(seed))
    if kw[names[0]].device.type == "cuda":
        torch.cuda.synchronize()
    return pool


def refresh(pool: list[dict], generator: torch.Generator) -> None:
    """New request contents for every entry of ``pool``, in place, valid as before: each entry's
    active rows (``req_pool_indices != 0``) rotated by a random r in the table's rows 1..rows-1
    (so they stay distinct), its positive prefixes rotated by a random s in 1..cols-1, its
    ``extend_seq_lens`` rolled by a random shift (the decode / prefill mix is kept). Padding rows
    stay padding. Tensors, shapes and addresses are unchanged: only contents move, as when a
    server writes the next step into its buffers.
    """
    rows, cols = (int(d) for d in pool[0][TABLE_INPUT_NAMES[0]].shape)
    rpi_name, prefix_name, extend_name = REQUEST_INPUT_NAMES
    for name in REQUEST_INPUT_NAMES:
        bases, widths = {}, {}
        for kw in pool:
            t = kw[name]
            base = t._base if t._base is not None else t
            bases[id(base)] = base
            widths[id(base)] = max(widths.get(id(base), 0), int(t.shape[0]) if t.dim() else 1)
        for key, base in bases.items():
            if base.numel() == 0 or widths[key] == 0:  # bs 0: nothing to redraw
                continue
            flat = base.view(-1, base.shape[-1])[:, : widths[key]]  # the requests, not the padding
            n, bs = flat.shape

            def draw(high: int, width: int = 1) -> torch.Tensor:
                return torch.randint(0, max(high, 1), (n, width),
                                     generator=generator).to(flat.device)

            if name == rpi_name and rows > 1:
                flat.copy_(torch.where(flat != 0, (flat - 1 + draw(rows - 1)) % (rows - 1) + 1,
                                       flat))
            elif name == prefix_name and cols > 1:
                flat.copy_(torch.where(flat > 0, (flat - 1 + draw(cols - 1)) % (cols - 1) + 1,
                                       flat))
            elif name == extend_name:
                index = (torch.arange(bs, device=flat.device) + draw(bs)) % bs
                flat.copy_(flat.gather(1, index))
