"""The plain run: a launcher case once more on buffers as a server hands them over.

Every other run of a case (:data:`conformance.engine.steps.RUNS`) calls the planner on outputs
filled with this run's random poison inside guarded allocations, and on inputs with guard fills and
garbage tails around them (:mod:`conformance.engine.inputs`). A planner that recognises those
fixtures (a poison value where it must write, an allocation larger than its tensor, a guard fill
before the table) could behave only then -- compute right, or raise its documented errors, only
there (tests/test_hostile13.py: a planner that swallowed every documented error on unpoisoned
outputs passed every error case while error cases ran poisoned only). So every launcher case, its
error steps included, runs once more, as run :data:`PLAIN`, with every tensor in an allocation of
its own, of exactly its length (an error step's overrides applied to them as in the other runs):

* outputs zero-filled (:data:`PLAIN_FILL`), except ``out_verify_enable``, which is 1; before
  each later step the outputs of :data:`ZEROED_EACH_STEP` (``out_write_offsets``) are zeroed
  again and the others keep what the previous step left;
* ``req_to_token`` and the LUT copies of the case's tables, with no guard zones;
* per-request inputs of exactly bs elements, no garbage tail, a new tensor every step.

The judge (:mod:`conformance.engine.judge`) judges this run as the others, element by element:
"untouched" elements must still hold what the plain fill (or an earlier step of the plain run) left
there. A difference found only here is reported as appearing only on plain buffers. In the
isolated engine a write past the end of these exact-size tensors is still seen: every shared CPU
storage has hidden guards around it (:mod:`conformance.robustness.shared_tensors`); and the
inputs' storages end on a page boundary there, with the page after them unmapped for the planner,
so a read past the end of the table, the LUT or a request input faults
(:mod:`conformance.robustness.guard_pages`).

Why zeros (upstream's facts, sglang ``python/sglang/jit_kernel/kv_canary/``): ``WritePlan.allocate``
and ``VerifyPlan.allocate`` (``write.py``, ``verify.py``) allocate the plan's outputs with
``torch.empty`` in recent versions (``torch.zeros``, "all zeros", in earlier ones), except
``VerifyPlan.enable``, allocated with ``torch.ones``; the server allocates each plan once and reuses
it every forward step (``SingleForwardManager``, ``python/sglang/srt/kv_canary/runner/``: a later
step finds the previous step's plan there, as a later step of the plain run does); the whole-plan
wrapper (``plan/api.py``) zeroes ``write_offsets`` before every launch and
takes the scratch from ``torch.empty``; the plan kernel's own tests zero the plans first
(``zero_for_testing_``). ``torch.empty`` gives whatever the allocator holds -- zeros in practice on
memory fresh from the driver (never promised), a stale plan on reused memory -- so zeros are the
reproducible stand-in, and they are what ``write_offsets`` always holds when the planner is called,
so the plain run zeroes it before every step. A planner that writes only what changed since its
own last write, trusting a memo that a zero at ``write_offsets[0]`` confirms, leaves stale zeros
here (tests/test_hostile12.py).

Cost, measured when the run covered the valid cases only: one more call per valid step, 94 calls
over the 84 valid cases of the corpus on top of its 428 (+22 % of the calls, +50 % of the valid
cases' calls). The error cases' plain steps (about 120 more calls) stop at validation and add
little (the 113 ``err-`` launcher cases on python: about 1 s of 2 shared cores either way).
Measured when this run was added (CPU seconds of ``pytest conformance/ --planner P``, 2 shared
cores, the run off / on, each measured two to four times): python 11.7 s / 12.1 s (about +5 %),
the Triton interpreter 18.5 s / 23.8 s on average (about +30 %, +45 % at worst). Far from
doubling, so every step of a valid case runs plain, not only the first: a later step then finds
the previous step's plan in the buffers (``write_offsets`` zeroed), as a server's next forward step
does.
"""

from __future__ import annotations

import torch

from conformance.corpus.arrays import evaluate
from conformance.engine.inputs import OUTPUT_DTYPES, OutputBuffer, output_lengths
from conformance.corpus.corpus_subject import contract as _contract

VERIFY_ENABLE_NAME = _contract.VERIFY_ENABLE_NAME

PLAIN = "plain"
"""The plain run's name (after the poisoned runs ``a`` and ``b``)."""
PLAIN_FILL: dict[str, int] = {VERIFY_ENABLE_NAME: 1}
"""What each output holds before the plain run, when not 0: upstream allocates ``enable`` as 1."""
ZEROED_EACH_STEP: tuple[str, ...] = tuple(getattr(_contract, "ZEROED_BEFORE_EACH_LAUNCH", ()))
"""Outputs the plain run zeroes again before each of its steps after the first, as the subject's
caller does before every launch (upstream's whole-plan wrapper zeroes ``write_offsets``)."""


def plain_fill(name: str) -> int:
    """The value output ``name`` is filled with before the plain run."""
    return PLAIN_FILL.get(name, 0)


def has_plain_run(case) -> bool:
    """Whether ``case`` runs plain too: every launcher case, its error steps included (a planner
    that raises its documented errors only on poisoned or guarded buffers fails here:
    tests/test_hostile13.py)."""
    return case.entry == "launcher"


def plain_outputs(case, device: torch.device) -> dict[str, OutputBuffer]:
    """The outputs of ``case`` for the plain run: each its own allocation of exactly its length,
    filled with :func:`plain_fill` (no guard zones: ``storage`` is ``view``)."""
    buffers = {}
    for name, n in output_lengths(case).items():
        tensor = torch.full((n,), plain_fill(name), dtype=OUTPUT_DTYPES[name], device=device)
        buffers[name] = OutputBuffer(tensor, tensor)
    return buffers


def plain_requests(step, names: tuple[str, ...], device: torch.device) -> dict[str, torch.Tensor]:
    """``step``'s per-request inputs as plain int64 tensors of exactly bs elements (no tail)."""
    return {name: torch.tensor(evaluate(step.inputs.get(name, [])), dtype=torch.int64,
                               device=device) for name in names}
