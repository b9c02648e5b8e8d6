"""The rows of the entries sweep (:mod:`impls.entries_planner.harness.entries`), one function per
kind, each figure measured only while the run's budget lasts (``deadline``, a
:func:`time.monotonic` value) and only after the correctness gate of
:mod:`impls.entries_planner.harness.entries_calls` passed.

A row is a dict: its ``kind`` (``floor``, ``gather``, ``eager``, ``replay``, ``plan``, ``flat``),
what it measured (planner, variant, bs, framework, shape...), then ``p50_us`` and ``iqr_us`` (us,
None when not measured), ``n`` (samples) and ``status``: ``published``, or why not (a refusal's
text, ``not published: ...`` when outputs differ, or :data:`BUDGET_SPENT`). Each row measured is
printed to stderr as it finishes.
"""

from __future__ import annotations

import sys
import time

BUDGET_SPENT = "not measured: --budget-s spent"


def _timed(row: dict, measure, deadline: float) -> dict:
    """Fill ``row``'s figures from ``measure()`` (a Stats), or its status from Refused."""
    from impls.entries_planner.harness.entries_calls import PUBLISHED, Refused

    row.update(p50_us=None, iqr_us=None, n=None)
    if time.monotonic() > deadline:
        row["status"] = BUDGET_SPENT
        return row
    t0 = time.monotonic()
    try:
        stats = measure()
        row.update(p50_us=stats.median, iqr_us=stats.iqr, n=stats.rounds, status=PUBLISHED)
    except Refused as exc:
        row["status"] = str(exc)
    what = " ".join(str(row.get(k)) for k in ("kind", "variant", "bs", "label", "framework",
                                              "shape") if row.get(k) is not None)
    print(f"  {what}: {row['p50_us'] and round(row['p50_us'], 2)} {row['status'][:90]} "
          f"({time.monotonic() - t0:.1f} s)", file=sys.stderr, flush=True)
    return row


def floor_rows(device, gpu: bool, deadline: float) -> list[dict]:
    """The empty-kernel floors of both frameworks, eager and (on a GPU) replay."""
    from conformance.bench import timing as gt
    from conformance.bench.floors import floor_call
    from impls.entries_planner.harness.entries_calls import NO_CUDA, Refused, eager_time

    rows = []
    for framework, name in (("triton", "empty-triton"), ("numba-cuda", "empty-numba")):
        eager_fn, capturable = floor_call(name, device)

        def replay(fn=capturable):
            if not gpu:
                raise Refused(NO_CUDA)
            return gt.graph_replay_time(fn)

        for mode, measure in (("eager", lambda f=eager_fn: eager_time(f, device)),
                              ("replay", replay)):
            rows.append(_timed({"kind": "floor", "floor": name, "framework": framework,
                                "mode": mode},
                               measure, deadline))
    return rows


def gather_rows(w, gpu: bool, deadline: float) -> list[dict]:
    """The gather floor of step ``w`` at each launch shape of both frameworks."""
    from conformance.bench import gather_floor as gf
    from conformance.bench import timing as gt
    from impls.entries_planner.harness.entries_calls import NO_CUDA, Refused

    g = gf.inputs(w.entries_kw["verify_offsets_scratch"], w.bs)
    rows = []
    for framework in gf.FRAMEWORKS:
        for shape in (gf.SHAPES if gpu else gf.CPU_SHAPES)[framework]:
            def measure(fn=gf.call(framework, shape, g)):
                for out in g.outputs:
                    out.zero_()
                stats = gt.graph_replay_time(fn) if gpu else fn()
                wrong = gf.wrong_output(g)
                if wrong:
                    raise Refused(f"not published: {wrong}")
                if not gpu:
                    raise Refused(f"{NO_CUDA} (ran once: outputs checked)")
                return stats

            rows.append(_timed({"kind": "gather", "framework": framework, "bs": w.bs,
                                "variant": w.variant, "total": g.n,
                                "shape": gf.shape_text(framework, shape)}, measure, deadline))
    return rows


def planner_rows(spec: str, label: str, w, previous, deadline: float) -> list[dict]:
    """The eager and replay rows of one entries planner on step ``w``."""
    from impls.entries_planner.harness import entries_calls as calls

    base = {"planner": spec, "label": label, "bs": w.bs, "variant": w.variant}
    try:
        launch = calls.resolve(spec, "entries")
    except calls.Refused as exc:
        return [dict(base, kind=k, p50_us=None, iqr_us=None, n=None, status=str(exc))
                for k in ("eager", "replay")]
    python = spec == "python"
    rows = [_timed(dict(base, kind="eager"), lambda: calls.eager(launch, w, python), deadline)]
    if not python:
        rows.append(_timed(dict(base, kind="replay"),
                           lambda: calls.replay(launch, w, previous), deadline))
    return rows


def plan_rows(pairs: list[tuple], w, previous, deadline: float) -> list[dict]:
    """One row per (offsets spec, its label, entries spec, its label, upstream offsets?)."""
    from impls.entries_planner.harness import entries_calls as calls

    rows = []
    for off_spec, off_label, ent_spec, ent_label, upstream in pairs:
        row = {"kind": "plan", "offsets": off_spec, "offsets_label": off_label,
               "entries": ent_spec, "entries_label": ent_label, "upstream_offsets": upstream,
               "bs": w.bs, "variant": w.variant}

        def measure(o=off_spec, e=ent_spec):
            offsets, entries = calls.resolve(o, "offsets"), calls.resolve(e, "entries")
            return calls.plan_replay(offsets, entries, w, previous)

        rows.append(_timed(row, measure, deadline))
    return rows


def flat_rows(specs: list[str], w, previous, deadline: float) -> list[dict]:
    """The eager and replay rows of each whole-plan launcher of ``specs`` on step ``w``."""
    from impls.entries_planner.harness import entries_calls as calls

    rows = []
    for spec in specs:
        label = "upstream's wrapper" if spec == "upstream-wrapper" else spec
        base = {"kind": "flat", "launcher": spec, "label": label, "bs": w.bs, "variant": w.variant,
                "upstream": spec.startswith(calls.UPSTREAM_PREFIX)}
        try:
            launch = calls.resolve_flat(spec)
        except calls.Refused as exc:
            rows += [dict(base, mode=m, p50_us=None, iqr_us=None, n=None, status=str(exc))
                     for m in ("eager", "replay")]
            continue
        rows.append(_timed(dict(base, mode="eager"), lambda: calls.flat_eager(launch, w), deadline))
        rows.append(_timed(dict(base, mode="replay"),
                           lambda: calls.flat_replay(launch, w, previous), deadline))
    return rows


def _plan_or_absent(pairs, w, previous, deadline) -> list[dict]:
    """Whole-step rows; the upstream-entries row without ``--upstream-entries`` says why not."""
    rows = plan_rows([p for p in pairs if p[2]], w, previous, deadline)
    for off_spec, off_label, _, ent_label, upstream in (p for p in pairs if not p[2]):
        rows.append({"kind": "plan", "offsets": off_spec, "offsets_label": off_label,
                     "entries": None, "entries_label": ent_label, "upstream_offsets": upstream,
                     "bs": w.bs, "variant": w.variant, "p50_us": None, "iqr_us": None, "n": None,
                     "status": "not measured: upstream's entries launcher not given "
                               "(--upstream-entries MODULE:CALLABLE)"})
    return rows
