"""The goal records of a benchmark JSON file (``conformance_goals``), read and checked.

The suite writes them (:func:`conformance.bench.goals.records`, from
:mod:`conformance.bench.plugin`): one record per serving goal, :data:`GOAL_FIELDS`. The report
prints them, but a file is untrusted (hand-edited, or written by another tool), so every record is
checked against itself and against the file before it is shown:

* every number is finite (JSON as Python reads it accepts ``NaN`` and ``Infinity``);
* a measured record (a ``median``) has ``low <= median <= high`` and ``1 <= repeats``, never more
  repeats than the file holds (:func:`conformance.reporting.bench_repeats.repeats`: the most
  entries any figure has); an unmeasured one has none of them;
* its verdict agrees with its median and target, re-judged by the suite's own rule
  (:func:`verdict_for`: ``met`` when the median is at most the target, else
  ``missed by <median / target>x (...)``): a ``met`` beside a median over its target, a ``met``
  without a median, a ``missed`` within the target or a miss factor that is not median / target
  (to the two decimals it is written with) is refused.

Any other verdict (``not judged: ...``, ``not measured in this run``) is a record without a median
and is printed as it is.
"""

from __future__ import annotations

import math
import re

from conformance.reporting import bench_repeats

GOALS_KEY = "conformance_goals"
"""Top-level key of the goal records in a benchmark JSON (:mod:`conformance.bench.plugin`)."""
GOAL_FIELDS = {"goal": str, "target": str, "verdict": str, "where": (str, type(None)),
               "median": (int, float, type(None)), "low": (int, float, type(None)),
               "high": (int, float, type(None)), "repeats": (int, type(None)),
               "planners": (list, type(None))}
"""Each field of a goal record and the JSON types it may hold (a bool is none of them);
``planners`` (a list of names) is absent from files written before the suite recorded it."""
TARGET = re.compile(r"<=\s*(\d+(?:\.\d+)?)\s*(us|x)")
"""A goal's target as the suite writes it: ``<= 20 us`` (microseconds) or ``<= 1.3x`` (a ratio)."""
MISSED = re.compile(r"missed by (\d+(?:\.\d+)?)x\b")
"""A miss as the suite writes it: ``missed by 1.13x (where)``, the factor median / target."""
MET = "met"


class GoalRecordError(ValueError):
    """A goal record of another shape, or that contradicts itself or its file: one line saying
    which field and how (:func:`goal_records` adds the file and the record's index)."""


def target_limit(target: str) -> float:
    """The bound of a target text (``<= 20 us`` -> 20.0, ``<= 1.3x`` -> 1.3).

    Raises:
        GoalRecordError: not ``<= N us`` nor ``<= Nx``.
    """
    found = TARGET.fullmatch(target.strip())
    if not found:
        raise GoalRecordError(f"target {target!r} is not '<= N us' nor '<= Nx'")
    return float(found.group(1))


def check_record(record: dict, file_repeats: int) -> None:
    """Check one record of :data:`GOAL_FIELDS` types (module docstring).

    Raises:
        GoalRecordError: a number not finite, a median outside ``low..high``, repeats below 1 or
            above ``file_repeats``, or a verdict its median and target contradict.
    """
    numbers = ("median", "low", "high")
    odd = [k for k in numbers if record[k] is not None and not math.isfinite(record[k])]
    if odd:
        raise GoalRecordError(f"field(s) {', '.join(odd)} not finite")
    median, verdict = record["median"], record["verdict"]
    if median is None:
        given = [k for k in ("low", "high", "repeats") if record[k] is not None]
        if given:
            raise GoalRecordError(f"field(s) {', '.join(given)} given without a median")
        if verdict == MET or MISSED.match(verdict):
            raise GoalRecordError(f"verdict {verdict!r} without a median")
        return
    if record["low"] is None or record["high"] is None or record["repeats"] is None:
        raise GoalRecordError("a median without its low, high and repeats")
    if not record["low"] <= median <= record["high"]:
        raise GoalRecordError(f"median {median!r} outside low..high "
                              f"({record['low']!r}..{record['high']!r})")
    if not 1 <= record["repeats"] <= file_repeats:
        raise GoalRecordError(f"repeats {record['repeats']} but the file holds "
                              f"{file_repeats} repeat(s) of its figures")
    _check_verdict(median, target_limit(record["target"]), verdict, record["target"])


def verdict_for(median: float, limit: float, where: str) -> str:
    """The suite's verdict of a goal whose worst median (over repeats) is ``median`` against the
    bound ``limit`` of its target: ``met`` when at most the bound, else ``missed by
    <median / limit>x (where)``. Written here, once: the suite judges with it
    (:func:`conformance.bench.goals.records`) and the report re-judges a file's records with it."""
    return MET if median <= limit else f"missed by {median / limit:.2f}x ({where})"


def _check_verdict(median: float, limit: float, verdict: str, target: str) -> None:
    missed = MISSED.match(verdict)
    due_met = verdict_for(median, limit, "") == MET
    if verdict == MET and not due_met:
        raise GoalRecordError(f"verdict 'met' but median {median:.4g} is over target {target!r}")
    if missed and due_met:
        raise GoalRecordError(f"verdict {verdict!r} but median {median:.4g} is within target "
                              f"{target!r}")
    if missed and abs(float(missed.group(1)) - median / limit) > 0.005 + 1e-9:
        raise GoalRecordError(f"verdict {verdict!r} but median / target is "
                              f"{median / limit:.2f}x")
    if verdict != MET and not missed:
        raise GoalRecordError(f"verdict {verdict!r} beside a median: neither 'met' nor "
                              "'missed by ...'")


def goal_records(path, doc: dict) -> list[dict] | None:
    """The goal records of a benchmark JSON document (``{"benchmarks": [...], GOALS_KEY:
    {"goals": [records]}}``), each checked (:func:`check_record`); None for a file without them
    (written before the suite recorded its goals).

    Raises:
        GoalRecordError: ``conformance_goals`` that is not ``{"goals": [records]}`` of
            :data:`GOAL_FIELDS`, or a record :func:`check_record` refuses (one line naming the
            file, the record's index and what is wrong).
    """
    section = doc.get(GOALS_KEY)
    if section is None:
        return None
    records = section.get("goals") if isinstance(section, dict) else None
    if not isinstance(records, list):
        raise GoalRecordError(f"{path}: {GOALS_KEY} is not {{\"goals\": [...]}}")
    file_repeats = bench_repeats.repeats(doc["benchmarks"])
    for i, r in enumerate(records):
        bad = [k for k, kind in GOAL_FIELDS.items()
               if not isinstance(r, dict) or not isinstance(r.get(k), kind)
               or isinstance(r.get(k), bool)]
        if not bad and r.get("planners") is not None and not all(
                isinstance(name, str) for name in r["planners"]):
            bad = ["planners"]
        if bad:
            raise GoalRecordError(f"{path}: {GOALS_KEY} record {i}: field(s) {', '.join(bad)} "
                                  "missing or of the wrong type")
        try:
            check_record(r, file_repeats)
        except GoalRecordError as exc:
            raise GoalRecordError(f"{path}: {GOALS_KEY} record {i} ({r['goal']!r}): {exc}: "
                                  "refused, never shown as the file says") from exc
    return [{k: r[k] for k in GOAL_FIELDS if k in r} for r in records]


def goal_cell(record: dict) -> str:
    """A goal's "worst measured" cell: its median, the range over the repeats beside it when
    there were several, and where; ``-`` when not measured."""
    if record["median"] is None:
        return "-"
    spread = "" if (record["repeats"] or 1) < 2 or record["low"] is None else \
        f" ({record['low']:.3g}..{record['high']:.3g} over {record['repeats']} repeats)"
    return f"{record['median']:.3g}{spread} ({record['where']})"
