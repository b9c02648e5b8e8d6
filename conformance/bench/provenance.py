"""What the harness itself knows of each benchmark entry, held outside the planner's fixture.

A pytest-benchmark entry is its fixture's state: ``params`` (the very dict of the test's
``callspec``), ``name``, ``fullname``, ``extra_info`` and the statistics. The planner runs in the
same process (pytest's) and can rewrite them on its own fixture (``gc``) at any time before the
JSON is written: call itself ``triton`` in ``gpu`` mode, say, so that the serving goals
(:mod:`conformance.bench.goals`) judge its figure as a GPU planner's. So the harness keeps its own
record, in this module:

* at collection (before any test runs, so before any planner is resolved): each benchmark test's
  node id, name and parameters (a copy), and the ``extra_info`` fields they decide
  (:func:`expected_extra`: ``planner_mode`` from the planner registry's ``availability``,
  ``scenario``, ``workload``, ``floor``, ``chain``);
* when its timed loop passed the checks (:func:`measured`): the statistics' per-call data;
* when its test's call phase ends (:func:`pytest_runtest_makereport`): which fixture object
  measured it (by identity, which no rewrite changes), the refusal its test set, whether it failed.

:func:`vouch` puts the record back on an entry (params, name, fullname, those fields, the refusal
its test set) and refuses one that differed from it (``entry rewritten during the run: ...``: a
refusal deleted or reworded too), whose statistics changed after the loop, or whose test failed
(``its test failed: ...``). It runs at session end on every entry before pytest-benchmark writes or shows anything
(:func:`pytest_sessionfinish`, which also refuses every entry when a watched name is rebound by
then: a rebinding after the last loop's check), and in a pytest-xdist worker on each entry as it is
sent (``report.user_properties``, key :data:`ENTRY_PROP`): the one entry a report carries to the
controller (:func:`sent_entries`); one the planner put there is dropped and refuses its test's
figure (:data:`ADDED`). What it does not see: a planner that
rewrites this module's records on the heap (README "Benchmarks").
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.bench import clocks
from conformance.bench.refusal import spread, tampered_reason
from conformance.reporting.bench_figures import REFUSED

ENTRY_PROP = "benchmark_json"
"""``report.user_properties`` key of a worker's benchmark entry (``Metadata.as_dict()``)."""
_BENCH_DIR = Path(__file__).resolve().parent
_TRUTH: dict[str, dict] = {}
"""node id -> {"name", "params", "extra"}: recorded at collection."""
_FIXTURES: dict[int, tuple[object, str]] = {}
"""id(fixture) -> (fixture, node id): recorded when the test's call phase ends."""
_OUTCOME: dict[str, dict] = {}
"""node id -> {"refused": reason or None, "failed": message or None}."""
_DATA: dict[int, tuple] = {}
"""id(fixture) -> the per-call seconds pytest-benchmark stored, once the loop passed its checks."""
_VOUCHED: dict[int, str | None] = {}
"""id(fixture) -> the refusal :func:`vouch` set (so that vouching twice changes nothing)."""


def expected_extra(test: str, params: dict, modes: dict[str, str]) -> dict:
    """The ``extra_info`` fields test function ``test`` sets from its ``params`` (None: absent);
    ``modes`` caches each planner's mode (the registry's ``availability(planner).mode``)."""
    if test == "test_plan":
        planner = params.get("planner")
        if planner not in modes:
            from conformance.corpus.corpus_subject import registry

            modes[planner] = registry.availability(planner).mode
        return {"planner_mode": modes[planner], "scenario": params.get("scenario"),
                "workload": params.get("workload"), "floor": None, "chain": None}
    if test == "test_floor":
        return {"floor": params.get("floor"), "chain": None, "planner_mode": None}
    if test == "test_chain_floor":
        return {"floor": params.get("chain"), "chain": True, "workload": params.get("workload"),
                "planner_mode": None}
    return {}


def _is_bench(item) -> bool:
    path = Path(str(getattr(item, "path", getattr(item, "fspath", "")))).resolve()
    return _BENCH_DIR in path.parents and "benchmark" in getattr(item, "fixturenames", ())


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    modes: dict[str, str] = {}
    for item in items:
        if _is_bench(item):
            params = dict(getattr(getattr(item, "callspec", None), "params", None) or {})
            _TRUTH[item.nodeid] = {"name": item.name, "params": params, "extra": expected_extra(
                getattr(item, "originalname", item.name), params, modes)}


def measured(fixture, data) -> None:
    """Record the per-call seconds ``fixture`` (a pytest-benchmark fixture) stored, once the
    bench checked its rounds (:func:`conformance.bench.refusal.loop_refusal` found nothing)."""
    _DATA[id(fixture)] = tuple(data)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """Which fixture measures the test, recorded before its body runs: a test interrupted
    mid-loop (a ``KeyboardInterrupt`` from the planner) never reaches its report, and its entry
    would otherwise be no test's."""
    fixture = getattr(item, "funcargs", {}).get("benchmark")
    if fixture is not None and item.nodeid in _TRUTH:
        _FIXTURES[id(fixture)] = (fixture, item.nodeid)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when != "call" or item.nodeid not in _TRUTH:
        return
    report = outcome.get_result()
    fixture = getattr(item, "funcargs", {}).get("benchmark")
    if fixture is None:
        return
    _FIXTURES[id(fixture)] = (fixture, item.nodeid)
    failed = None
    if report.failed:
        from conformance.bench.rejudge import plain_text

        text = call.excinfo.exconly() if call.excinfo is not None else "failed"
        failed = plain_text((text.strip().splitlines() or ["failed"])[0])
    planted = any(_is_entry(p) for p in report.user_properties)
    if planted:  # the planner's: nothing else runs code between the call and this hook
        report.user_properties[:] = [p for p in report.user_properties if not _is_entry(p)]
    _OUTCOME[item.nodeid] = {"refused": (getattr(fixture, "extra_info", None) or {}).get(REFUSED),
                             "failed": failed, "added": planted}
    stats = getattr(fixture, "stats", None)
    if hasattr(item.config, "workerinput") and stats and not fixture.has_error:
        vouch(stats, tampered_reason("before the entry was sent"))
        report.user_properties.append((ENTRY_PROP, stats.as_dict(include_data=True)))


def _is_entry(prop) -> bool:
    return isinstance(prop, tuple) and len(prop) == 2 and prop[0] == ENTRY_PROP


ADDED = "benchmark entries added to its test's report: the harness sends one, its own"


def sent_entries(report) -> list[dict]:
    """The benchmark entries a pytest-xdist controller takes from a worker's ``report`` of a
    test's call phase (``report.user_properties``, key :data:`ENTRY_PROP`): the one entry the
    worker's :func:`pytest_runtest_makereport` sent, of that very test (``fullname`` its node id).
    A report that carries another (a planner reaches any item's ``user_properties`` in its
    worker, and one a thread of its adds after the worker's check reaches the controller) has
    its test's entry refused (:data:`ADDED`) and the others dropped; a test that failed has its
    entry refused; a skipped one sends none. Returns [] or one dict."""
    entries = [p[1] for p in report.user_properties if _is_entry(p)]
    own = [e for e in entries if isinstance(e, dict) and e.get("fullname") == report.nodeid
           and isinstance(e.get("stats"), dict)]
    if report.skipped or not own:
        return []
    entry = own[-1]
    if not isinstance(entry.get("extra_info"), dict):
        entry["extra_info"] = {}
    extra = entry["extra_info"]
    if len(entries) > 1:
        extra[REFUSED] = ADDED
    elif report.failed and not extra.get(REFUSED):
        extra[REFUSED] = "its test failed"
    return [entry]


def vouch(meta, late: str | None = None) -> None:
    """In place on ``meta`` (pytest-benchmark's ``Metadata`` of one benchmark: ``fixture``,
    ``params``, ``name``, ``fullname``, ``extra_info``, ``stats``): the record put back and the
    refusal set from the harness's records alone, first reason first: the entry rewritten (its
    refusal text too), the refusal its test set, statistics never checked or changed since, its
    test failed, an entry put in its test's report besides the harness's (:data:`ADDED`), then
    ``late`` (a tampering seen now). An entry of no benchmark test the harness
    collected is left as it is."""
    fixture = getattr(meta, "fixture", None)
    node = _FIXTURES.get(id(fixture), (None, None))[1]
    truth = _TRUTH.get(node) if node else None
    if truth is None:
        if _TRUTH and _claims_harness(meta, {n.split("::")[0] for n in _TRUTH}):
            if not isinstance(meta.extra_info, dict):
                meta.extra_info = {}
            meta.extra_info[REFUSED] = ("not measured by a benchmark test the harness ran: an "
                                        "entry added to the run")
        return
    changed = []
    if not isinstance(meta.extra_info, dict):
        meta.extra_info, changed = {}, ["extra_info"]
    extra, outcome = meta.extra_info, _OUTCOME.get(node, {})
    if meta.params != truth["params"]:
        changed.append("params")
    if (meta.name, meta.fullname) != (truth["name"], node):
        changed.append("name")
    for key, value in truth["extra"].items():
        if extra.get(key) != value:
            changed.append(f"extra_info.{key}")
        if value is None:
            extra.pop(key, None)
        else:
            extra[key] = value
    if extra.get(REFUSED) not in (outcome.get("refused"), _VOUCHED.get(id(fixture))):
        changed.append("extra_info.refused")
    meta.params, meta.name, meta.fullname = dict(truth["params"]), truth["name"], node
    data = _DATA.get(id(fixture))
    stored = tuple(getattr(getattr(meta, "stats", None), "data", None) or ())
    reasons = (changed and f"entry rewritten during the run: {', '.join(changed)} no longer "
                           "what the harness recorded",
               outcome.get("refused"),
               data is None and "its rounds were never checked by the bench",
               data is not None and (stored != data or _stats_text(meta.stats)
                                     != _stats_text(_fresh_stats(data)))
               and "statistics rewritten after the bench checked its rounds",
               outcome.get("failed") and f"its test failed: {outcome['failed']}",
               outcome.get("added") and ADDED, late)
    reason = next((r for r in reasons if r), None)
    _VOUCHED[id(fixture)] = reason
    if reason:
        extra[REFUSED] = reason
    else:
        extra.pop(REFUSED, None)


def _claims_harness(meta, files: set[str]) -> bool:
    """An entry that reads as one of the harness's: its test file's, or the parameters its
    figures are read by (planner, floor, chain)."""
    params = meta.params if isinstance(meta.params, dict) else {}
    return (str(getattr(meta, "fullname", "")).split("::")[0] in files
            or any(k in params for k in ("planner", "floor", "chain")))


def _fresh_stats(data):
    """pytest-benchmark's statistics computed anew from per-call ``data``."""
    from pytest_benchmark.stats import Stats

    fresh = Stats()
    for value in data:
        fresh.update(value)
    return fresh


def _stats_text(stats) -> str:
    """Every statistic of a pytest-benchmark ``Stats`` as text (NaN equal to itself): a cached
    statistic overwritten on the heap differs from one computed from the data."""
    return repr(sorted(stats.as_dict().items()))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # before pytest-benchmark's own (JSON, tables)
def pytest_sessionfinish(session):
    bs = getattr(session.config, "_benchmarksession", None)
    worker = hasattr(session.config, "workerinput")  # its entries were vouched as they were sent
    if bs is not None and bs.benchmarks and not worker:
        late = tampered_reason("by the end of the run")
        for meta in bs.benchmarks:
            vouch(meta, late)
        spread(bs.benchmarks)
    yield


clocks.watch(sys.modules[__name__], "vouch", "measured", "expected_extra", "pytest_sessionfinish",
             "pytest_runtest_makereport", "pytest_runtest_call", "_claims_harness", "_fresh_stats",
             "_stats_text", "_is_entry", "sent_entries", "_TRUTH", "_FIXTURES", "_OUTCOME",
             "_DATA", "_VOUCHED")
