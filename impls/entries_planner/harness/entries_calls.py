"""What :mod:`impls.entries_planner.harness.entries` times, and the correctness gate before any figure.

* Planners by spec (:func:`resolve`): a built-in entries planner (``python``, ``triton``,
  ``numba-cuda``: :mod:`impls.entries_planner`), a built-in offsets planner for the whole step
  (``triton``, ``numba-cuda``: :mod:`impls.offsets_planner.registry`), or any ``module:callable`` with the
  launcher's signature (upstream's offsets launcher, or an entries planner of your own).
* The gate (:func:`first_difference`): every element of the four outputs (the written region
  [0, T) and the tail past T, which must keep its poison) against the Python entries planner's on
  the same inputs (:func:`impls.entries_planner.harness.entries_workload.add_reference`); for a whole step
  also the offsets planner's six outputs against the Python offsets planner's. A planner is timed
  only after it passed, and checked again after its timed calls.
* Timing is :mod:`conformance.bench.timing`'s: :func:`eager` (host wall time of the launch call,
  not synchronised: the host's cost of an eager step), :func:`replay` (one plan per CUDA graph,
  captured on another step's inputs, refilled in place with this step's, replays behind a sleep
  kernel: device us per plan).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from impls.entries_planner.harness import entries_workload as ew
from conformance.bench import timing as gt
from impls.offsets_planner.contract import OUTPUT_NAMES as OFFSETS_OUTPUTS
from impls.entries_planner import contract as ec

PUBLISHED = "published"
NO_CUDA = "not available without CUDA"
NO_CUDA_GATED = f"{NO_CUDA} (gate passed on an eager call)"
"""A replay or whole-step row without CUDA whose planner passed the gate."""
BUILTIN_ENTRIES = ("python", "triton", "numba-cuda")
BUILTIN_OFFSETS = ("triton", "numba-cuda")
UPSTREAM_OFFSETS = "sglang.kernels.ops.kv_canary.plan.offsets_kernel:launch_plan_offsets_kernel"
"""Upstream's offsets launcher as laid out from its wheel (:mod:`conformance.upstream`)."""
EAGER_COUNTS = {"cuda": dict(calls=20, warmup=20, repeats=25), "cpu": dict(calls=1, warmup=1,
                                                                           repeats=3)}
PYTHON_COUNTS = dict(calls=1, warmup=0, repeats=3)
"""The pure-Python planner reads the whole table on the host every call: three calls."""


class Refused(Exception):
    """A figure that must not be published; the message is the row's status."""


def _unavailable(spec: str, exc: BaseException) -> Refused:
    """``not measured: SPEC unavailable here (Error: first line)``, of ``exc``'s cause if any."""
    cause = exc.__cause__ or exc
    return Refused(f"not measured: {spec} unavailable here ({type(cause).__name__}: "
                   f"{str(cause).splitlines()[0][:160] if str(cause) else ''})")


def resolve(spec: str, stage: str) -> Callable[..., None]:
    """The launcher of ``spec`` for ``stage`` (``entries`` or ``offsets``).

    Raises:
        Refused: ``not measured: ...`` when it cannot be imported or is unavailable here.
    """
    try:
        if ":" in spec:
            from impls.offsets_planner.registry import get_planner

            return get_planner(spec)
        if stage == "entries":
            from impls.entries_planner import get_planner as get_entries

            return get_entries(spec)
        from impls.offsets_planner.registry import get_planner

        return get_planner(spec)
    except Exception as exc:  # noqa: BLE001 - the reason is the row's status
        raise _unavailable(spec, exc)


def first_difference(got: dict, want: dict, total: int | None = None) -> str | None:
    """``name[i] (region): got X, reference Y; N element(s) differ`` for the first output element
    that differs (``want``'s names, whole tensors), or None. ``total`` names the region: the
    written region [0, T) or the tail."""
    for name, expected in want.items():
        actual = got[name].to(expected.device)
        bad = (actual != expected).nonzero().flatten()
        if bad.numel():
            i = int(bad[0])
            region = "" if total is None else (" (written region)" if i < total else " (tail)")
            return (f"{name}[{i}]{region}: got {int(actual[i])}, reference {int(expected[i])}; "
                    f"{bad.numel()} element(s) differ")
    return None


def can_replay(device: torch.device) -> bool:
    """Whether CUDA-graph replay can be timed on ``device`` (a CUDA device)."""
    return device.type == "cuda"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _outputs(kw: dict, names) -> dict:
    return {n: kw[n] for n in names}


def _run_checked(fn: Callable[[], object] | None, w: ew.Workload,
                 checks: list[tuple[dict, dict, int | None]], when: str) -> None:
    """Call ``fn`` once (None: no call, only the comparison) and compare every output with its
    reference; raise Refused on an error or a difference (``when`` says at which point)."""
    try:
        if fn is not None:
            fn()
        _sync(w.device)
    except Exception as exc:  # noqa: BLE001 - a planner that raises gets no figure
        raise Refused(f"not published: raised {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")
    for got, want, total in checks:
        diff = first_difference(got, want, total)
        if diff:
            raise Refused(f"not published: outputs differ at {diff} ({when})")


def entries_checks(kw: dict, w: ew.Workload) -> list:
    return [(_outputs(kw, ec.OUTPUT_NAMES), w.reference, w.total)]


def plan_checks(off: dict, ent: dict, w: ew.Workload) -> list:
    want_offsets = {n: w.offsets_kw[n] for n in OFFSETS_OUTPUTS}
    return [(_outputs(off, OFFSETS_OUTPUTS), want_offsets, None), *entries_checks(ent, w)]


def eager_time(fn: Callable[[], object], device: torch.device, python: bool = False):
    """Host us per call of ``fn`` (:func:`conformance.bench.timing.host_time`, not synchronised
    between calls; the device is idle when it starts)."""
    _sync(device)
    counts = PYTHON_COUNTS if python else EAGER_COUNTS[device.type]
    stats = gt.host_time(fn, sync=False, **counts)
    _sync(device)
    return stats


def eager(launch, w: ew.Workload, python: bool = False):
    """Gate, time and re-check one entries planner's eager launch on ``w``. Raises Refused."""
    kw = ew.fresh_entries_kw(w)
    fn = lambda: launch(**kw)  # noqa: E731
    _run_checked(fn, w, entries_checks(kw, w), "first call")
    stats = eager_time(fn, w.device, python)
    _run_checked(None, w, entries_checks(kw, w), "after the timed calls")
    return stats


def replay(launch, w: ew.Workload, previous: ew.Workload):
    """Replay device us per plan of one entries launch per CUDA graph: gate on ``w`` first, then
    capture on ``previous``' inputs, refill them with ``w``'s in place, replay, check. Raises
    Refused."""
    eager_kw = ew.fresh_entries_kw(w)
    _run_checked(lambda: launch(**eager_kw), w, entries_checks(eager_kw, w), "first call")
    if not can_replay(w.device):
        raise Refused(NO_CUDA_GATED)
    kw = ew.fresh_entries_kw(w, contents=previous)
    names = (*ew.ENTRIES_REQUEST_NAMES, *ew.PLAN_NAMES)
    stats = _guarded(lambda: gt.graph_replay_time(lambda: launch(**kw),
                                                  after_capture=lambda: ew.refill(kw, w, names)))
    _run_checked(None, w, entries_checks(kw, w), "after the replays")
    return stats


def plan_replay(offsets, entries, w: ew.Workload, previous: ew.Workload):
    """The whole step, offsets planner then entries planner, as one CUDA graph: gated eagerly on
    ``w``, captured on ``previous``' request inputs, refilled with ``w``'s (rows, prefixes,
    extends, valid lengths: the offsets planner recomputes the scratch and the enable in the
    graph), replayed, checked. Raises Refused (the gate's text, or :data:`NO_CUDA_GATED`)."""
    off, ent = ew.fresh_plan_kw(w)

    def step(o=off, e=ent):
        offsets(**o)
        entries(**e)

    _run_checked(step, w, plan_checks(off, ent, w), "first call")
    if not can_replay(w.device):
        raise Refused(NO_CUDA_GATED)
    off, ent = ew.fresh_plan_kw(w, contents=previous)
    names = (ew.RPI, ew.PREFIX, ew.EXTEND, ec.VALID_LENS_NAME)
    merged = {**off, **ent}
    stats = _guarded(lambda: gt.graph_replay_time(
        lambda: step(off, ent), after_capture=lambda: ew.refill(merged, w, names, offsets=off)))
    _run_checked(None, w, plan_checks(off, ent, w), "after the replays")
    return stats


def _guarded(measure: Callable[[], object]):
    try:
        return measure()
    except Exception as exc:  # noqa: BLE001 - capture or replay failed: no figure
        raise Refused(f"not published: replay raised {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:200] if str(exc) else ''}")


UPSTREAM_PREFIX = "upstream-"
"""A whole-plan launcher spec ``upstream-NAME``: upstream's launcher NAME
(:data:`impls.canary_plan.upstream.LAUNCHERS`: ``wrapper``, ``reference``) behind the flat
keywords, imported from the sglang package on the path (a release laid out by
``python -m conformance upstream-entries ... --layout-only``)."""


def resolve_flat(spec: str) -> Callable[..., None]:
    """The whole-plan launcher of ``spec`` in the flat signature of ``docs/spec/canary-plan.md``
    section 3: a built-in pipeline (:data:`impls.canary_plan.PLANNERS`) or ``upstream-NAME``.

    Raises:
        Refused: ``not measured: ...`` when it cannot be imported or is unavailable here.
    """
    import importlib

    from impls import canary_plan
    from impls.canary_plan.upstream import LAUNCHERS, upstream_launchers

    try:
        if spec.startswith(UPSTREAM_PREFIX) and spec[len(UPSTREAM_PREFIX):] in LAUNCHERS:
            name = spec[len(UPSTREAM_PREFIX):]
            return upstream_launchers(importlib.import_module, (name,))[name]
        return canary_plan.get_planner(spec)
    except Exception as exc:  # noqa: BLE001 - the reason is the row's status
        raise _unavailable(spec, exc)


def flat_plan_kw(w: ew.Workload, contents: ew.Workload | None = None) -> tuple[dict, dict, dict]:
    """(the whole-plan launcher's 19 keywords, the offsets stage's, the entries stage's) of one
    step on new tensors (:func:`impls.entries_planner.harness.entries_workload.fresh_plan_kw`):
    each flat keyword is the very tensor of the stage keyword it feeds
    (:data:`impls.canary_plan.contract.TO_OFFSETS`, ``TO_ENTRIES``), so the stages' outputs are
    read where the launcher wrote; the scratch is the launcher's own (it allocates one per call)."""
    from impls.canary_plan import contract as cc

    off, ent = ew.fresh_plan_kw(w, contents)
    flat: dict = {}
    for stage_kw, mapping in ((off, cc.TO_OFFSETS), (ent, cc.TO_ENTRIES)):
        for stage_name, name in mapping.items():
            if name != cc.SCRATCH:
                flat.setdefault(name, stage_kw[stage_name])
    assert set(flat) == set(cc.ARGUMENT_NAMES), sorted(set(cc.ARGUMENT_NAMES) ^ set(flat))
    return flat, off, ent


def flat_reference(w: ew.Workload) -> dict:
    """The nine plan fields the Python pipeline (``python`` of :mod:`impls.canary_plan`: the
    wrapper's checks, ``write_offsets`` zeroed, both Python stages) writes on ``w``'s poisoned
    outputs, whole tensors; computed once per step."""
    from impls import canary_plan
    from impls.canary_plan import contract as cc

    if w.flat_reference is None:
        kw, _, _ = flat_plan_kw(w)
        canary_plan.get_planner("python")(**kw)
        w.flat_reference = {n: kw[n] for n in cc.OUTPUT_NAMES}
    return w.flat_reference


def flat_checks(kw: dict, w: ew.Workload) -> list:
    """The gate of a whole-plan call: every element of the nine plan fields against the Python
    pipeline's (:func:`flat_reference`); the four entry columns name the written region [0, T)
    and the tail."""
    from impls.canary_plan import contract as cc

    want = flat_reference(w)
    entries = [n for n in cc.OUTPUT_NAMES if n in cc.ENTRY_FIELDS]
    plan = [n for n in cc.OUTPUT_NAMES if n not in cc.ENTRY_FIELDS]
    return [(_outputs(kw, plan), {n: want[n] for n in plan}, None),
            (_outputs(kw, entries), {n: want[n] for n in entries}, w.total)]


def flat_eager(launch, w: ew.Workload):
    """Gate, time and re-check one whole-plan launcher's eager call on ``w``: host us per call
    (its checks, its scratch allocation, both stages' launches). Raises Refused."""
    kw, _, _ = flat_plan_kw(w)
    fn = lambda: launch(**kw)  # noqa: E731
    _run_checked(fn, w, flat_checks(kw, w), "first call")
    stats = eager_time(fn, w.device)
    _run_checked(None, w, flat_checks(kw, w), "after the timed calls")
    return stats


def flat_replay(launch, w: ew.Workload, previous: ew.Workload):
    """One whole-plan call per CUDA graph, as :func:`plan_replay` times two stages: gated eagerly
    on ``w``, captured on ``previous``' request inputs, refilled with ``w``'s, replayed, checked.
    Raises Refused (the gate's text, a capture that fails, or :data:`NO_CUDA_GATED`)."""
    first, _, _ = flat_plan_kw(w)
    _run_checked(lambda: launch(**first), w, flat_checks(first, w), "first call")
    if not can_replay(w.device):
        raise Refused(NO_CUDA_GATED)
    kw, off, ent = flat_plan_kw(w, contents=previous)
    names = (ew.RPI, ew.PREFIX, ew.EXTEND, ec.VALID_LENS_NAME)
    merged = {**off, **ent}
    stats = _guarded(lambda: gt.graph_replay_time(
        lambda: launch(**kw), after_capture=lambda: ew.refill(merged, w, names, offsets=off)))
    _run_checked(None, w, flat_checks(kw, w), "after the replays")
    return stats
