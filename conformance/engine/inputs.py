"""Build one step's launcher arguments on a device: inputs with garbage tails, poisoned outputs with
guard zones, then the case's overrides.

* Every per-request input (``req_pool_indices``, ``prefix_lens``, ``extend_seq_lens``) is a
  contiguous view of the first bs elements of a longer allocation whose tail holds active rows with
  huge lengths: a planner that reads lanes past bs changes its totals and is caught.
* ``req_to_token`` and the LUT are contiguous views into allocations with :data:`GUARD` elements of
  garbage before and after them: a read outside the tensor returns a value no case expects, and a
  write there changes the allocation, which must stay as it was.
* Every output buffer is a view into an allocation with :data:`GUARD` elements before and after it;
  the whole allocation is filled with poison before each run, so an element never written, or
  written outside the tensor, is seen.

Every fill (the poison of each run, the guard zones around the table and the LUT) is drawn from this process's *poison seed* (:func:`poison_seed`): ``os.urandom`` at
import, or ``--poison-seed N`` (:func:`set_poison_seed`). The poison is independent random values
per element (never a base + i pattern), so a planner cannot recognise the harness's buffers by
their contents, nor learn the fills from an earlier run. The tensors are always built in the
harness's process (the isolation worker only receives them), so the public names below hold the
fills actually used: :data:`TABLE_GUARD_GARBAGE` is what the judge's evidence looks for.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from types import MappingProxyType

import torch

from conformance.corpus.arrays import evaluate, spec_len
from conformance.corpus.subject import subject_of
from conformance.corpus.corpus_subject import contract as _contract

ARGUMENTS = _contract.ARGUMENTS
LUT_NAME = _contract.LUT_NAME
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_NAMES = _contract.SCALAR_NAMES
TABLE_NAME = _contract.TABLE_NAME

GUARD = 16
"""Elements of guard zone before and after every output buffer."""
TAIL = 64
"""Elements of garbage after every per-request input."""
TAIL_GARBAGE: dict[str, int] = dict(zip(REQUEST_INPUT_NAMES, (1, 1 << 40, 1 << 40)))
"""What lies past bs in each per-request input (req_pool_indices, prefix_lens, extend_seq_lens):
active rows (row 1) with huge lengths, so that reading them changes every total (fixed: a
planner that reads them is wrong whatever they hold; the poison and guards are what is drawn)."""
SCALAR_DEFAULTS = dict(zip(SCALAR_NAMES, (0, 1 << 20)))
"""A case that names no window is full attention (0); no verify capacity: 1 << 20, above every
case's verify total."""
POISON_RANGES = MappingProxyType({torch.int64: (1 << 40, 1 << 62),
                                  torch.int32: (1 << 30, (1 << 31) - 1)})
"""Magnitudes of poison values per dtype: run ``a`` draws them positive, run ``b`` negative, so
every element differs between the two runs and no poison value is a plausible offset, count or
slot (spec section 3's values are far below). Read-only: a planner in this process cannot narrow
them in place (the one-call engine watches this module's bindings)."""
POISONS: dict[str, dict[torch.dtype, int]] = {"a": {}, "b": {}}
"""A poison base of each run and dtype (drawn per seed; the sign of its run's values). The
poison itself is :func:`poison_values`, random per element; ``conformance.repro`` writes these
bases into its scripts, which fill base + i (a script needs no secret)."""
TABLE_GUARD_GARBAGE: dict[torch.dtype, int] = {}
"""Guard-zone values around the table (int32) and the LUT (int64), drawn per seed in
[0x3000_0000, 0x4000_0000) (int32) and [0x3000_0000_0000, 0x4000_0000_0000) (int64): no case
expects them as seeds, and an output holding one proves a read outside a tensor."""
_SEED: list[int] = []


def set_poison_seed(seed: int) -> None:
    """Draw every fill from ``seed`` (an int >= 0), updating :data:`POISONS` and
    :data:`TABLE_GUARD_GARBAGE` in place (modules that imported them see
    the new values). Call before any case is built."""
    rng = random.Random(f"conformance-poison-{int(seed)}")
    _SEED[:] = [int(seed)]
    for run, sign in (("a", 1), ("b", -1)):
        for dtype, (low, high) in POISON_RANGES.items():
            POISONS[run][dtype] = sign * rng.randrange(low, high)
    TABLE_GUARD_GARBAGE[torch.int32] = rng.randrange(0x3000_0000, 0x4000_0000)
    TABLE_GUARD_GARBAGE[torch.int64] = rng.randrange(0x3000_0000_0000, 0x4000_0000_0000)


def poison_seed() -> int:
    """The seed every fill of this process is drawn from (see the module docstring)."""
    return _SEED[0]


def new_poison_seed() -> int:
    """A fresh seed from ``os.urandom`` (63 bits)."""
    return int.from_bytes(os.urandom(8), "little") >> 1


def poison_values(run: str, dtype: torch.dtype, n: int) -> torch.Tensor:
    """The ``n`` poison values of run ``run`` for an allocation of ``dtype`` (CPU): independent
    random magnitudes in :data:`POISON_RANGES`, positive in run ``a`` and negative in run ``b``,
    drawn from the poison seed (the same for every allocation of that length in this process).
    A new tensor every call: none is kept that a planner in this process could reach and
    overwrite, so that a later run's fill holds what it chose (tests/test_one_call_attacks.py)."""
    low, high = POISON_RANGES[dtype]
    gen = torch.Generator().manual_seed(
        random.Random(f"conformance-poison-{poison_seed()}-{run}-{dtype}-{n}").getrandbits(63))
    magnitude = torch.randint(low, high, (n,), generator=gen, dtype=torch.int64)
    sign = 1 if POISONS[run][dtype] > 0 else -1
    return (magnitude * sign).to(dtype)


STALE_PLAN_RANGE = (-1, 1 << 12)
"""What a stale plan holds (offsets, counts, slots, positions and the -1 of an earlier step): the
range of :func:`stale_plan_values`."""


def stale_plan_values(dtype: torch.dtype, n: int) -> torch.Tensor:
    """``n`` values a stale plan could hold, drawn per element in :data:`STALE_PLAN_RANGE` from the
    poison seed (CPU, ``dtype``): the fill of a run that a planner cannot tell from a server's
    reused outputs, so that a planner right only on poison-sized fills is seen. A new tensor every
    call, as :func:`poison_values`."""
    gen = torch.Generator().manual_seed(random.Random(
        f"conformance-stale-plan-{poison_seed()}-{dtype}-{n}").getrandbits(63))
    return torch.randint(*STALE_PLAN_RANGE, (n,), generator=gen, dtype=torch.int64).to(dtype)


def run_seed(run: str) -> int:
    """A 62-bit seed of run ``run`` drawn from the poison seed: what a subject draws the values
    of an input the contract leaves unread from (a scratch past its length), so that a planner
    cannot recognise them."""
    return random.Random(f"conformance-run-{poison_seed()}-{run}").getrandbits(62)


set_poison_seed(new_poison_seed())

OUTPUT_DTYPES = {a.name: a.dtype for a in ARGUMENTS if a.role == "output"}
"""Each output's dtype (spec section 3)."""
DTYPES = {name: getattr(torch, name) for name in
          ("int8", "int16", "int32", "int64", "uint8", "float32", "float64", "bool")}


@dataclass
class OutputBuffer:
    """An output tensor (``view``) inside a guarded allocation (``storage``)."""

    storage: torch.Tensor
    view: torch.Tensor

    def poison(self, run: str) -> None:
        """Fill the whole allocation with run ``run``'s poison (:func:`poison_values`)."""
        self.storage.copy_(poison_values(run, self.storage.dtype, self.storage.numel()))


def output_lengths(case) -> dict[str, int]:
    """Length of each output tensor of ``case`` (its subject's buffer lengths, spec section 3)."""
    return subject_of(case).buffer_lengths(case)


def allocate_outputs(case, device: torch.device) -> dict[str, OutputBuffer]:
    """Guarded output buffers for ``case`` on ``device`` (poison them before use)."""
    buffers = {}
    for name, n in output_lengths(case).items():
        storage = torch.empty(n + 2 * GUARD, dtype=OUTPUT_DTYPES[name], device=device)
        buffers[name] = OutputBuffer(storage, storage[GUARD:GUARD + n])
    return buffers


class RequestInputs:
    """The per-request inputs of a multi-step case, reused the way a server reuses its CUDA-graph
    input buffers: one allocation per input for the whole case, new values written in place each
    step, and the very same tensor object handed over whenever bs repeats. A planner that caches
    anything keyed on tensor identity or address therefore sees new values behind an old key.

    Past bs every allocation holds :data:`TAIL_GARBAGE` again at each step.
    """

    def __init__(self, case, device: torch.device) -> None:
        # The longest array of any step: a length-error case gives arrays of different lengths.
        most = max(spec_len(step.inputs.get(name, [])) for step in case.steps
                   for name in TAIL_GARBAGE)
        self.storage = {name: torch.full((most + TAIL,), garbage, dtype=torch.int64, device=device)
                        for name, garbage in TAIL_GARBAGE.items()}
        self.views: dict[tuple[str, int], torch.Tensor] = {}

    def write(self, step) -> dict[str, torch.Tensor]:
        """Write ``step``'s values in place; returns the three input tensors (length bs)."""
        out = {}
        for name, storage in self.storage.items():
            values = evaluate(step.inputs.get(name, []))
            n = len(values)
            storage.fill_(TAIL_GARBAGE[name])
            storage[:n].copy_(torch.tensor(values, dtype=torch.int64))
            out[name] = self.views.setdefault((name, n), storage[:n])
        return out


def apply_patches(table: torch.Tensor, lut: torch.Tensor | None, step) -> None:
    """Apply a step's ``req_to_token_set`` / ``lut_set`` in place: a table or LUT entry that changes
    between steps, as the KV allocator changes them between forward steps."""
    for row, pos, value in step.inputs.get("req_to_token_set", ()):
        table[row, pos] = value
    for index, value in step.inputs.get("lut_set", ()):
        lut[index] = value


def _request_tensor(name: str, values: list[int], device: torch.device) -> torch.Tensor:
    storage = torch.full((len(values) + TAIL,), TAIL_GARBAGE[name], dtype=torch.int64)
    storage[: len(values)] = torch.tensor(values, dtype=torch.int64)
    return storage.to(device)[: len(values)]


def _guarded(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of ``tensor`` inside an allocation with GUARD garbage elements each side."""
    n = tensor.numel()
    storage = torch.full((n + 2 * GUARD,), TABLE_GUARD_GARBAGE[tensor.dtype], dtype=tensor.dtype,
                         device=tensor.device)
    storage[GUARD:GUARD + n] = tensor.reshape(-1)
    return storage[GUARD:GUARD + n].view(tensor.shape)


def build_tables(case, device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(req_to_token, LUT or None) of ``case`` on ``device``, shared by all its steps, each inside
    a guarded allocation."""
    tables = subject_of(case).build_tables(case, device)
    table, lut = tables[TABLE_NAME], tables[LUT_NAME]
    return _guarded(table), None if lut is None else _guarded(lut)


def launcher_kwargs(step, device: torch.device, table: torch.Tensor, lut: torch.Tensor | None,
                    buffers: dict[str, OutputBuffer],
                    requests: RequestInputs | None = None) -> dict[str, object]:
    """The launcher's keyword arguments for ``step``, before overrides: per-request inputs written
    into ``requests`` when given (reused across steps), else freshly allocated."""
    if requests is not None:
        kwargs: dict[str, object] = dict(requests.write(step))
    else:
        kwargs = {name: _request_tensor(name, evaluate(step.inputs.get(name, [])), device)
                  for name in TAIL_GARBAGE}
    kwargs[TABLE_NAME] = table
    kwargs[LUT_NAME] = lut
    for name, buffer in buffers.items():
        kwargs[name] = buffer.view
    for name, default in SCALAR_DEFAULTS.items():
        kwargs[name] = step.inputs.get(name, default)
    return kwargs


def _override_one(tensor: torch.Tensor, override: dict) -> torch.Tensor:
    if "dtype" in override:
        return tensor.to(DTYPES[override["dtype"]])
    if "layout" in override:  # same shape and values, every other element of a wider allocation
        shape = tuple(tensor.shape) or (1,)
        wide = torch.zeros(*shape[:-1], shape[-1] * 2, dtype=tensor.dtype, device=tensor.device)
        wide[..., ::2] = tensor.reshape(shape)
        return wide[..., ::2]
    if "shape" in override:
        return torch.zeros(override["shape"], dtype=tensor.dtype, device=tensor.device)
    if "device" in override:
        return tensor.to(override["device"])
    raise ValueError(f"unknown override {override}")


def apply_overrides(kwargs: dict[str, object], overrides: list[dict]) -> dict[str, object]:
    """A copy of ``kwargs`` with each override applied in order (see
    cases/<subject>/README.md, *Overrides*)."""
    out = dict(kwargs)
    for override in overrides:
        if "swap" in override:
            a, b = override["swap"]
            out[a], out[b] = out[b], out[a]
        else:
            name = override["tensor"]
            if out[name] is None:
                raise ValueError(f"override of {name}, which is None in this case")
            out[name] = _override_one(out[name], override)
    return out
