"""Judge an entries launcher on a device: the cases of ``cases/entries-planner/*.jsonl`` through the
one-call engine (:mod:`conformance.engine.one_call`: every output element with the rule of spec
``docs/spec/entries-planner.md`` section 8 that decides it) and random in-contract batches whose
expected entries are the pure-Python planner's (:mod:`impls.entries_planner.python_planner`, the
readable reference) on the very same inputs.

Per case a status from the verdict, judged on the contract (upstream is an external planner):
``pass``; ``differs (RULES)`` (every difference decided by those project rules of spec section 6);
``error-divergence`` (an error case on which it raised another error and touched nothing: upstream's
checks are C++ ``RuntimeCheck`` / tvm-ffi errors with their own text, spec section 4), or
``error-divergence (RULES)`` when what it wrote is decided by those project rules;
``unchecked`` (an error case on which it raised nothing: it lacks the check, and what it wrote
is in the verdict; its other contract differences, if any, are writes, never an input changed);
both read from the kinds of every difference, the ones past the verdict's kept 64 too; ``oob``;
``fail`` (anything else). The verdict itself is kept in the row (``verdict``), so a report or a
manifest reads data, never this text.
"""

from __future__ import annotations

import random
import traceback

import torch

from conformance.engine.one_call import judge_call
from conformance.engine.verdict import PROFILES, status_of
from conformance.paths import CASES_ROOT
from impls.entries_planner import subject
from impls.entries_planner.contract import ARGUMENT_NAMES, INPUT_NAMES, OUTPUT_NAMES
from impls.entries_planner.python_planner import launch as reference_launch

HAZARD_PINS = ("lut-empty", "entry-outside-table", "pool-outside", "overflow-writes-nothing")
"""Project rules whose situation upstream's kernel meets by reading outside a tensor or trapping
(spec section 6, "upstream CUDA kernel" column): such a case runs in a process of its own."""
POISON = -777_777
"""What the outputs of a random batch hold before the call."""


def load_cases() -> list[dict]:
    """Every entries case (``cases/entries-planner/*.jsonl``)."""
    return subject.load_cases(CASES_ROOT / subject.NAME)


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _diffs(got: dict[str, list[int]], want: dict[str, list[int]], limit: int = 3) -> dict:
    """Per output, the differing indices: count and the first ``limit`` (index, expected, got)."""
    out = {}
    for name in OUTPUT_NAMES:
        bad = [i for i, (g, w) in enumerate(zip(got[name], want[name])) if g != w]
        if len(got[name]) != len(want[name]):
            bad.append(min(len(got[name]), len(want[name])))
        if bad:
            out[name] = {"count": len(bad), "first": [
                [i, want[name][i] if i < len(want[name]) else None,
                 got[name][i] if i < len(got[name]) else None] for i in bad[:limit]]}
    return out


def _inputs(kwargs) -> dict[str, torch.Tensor]:
    return {n: kwargs[n].clone() for n in INPUT_NAMES
            if isinstance(kwargs.get(n), torch.Tensor) and kwargs[n].device.type != "meta"}


def _changed_inputs(before, kwargs) -> list[str]:
    return [n for n, t in before.items() if not torch.equal(t.cpu(), kwargs[n].cpu())]


def _call(launcher, kwargs, device):
    """None, or (type name, message) of what ``launcher`` raised (a CUDA error surfaces at sync)."""
    try:
        launcher(**kwargs)
        _sync(device)
    except Exception as exc:  # noqa: BLE001 - every exception is data here
        return type(exc).__name__, str(exc)
    return None


def _outputs(kwargs) -> dict[str, list[int]]:
    return {name: kwargs[name].cpu().tolist() for name in OUTPUT_NAMES}


def case_status(case: dict, verdict) -> tuple[str, tuple[str, ...]]:
    """(status, rules) of a case from its verdict (module docstring)."""
    status, rules = status_of(verdict, PROFILES["contract"])
    if status == "differs":
        return f"differs ({', '.join(rules)})", rules
    if status != "fail" or "error" not in case["expect"]:
        return status, rules
    contract = verdict.kinds("contract")  # over every difference, not only the kept ones
    others = sorted(r for r in verdict.rules() if r != "contract")
    if contract == {"error"}:
        return "error-divergence" + (f" ({', '.join(others)})" if others else ""), rules
    if "no-error" in contract and contract <= {"no-error", "written", "value"}:
        return "unchecked", rules  # returned and wrote; never an input changed or a rebinding
    return status, rules


def judge_case(launcher, case: dict, device, subject=subject) -> dict:
    """One case of ``subject`` (a one-call subject module, default the entries planner's) on
    ``launcher`` with its tensors on ``device``: a row with ``id``, ``pins``, ``status``,
    ``rules``, ``why`` (the first difference, one line) and ``verdict`` (plain data)."""
    row = {"id": case["id"], "pins": case.get("pins")}
    try:
        verdict = judge_call(subject, case, launcher, torch.device(device))
    except Exception as exc:  # noqa: BLE001 - the harness's own failure is recorded, not passed
        row.update(status="fail", rules=[], verdict=None,
                   why=f"harness: {type(exc).__name__}: {exc}"[:400])
        return row
    status, rules = case_status(case, verdict)
    first = verdict.differences[0] if verdict.differences else None
    why = "" if first is None else (
        f"{first.field}{'' if first.index is None else f'[{first.index}]'}: "
        f"expected {first.expected}, got {first.got} ({first.what}; rule {first.rule}); "
        f"{verdict.count} difference(s) in all")
    row.update(status=status, rules=list(rules), why=why[:400], verdict=verdict.to_json())
    return row


def safe_cases(cases=None) -> list[dict]:
    return [c for c in (load_cases() if cases is None else cases) if c.get("pins") not in HAZARD_PINS]


def hazard_cases(cases=None) -> list[dict]:
    return [c for c in (load_cases() if cases is None else cases) if c.get("pins") in HAZARD_PINS]


BS_CHOICES = (1, 2, 3, 5, 8, 31, 64, 127, 256, 511, 1000, 1024, 2048, 4095, 4096)


def random_batch(seed: int):
    """An in-contract batch (spec section 5: every read inside the table, LUT and pool; the gate
    open or shut by enable 0 / T <= 0 / T > C with enable 0, never T > C with enable set).
    Returns (kwargs on the CPU, offsets, every output as the reference planner leaves it from
    POISON, a one-line description)."""
    rng = random.Random(seed)
    bs = rng.choice(BS_CHOICES)
    max_reqs = bs + 1 + rng.choice((0, 3))
    max_seq_len = rng.choice((8, 16, 64, 200))
    window = rng.choice((0, 0, -3, 1, 4, 37, 5000))
    lut_len = rng.choice((0, 0, 50, 4096, 70000))  # 0 here: no LUT
    gen = torch.Generator().manual_seed(seed)
    hi = max(lut_len + lut_len // 8, 1000)
    table = torch.randint(-1, hi, (max_reqs, max_seq_len), generator=gen, dtype=torch.int32)
    lut = (torch.randint(-1, 1 << 40, (lut_len,), generator=gen, dtype=torch.int64)
           if lut_len else None)
    rpi = [0 if rng.random() < 0.15 else rng.randrange(1, max_reqs) for _ in range(bs)]
    prefix = [rng.choice((-2, 0, 1, max_seq_len)) if rng.random() < 0.2
              else rng.randint(0, max_seq_len) for _ in range(bs)]
    pool = valid = None
    offset = rng.choice((-1, 0, 1))
    if rng.random() < 0.6:
        cols = max_seq_len + 2 + rng.choice((0, 5))
        pool = torch.randint(-5, 1 << 30, (max_reqs, cols), generator=gen, dtype=torch.int32)
        valid = [rng.randint(-1, cols) for _ in range(bs)]
    gate = rng.choice(("open", "open", "open", "enable-0", "short-capacity"))
    offsets = subject.exclusive_offsets(rpi, prefix, window)
    total = offsets[-1]
    capacity = total + rng.choice((0, 1, 3, 100))
    enable = 1
    if gate == "enable-0":
        enable = 0
    elif gate == "short-capacity" and total > 0:
        capacity, enable = total - 1, 0
    values = (torch.tensor(rpi, dtype=torch.int64), torch.tensor(prefix, dtype=torch.int64),
              table, lut,
              torch.tensor(offsets + [subject.SCRATCH_GARBAGE] * 3, dtype=torch.int64),
              torch.tensor([enable], dtype=torch.int32), pool,
              None if valid is None else torch.tensor(valid, dtype=torch.int64),
              *(torch.full((capacity,), POISON, dtype=torch.int64) for _ in OUTPUT_NAMES),
              offset, window)
    kwargs = dict(zip(ARGUMENT_NAMES, values))  # the contract's order (spec section 3)
    reference = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    reference_launch(**reference)  # the readable reference, on the CPU
    expected = _outputs(reference)
    what = (f"seed {seed}: bs {bs}, table {max_reqs}x{max_seq_len}, W {window}, "
            f"LUT {lut_len or 'none'}, pool {'none' if pool is None else tuple(pool.shape)}, "
            f"offset {offset}, T {total}, C {capacity}, enable {enable}")
    return kwargs, offsets, expected, what


def judge_random(launcher, device, count: int, first_seed: int = 1000) -> dict:
    """``count`` random batches; returns counts and the first failures (description and diffs)."""
    passed, failures = 0, []
    for seed in range(first_seed, first_seed + count):
        kwargs, _, expected, what = random_batch(seed)
        kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        before = _inputs(kwargs)
        try:
            got_error = _call(launcher, kwargs, device)
        except Exception:  # noqa: BLE001
            got_error = ("harness", traceback.format_exc(limit=2))
        if got_error is not None:
            failures.append({"batch": what, "got_error": got_error})
            continue
        diffs, changed = _diffs(_outputs(kwargs), expected), _changed_inputs(before, kwargs)
        if diffs or changed:
            failures.append({"batch": what, "diffs": diffs, "inputs_changed": changed})
        else:
            passed += 1
    return {"batches": count, "passed": passed, "failed": len(failures), "failures": failures[:10]}
