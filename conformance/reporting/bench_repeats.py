"""Repeats of a benchmark run: the same figure measured N times in one invocation.

``python -m conformance bench --repeat N`` (pytest ``--bench-repeat N``) runs every benchmark N
times, the whole measurement once per repeat (repeat 1 of every benchmark, then repeat 2, ...).
Each repeat is a pytest-benchmark entry whose ``params`` hold :data:`REPEAT_PARAM` (1..N) and
whose name ends in ``-repeat<i>]``; a file written without repeats (every file before them) reads
as repeat 1 of 1. A **figure** is what the repeats share: the name without that suffix.

:func:`merge` folds the repeats of each figure into one entry: p50 the median of the repeats'
p50s, min the least min, q1 / q3 and every ratio the median of the repeats', and
``extra_info.repeat_p50_us`` the repeats' p50s (us, sorted): the spread printed beside the
median. A figure refused in any repeat is refused. Those two fields are :func:`merge`'s alone: an
entry of a file that carries them (hand-edited) has them dropped, so one run's entry cannot claim
the p50s of repeats it never ran.

:func:`checked` is what a file's entries must pass before :func:`merge` counts their repeats: one
entry per repeat of a figure, and no two repeats holding the same statistics (a run copied and
renumbered is one measurement, not several).

:func:`chance_apart` is the noise bound of a comparison by repeats: the chance that n repeats
of one side and m of the other, drawn from one distribution (no change), fall with every value of
one side beyond every value of the other.
"""

from __future__ import annotations

import json
import math
import re
from statistics import median

REPEAT_PARAM = "bench_repeat"
"""The ``params`` key (and pytest fixture) of a repeat's index, 1..N."""
RATIO_KEYS = ("ratio_to_floor", "ratio_to_chain", "ratio_to_python", "ratio_to_reference",
              "p50_us")
"""``extra_info`` fields (:func:`conformance.bench.summary_table.annotate`) taken as the median."""
_SUFFIX = re.compile(r"-repeat\d+\]$")


def repeat_of(bench: dict) -> int:
    """The repeat index of a benchmark entry (1 when it has none)."""
    value = (bench.get("params") or {}).get(REPEAT_PARAM)
    return value if isinstance(value, int) and value >= 1 else 1


def figure_key(bench: dict) -> str:
    """The figure a benchmark entry measures: its full name without the ``-repeat<i>`` suffix (an
    entry without a name is a figure of its own)."""
    name = bench.get("fullname") or bench.get("name")
    return _SUFFIX.sub("]", str(name)) if name else f"<unnamed {id(bench)}>"


def by_figure(benches: list[dict]) -> dict[str, list[dict]]:
    """The entries of each figure, in order of first appearance, each list by repeat index."""
    out: dict[str, list[dict]] = {}
    for b in benches:
        out.setdefault(figure_key(b), []).append(b)
    return {k: sorted(v, key=repeat_of) for k, v in out.items()}


def by_repeat(benches: list[dict]) -> list[list[dict]]:
    """The entries of each repeat (one list per repeat index, ascending)."""
    out: dict[int, list[dict]] = {}
    for b in benches:
        out.setdefault(repeat_of(b), []).append(b)
    return [out[k] for k in sorted(out)]


def repeats(benches: list[dict]) -> int:
    """The most repeats any figure has, or the highest repeat index of any entry when higher
    (an entry of repeat 3 says the run had 3, even where a figure's entries are spelled apart);
    1 for a file without repeats, 0 for none."""
    figures = by_figure(benches)
    if not figures:
        return 0
    return max(*(len(v) for v in figures.values()), *(repeat_of(b) for b in benches))


class RepeatsError(ValueError):
    """A figure with two entries of one repeat index: not the file of one run (:func:`checked`)."""


MERGED_KEYS = ("repeat_p50_us", "repeats")
"""``extra_info`` fields only :func:`merge` writes; dropped from the entries it reads."""


def checked(benches: list[dict]) -> list[dict]:
    """The entries of a file, ready for :func:`merge`: a figure's repeats that hold identical
    ``stats`` (the whole dict: median, quartiles, mean, stddev, rounds, ...) are refused: the later
    one's entry is replaced by a copy whose ``extra_info.refused`` names both repeats. A repeat is
    a fresh measurement: the repeats of GPU runs share a median at times (the event clock's
    resolution), never every statistic. Refused repeats (``extra_info.refused``; their statistics
    null or emptied) are not compared. The input is not changed.

    Raises:
        RepeatsError: a figure holds two entries of the same repeat index (pytest-benchmark writes
            one entry per test id, and each repeat is its own test id): one line naming the figure
            and the index.
    """
    out = list(benches)
    position = {id(b): i for i, b in enumerate(benches)}
    for key, members in by_figure(benches).items():
        indices = [repeat_of(b) for b in members]
        twice = sorted({i for i in indices if indices.count(i) > 1})
        if twice:
            raise RepeatsError(f"{key}: repeat {twice[0]} appears {indices.count(twice[0])} "
                               "times: the entries of one run hold each repeat once")
        seen: dict[str, int] = {}
        for b in members:
            stats = b.get("stats")
            if not isinstance(stats, dict) or (b.get("extra_info") or {}).get("refused"):
                continue  # a refused repeat is no figure: its statistics are not compared
            text = json.dumps(stats, sort_keys=True, default=repr)
            if text in seen:
                copy = dict(b, extra_info=dict(b.get("extra_info") or {}))
                copy["extra_info"]["refused"] = (
                    f"repeats {seen[text]} and {repeat_of(b)} hold identical statistics: one "
                    "measurement copied, not two repeats")
                out[position[id(b)]] = copy
                break
            seen[text] = repeat_of(b)
    return out


def _median(values: list) -> float | None:
    kept = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return float(median(kept)) if kept else None


def merge(benches: list[dict]) -> list[dict]:
    """One entry per figure (module docstring); a figure of one repeat is its entry, less the
    :data:`MERGED_KEYS` a file may have put in its ``extra_info``. The input is not changed.

    A figure with fewer entries than the run's most (:func:`repeats`) is refused: a repeat whose
    test errored (or was deselected) leaves no entry, and the others alone are no figure."""
    out = []
    expected = repeats(benches)
    for key, members in by_figure(benches).items():
        if len(members) < expected:
            short = dict(members[0], extra_info=dict(members[0].get("extra_info") or {}))
            short["extra_info"].setdefault(
                "refused", f"{len(members)} of {expected} repeats measured: a repeat left no "
                "figure (its test errored or did not run)")
            members = [short, *members[1:]]
        if len(members) == 1:
            out.append(dict(members[0], extra_info=_own(members[0])))
            continue
        refused = [b for b in members if (b.get("extra_info") or {}).get("refused")]
        first = refused[0] if refused else members[0]
        params = {k: v for k, v in (first.get("params") or {}).items() if k != REPEAT_PARAM}
        merged = dict(first, name=_SUFFIX.sub("]", str(first.get("name", key))), fullname=key,
                      params=params, extra_info=_own(first))
        merged["extra_info"]["repeats"] = len(members)
        if not refused:
            stats = [b["stats"] for b in members]
            merged["stats"] = dict(stats[0], median=median(s["median"] for s in stats),
                                   min=min(s["min"] for s in stats),
                                   q1=median(s["q1"] for s in stats),
                                   q3=median(s["q3"] for s in stats))
            extras = [b.get("extra_info") or {} for b in members]
            for name in RATIO_KEYS:
                if any(name in e for e in extras):
                    merged["extra_info"][name] = _median([e.get(name) for e in extras])
            merged["extra_info"]["repeat_p50_us"] = sorted(s["median"] * 1e6 for s in stats)
        out.append(merged)
    return out


def _own(bench: dict) -> dict:
    """A copy of the entry's ``extra_info`` without :data:`MERGED_KEYS`."""
    return {k: v for k, v in (bench.get("extra_info") or {}).items() if k not in MERGED_KEYS}


def spread_text(values: list[float], spec: str = ".2f") -> str:
    """``lo..hi`` of the repeats' values, ``-`` for none."""
    if not values:
        return "-"
    return f"{format(min(values), spec)}..{format(max(values), spec)}"


def chance_apart(n: int, m: int) -> float:
    """P(every one of n values beyond every one of m, either side) for n + m exchangeable values:
    ``2 n! m! / (n + m)!`` (1 when a side has no value). 3 repeats a side: 0.1; 5: 0.0079."""
    if n < 1 or m < 1:
        return 1.0
    return min(1.0, 2 / math.comb(n + m, n))


def judged_on(repeats: int) -> str:
    """The line above a goal table: how many repeats each goal was judged on."""
    if repeats > 1:
        return f"judged on the median of {repeats} repeats (their range beside it)."
    return ("judged on one run (noisy: python -m conformance bench --repeat 3 judges each goal on "
            "the median of three).")
