"""Judge a launcher of a one-call subject on a device: the subject's cases (``cases/NAME/``)
through the one-call engine (:mod:`conformance.engine.one_call`: every output element with the rule
of the subject's spec that decides it) and, for a subject with ``UPSTREAM_ENTRY``
(:mod:`conformance.upstream.entry_subject`), random in-contract batches whose expected outputs are
the subject's reference planner's on the very same inputs (``UPSTREAM_ENTRY.random_batch``).
Where no subject is given, the subject is the one that defines ``UPSTREAM_ENTRY``.

Per case a status from the verdict, judged on the contract (upstream is an external planner):
``pass``; ``differs (RULES)`` (every difference decided by those project rules of the subject's spec);
``error-divergence`` (an error case on which it raised another error and touched nothing: upstream's
checks may be C++ ``RuntimeCheck`` / tvm-ffi errors with their own text), or
``error-divergence (RULES)`` when what it wrote is decided by those project rules;
``unchecked`` (an error case on which it raised nothing: it lacks the check, and what it wrote
is in the verdict; its other contract differences, if any, are writes, never an input changed);
both read from the kinds of every difference, the ones past the verdict's kept 64 too; ``oob``;
``fail`` (anything else). The verdict itself is kept in the row (``verdict``), so a report or a
manifest reads data, never this text.
"""

from __future__ import annotations

import traceback

import torch

from conformance.corpus.subjects import case_folder
from conformance.engine.one_call import judge_call
from conformance.engine.verdict import PROFILES, status_of
from conformance.paths import CASES_ROOT
from conformance.upstream.entry_subject import entry_facts, entry_subject

POISON = -777_777
"""What the outputs of a random batch hold before the call."""


def load_cases(subject=None) -> list[dict]:
    """Every case of ``subject`` (a module or a name; default the one with ``UPSTREAM_ENTRY``),
    from its folder (``cases/NAME/``)."""
    subject = entry_subject(subject)
    return subject.load_cases(case_folder(subject, CASES_ROOT))


def hazard_pins(subject=None) -> tuple[str, ...]:
    """The pins whose cases each run in a process of their own (the subject's
    ``UPSTREAM_ENTRY.HAZARD_PINS``: project rules whose situation upstream's kernel meets by
    reading outside a tensor or trapping)."""
    return tuple(entry_facts(subject).HAZARD_PINS)


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def _diffs(got: dict[str, list[int]], want: dict[str, list[int]], limit: int = 3) -> dict:
    """Per output (``want``'s, in order), the differing indices: count and the first ``limit``
    (index, expected, got)."""
    out = {}
    for name in want:
        bad = [i for i, (g, w) in enumerate(zip(got[name], want[name])) if g != w]
        if len(got[name]) != len(want[name]):
            bad.append(min(len(got[name]), len(want[name])))
        if bad:
            out[name] = {"count": len(bad), "first": [
                [i, want[name][i] if i < len(want[name]) else None,
                 got[name][i] if i < len(got[name]) else None] for i in bad[:limit]]}
    return out


def _inputs(kwargs, names) -> dict[str, torch.Tensor]:
    return {n: kwargs[n].clone() for n in names
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


def _outputs(kwargs, names) -> dict[str, list[int]]:
    return {name: kwargs[name].cpu().tolist() for name in names}


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


def judge_case(launcher, case: dict, device, subject=None) -> dict:
    """One case of ``subject`` (a one-call subject module; default the one with ``UPSTREAM_ENTRY``) on
    ``launcher`` with its tensors on ``device``: a row with ``id``, ``pins``, ``status``,
    ``rules``, ``why`` (the first difference, one line) and ``verdict`` (plain data)."""
    row = {"id": case["id"], "pins": case.get("pins")}
    subject = entry_subject(subject)
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


def safe_cases(cases=None, subject=None) -> list[dict]:
    """The cases (default every one of ``subject``'s) that pin none of its :func:`hazard_pins`."""
    pins = hazard_pins(subject)
    return [c for c in (load_cases(subject) if cases is None else cases) if c.get("pins") not in pins]


def hazard_cases(cases=None, subject=None) -> list[dict]:
    """The cases (default every one of ``subject``'s) that pin one of its :func:`hazard_pins`."""
    pins = hazard_pins(subject)
    return [c for c in (load_cases(subject) if cases is None else cases) if c.get("pins") in pins]


def random_batch(seed: int, subject=None):
    """The subject's random in-contract batch of ``seed`` (``UPSTREAM_ENTRY.random_batch``): (kwargs
    on the CPU, the scratch, {output: the reference planner's values from :data:`POISON`}, a
    one-line description)."""
    return entry_facts(subject).random_batch(seed, POISON)


def judge_random(launcher, device, count: int, first_seed: int = 1000, subject=None) -> dict:
    """``count`` random batches of ``subject`` (:func:`random_batch`): each output equal to the
    reference planner's in every element, no input tensor (``UPSTREAM_ENTRY.INPUT_NAMES``)
    changed; returns counts and the first failures (description and diffs)."""
    facts = entry_facts(subject)
    passed, failures = 0, []
    for seed in range(first_seed, first_seed + count):
        kwargs, _, expected, what = facts.random_batch(seed, POISON)
        kwargs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        before = _inputs(kwargs, facts.INPUT_NAMES)
        try:
            got_error = _call(launcher, kwargs, device)
        except Exception:  # noqa: BLE001
            got_error = ("harness", traceback.format_exc(limit=2))
        if got_error is not None:
            failures.append({"batch": what, "got_error": got_error})
            continue
        diffs = _diffs(_outputs(kwargs, expected), expected)
        changed = _changed_inputs(before, kwargs)
        if diffs or changed:
            failures.append({"batch": what, "diffs": diffs, "inputs_changed": changed})
        else:
            passed += 1
    return {"batches": count, "passed": passed, "failed": len(failures), "failures": failures[:10]}
