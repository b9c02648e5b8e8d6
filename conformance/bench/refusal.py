"""A benchmark's figure refused, with the reason, wherever figures are shown.

:func:`loop_refusal` runs after a benchmark's timed loop and names the first failed check, in this
order: a watched clock or statistics function replaced, seen when the planner was resolved (before
its first call) or after the loop (:func:`conformance.bench.clocks.tampered`),
outputs judged wrong between rounds (:class:`conformance.bench.rejudge.RoundJudge`), the rounds
against pytest-benchmark's statistics and the loop's wall clock
(:func:`conformance.bench.clocks.loop_mismatch`). A refused benchmark keeps its entry, with
``extra_info.refused`` (:data:`~conformance.reporting.bench_figures.REFUSED`) set to the reason
and every statistic ``None`` in the JSON (:func:`scrub`); the terminal table prints
``refused: <reason>`` in its p50 cell, ratios and goals leave it out (:func:`published`),
pytest-benchmark's own tables drop it, and its test fails.

A figure is its N repeats (``--bench-repeat N``, :mod:`conformance.reporting.bench_repeats`): a
planner caught in one repeat is caught, so :func:`spread` refuses every repeat of a figure refused
in one, and every repeat of a figure that lacks one (its test errored), before the JSON is written:
no entry of it keeps statistics or ratios for the goals (:func:`conformance.bench.goals.records`
reads entries, not merged figures) or a reader to judge it on.
"""

from __future__ import annotations

import sys

from conformance.bench import clocks
from conformance.reporting.bench_figures import REFUSED
from conformance.reporting.bench_repeats import by_figure, repeat_of, repeats

_STATS_KEPT = ("rounds", "iterations")
_TAMPERED, _LOOP_MISMATCH = clocks.tampered, clocks.loop_mismatch  # as bound before any planner


def tampered_reason(when: str) -> str | None:
    """``timer tampered: NAMES replaced WHEN`` when a watched name is rebound now, else None."""
    changed = _TAMPERED()
    return f"timer tampered: {', '.join(changed)} replaced {when}" if changed else None


def loop_refusal(benchmark, clock: clocks.RoundClock, judge, iterations: int, wall_ns: int,
                 host_timed: bool, resolved: str | None = None) -> str | None:
    """Why the figure just measured by ``benchmark`` (a pytest-benchmark fixture) cannot be
    published, or None. ``judge``: the loop's :class:`~conformance.bench.rejudge.RoundJudge`, or
    None (floors); ``resolved``: :func:`tampered_reason` taken when the planner was resolved."""
    reason = resolved or tampered_reason("after the bench bound it")
    if reason:
        return reason
    if judge is not None and judge.failure:
        return judge.failure
    if not clock.values or benchmark.stats is None:  # --benchmark-disable: nothing was timed
        return None
    return _LOOP_MISMATCH(clock, list(benchmark.stats.stats.data), iterations, wall_ns,
                          host_timed)


def refused(bench: dict) -> str | None:
    """The refusal reason of a benchmark dict (``as_dict()`` / a JSON entry), or None."""
    return (bench.get("extra_info") or {}).get(REFUSED)


def published(benches: list[dict]) -> list[dict]:
    """The benchmark dicts whose figure is not refused."""
    return [b for b in benches if not refused(b)]


REFUSED_IN = "refused_in_repeat"
"""``extra_info`` key of an entry refused by :func:`spread`: the repeat (1..N) whose refusal it
carries (absent on the entry refused itself)."""


def _extra(bench) -> dict:
    """The ``extra_info`` dict of a benchmark dict or of pytest-benchmark's ``Metadata``."""
    if isinstance(bench, dict):
        if not isinstance(bench.get("extra_info"), dict):
            bench["extra_info"] = {}
        return bench["extra_info"]
    return bench.extra_info


def spread(benches: list) -> list:
    """In place: every entry of a figure refused in one repeat refused with that repeat's reason
    (the first refused repeat's; :data:`REFUSED_IN` names it), and every entry of a figure with
    fewer repeats than the run's most refused as ``K of N repeats measured: ...`` (the text of
    :func:`conformance.reporting.bench_repeats.merge`). ``benches``: benchmark dicts or
    pytest-benchmark ``Metadata`` objects (read with ``.get``). Returns ``benches``."""
    expected = repeats(benches)
    for members in by_figure(benches).values():
        first = next((b for b in members if refused(b)), None)
        if first is not None:
            reason, where = refused(first), repeat_of(first)
        elif len(members) < expected:
            reason, where = (f"{len(members)} of {expected} repeats measured: a repeat left no "
                             "figure (its test errored or did not run)"), None
        else:
            continue
        for b in members:
            extra = _extra(b)
            if not extra.get(REFUSED):
                extra[REFUSED] = reason
                if where is not None:
                    extra[REFUSED_IN] = where
    return benches


def scrub(benches: list[dict]) -> list[dict]:
    """In place: every refused entry's statistics set to None (rounds and iterations kept), its
    raw data dropped. Returns ``benches``."""
    for b in benches:
        if refused(b) and isinstance(b.get("stats"), dict):
            b["stats"] = {k: (v if k in _STATS_KEPT else None) for k, v in b["stats"].items()
                          if k != "data"}
    return benches


clocks.watch(sys.modules[__name__], "loop_refusal", "tampered_reason", "refused", "published",
             "scrub", "spread", "_extra")
