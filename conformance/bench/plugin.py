"""pytest side of the benchmark suite: options, opt-in collection, results under xdist, the table.

Registered from :mod:`conformance.plugin.hooks` (``pytest_plugins``).

* **Opt-in collection**: ``conformance/bench/`` is collected only when a command-line path names
  it (``pytest conformance/bench``, or a file / node id inside it) or with ``--bench``; so
  ``pytest`` and ``pytest conformance/`` never run benchmarks (the README's test stays fast).
* **Options**: ``--bench-bs 0,1,8`` (default :data:`DEFAULT_BS`), ``--bench-mode``,
  ``--bench-scenario``, ``--bench-workload`` (repeatable), ``--bench-rounds N``,
  ``--bench-table ROWSxCOLS``,
  ``--bench-report PATH`` (the table and fingerprint as Markdown), ``--bench-repeat N`` (the
  whole measurement N times: every benchmark gets a ``bench_repeat`` parameter 1..N, and the items
  run repeat by repeat; :mod:`conformance.reporting.bench_repeats`); planners come from
  ``--planner`` (default every built-in).
* **Goals in the JSON**: ``--benchmark-json`` gets ``conformance_goals``: ``repeats`` and one
  record per serving goal (:func:`conformance.bench.goals.records`), which the report prints.
* **Fingerprint**: pytest-benchmark's ``machine_info`` gets the run fingerprint
  (:func:`conformance.fingerprint.run_fingerprint`: GPU, driver, CUDA, torch, triton, numba, numpy,
  commit, each planner's mode) and the worker's GPU pinning.
* **Ratios**: ``--benchmark-json`` entries get ``extra_info`` ratio fields
  (:func:`conformance.bench.summary_table.annotate`).
* **Entries the harness vouches for**: before anything is written or shown, every entry gets back
  what the harness recorded of it, outside the planner's fixture, and a figure refused in one
  repeat is refused in all (:mod:`conformance.bench.provenance`,
  :func:`conformance.bench.refusal.spread`).
* **pytest-xdist**: pytest-benchmark disables itself under xdist. Here each worker (pinned to its
  own GPU by :mod:`conformance.plugin.gpu_pinning`) measures anyway, and sends every benchmark's
  ``as_dict()`` to the controller in ``report.user_properties``
  (:func:`conformance.bench.provenance.pytest_runtest_makereport`); the controller writes the one
  ``--benchmark-json`` file and prints the one table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.bench import clocks  # noqa: F401  (binds the clocks before any planner import)
from conformance.bench import output_paths, provenance

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_BS = (0, 1, 8, 64, 512, 1024, 4096)
"""Batch sizes: empty, decode-only, small, and up to PLAN_BS_BLOCK_SIZE."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance-bench", "benchmarks of the corpus subject's planners "
                                                 "(conformance/bench)")
    group.addoption("--bench", action="store_true",
                    help="also collect conformance/bench when the command line does not name it")
    group.addoption("--bench-bs", action="append", default=[], metavar="LIST",
                    help="batch sizes, comma-separated, repeatable (default "
                         f"{','.join(map(str, DEFAULT_BS))})")
    group.addoption("--bench-mode", action="append", default=[], metavar="MODE",
                    help="eager, validate, launch, replay (repeatable; default all)")
    group.addoption("--bench-scenario", action="append", default=[], metavar="NAME",
                    help="reused, fresh, varying-bs: how request tensors arrive (repeatable; "
                         "default all)")
    group.addoption("--bench-workload", action="append", default=[], metavar="NAME",
                    help="serving (default) or decode: how batch values are drawn (repeatable)")
    group.addoption("--bench-rounds", type=int, default=None, metavar="N",
                    help="rounds per benchmark (default 15 on the GPU, 3 on the CPU)")
    group.addoption("--bench-table", default=None, metavar="ROWSxCOLS",
                    help="req_to_token shape (default 4096x32768 on the GPU, 4096x256 on the CPU)")
    group.addoption("--bench-report", type=Path, default=None, metavar="PATH",
                    help="also write the table and fingerprint as Markdown to PATH")
    group.addoption("--bench-repeat", type=int, default=1, metavar="N",
                    help="run the whole measurement N times; goals are judged on the median of "
                         "the N repeats (default 1: goals on one run are noisy)")


GOALS_KEY = "conformance_goals"
"""Top-level key of the benchmark JSON holding ``repeats`` and the goal records."""


def repeat_count(config: pytest.Config) -> int:
    """``--bench-repeat`` (at least 1).

    Raises:
        pytest.UsageError: N < 1.
    """
    n = config.getoption("bench_repeat", 1) or 1
    if n < 1:
        raise pytest.UsageError(f"--bench-repeat {n}: must be at least 1")
    return n


@pytest.fixture
def bench_repeat() -> int:
    """The repeat index of a benchmark (1..N, parametrized under ``--bench-repeat N > 1``)."""
    return 1


def parametrize_repeats(metafunc: pytest.Metafunc) -> None:
    """With ``--bench-repeat N > 1``, run the test once per repeat (ids ``...-repeat<i>``)."""
    from conformance.reporting.bench_repeats import REPEAT_PARAM

    n = repeat_count(metafunc.config)
    if n > 1 and REPEAT_PARAM in metafunc.fixturenames:
        metafunc.parametrize(REPEAT_PARAM, range(1, n + 1), ids=lambda i: f"repeat{i}")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Repeat by repeat: every benchmark's repeat 1, then every repeat 2, ... (a stable sort), so
    that each repeat is a whole measurement and the spread shows drift between them."""
    from conformance.reporting.bench_repeats import REPEAT_PARAM

    if repeat_count(config) > 1:
        items.sort(key=lambda item: getattr(getattr(item, "callspec", None), "params", {})
                   .get(REPEAT_PARAM, 0))


def bs_list(config: pytest.Config) -> list[int]:
    """The ``--bench-bs`` values (default :data:`DEFAULT_BS`)."""
    values = [int(v) for arg in config.getoption("bench_bs") for v in arg.split(",") if v.strip()]
    return values or list(DEFAULT_BS)


def table_shape(config: pytest.Config) -> tuple[int, int] | None:
    """``--bench-table`` as (rows, cols), or None for the device default."""
    value = config.getoption("bench_table")
    if not value:
        return None
    rows, _, cols = value.lower().partition("x")
    return int(rows), int(cols)


def _named(config: pytest.Config) -> bool:
    base = Path(config.invocation_params.dir)
    for arg in config.args:
        path = (base / arg.split("::")[0]).resolve()
        if path == BENCH_DIR or BENCH_DIR in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config):
    path = Path(collection_path).resolve()
    if path != BENCH_DIR and BENCH_DIR not in path.parents:
        return None
    if config.getoption("bench") or _named(config):
        return None
    return True


def _session(config):
    return getattr(config, "_benchmarksession", None)


def pytest_sessionstart(session: pytest.Session) -> None:
    config, bs = session.config, _session(session.config)
    worker = hasattr(config, "workerinput")
    if bs is None or not (worker or config.getoption("dist", "no") != "no"):
        return
    opt = config.getoption
    if opt("benchmark_skip", False) or (opt("benchmark_disable", False)
                                        and not opt("benchmark_enable", False)):
        return  # the user's own choice, not xdist's
    bs.xdist_warning = False  # measured per worker on its own GPU, gathered by the controller
    if worker:
        bs.disabled = False
        bs.json, bs.save, bs.autosave = None, None, None  # only the controller writes


def _controller(config: pytest.Config) -> bool:
    """Whether this process is a pytest-xdist controller (its workers measure, it gathers)."""
    return not hasattr(config, "workerinput") and config.getoption("dist", "no") != "no"


class _Remote:
    """A worker's benchmark dict, shaped like pytest-benchmark's Metadata for its JSON hook."""

    has_error = False

    def __init__(self, doc: dict) -> None:
        self.doc = doc

    def as_dict(self, include_data: bool = True, **_) -> dict:
        doc = dict(self.doc, stats=dict(self.doc["stats"]))
        if not include_data:
            doc["stats"].pop("data", None)
        return doc


class BenchResults:
    """Gathers benchmark dicts (local, or from workers), writes the JSON under xdist, prints."""

    def __init__(self, config: pytest.Config) -> None:
        self.config, self.remote = config, []

    def pytest_runtest_logreport(self, report) -> None:
        """A pytest-xdist controller gathers each worker's entries (one per test:
        :func:`conformance.bench.provenance.sent_entries`); any other process measured its own
        and takes none from a report (a planner can put one in its item's ``user_properties``)."""
        if report.when == "call" and _controller(self.config):
            self.remote.extend(provenance.sent_entries(report))

    def benches(self) -> list[dict]:
        """Every benchmark of the run, as dicts without raw data, refusals spread over repeats."""
        from conformance.bench.refusal import spread

        if self.remote:
            return spread([_Remote(d).as_dict(include_data=False) for d in self.remote])
        bs = _session(self.config)
        return spread([b.as_dict(include_data=False) for b in (bs.benchmarks if bs else []) if b])

    def pytest_sessionfinish(self, session) -> None:
        bs = _session(self.config)
        if not self.remote or bs is None or not bs.json or hasattr(self.config, "workerinput"):
            return
        hook = self.config.hook
        commit = hook.pytest_benchmark_generate_commit_info(config=self.config)
        hook.pytest_benchmark_update_commit_info(config=self.config, commit_info=commit)
        doc = hook.pytest_benchmark_generate_json(
            config=self.config, benchmarks=[_Remote(d) for d in self.remote], include_data=True,
            machine_info=bs.get_machine_info(), commit_info=commit)
        hook.pytest_benchmark_update_json(config=self.config, benchmarks=[], output_json=doc)
        bs.save_json(doc)

    @pytest.hookimpl(trylast=True)  # after pytest-benchmark's own tables: the table ends the run
    def pytest_terminal_summary(self, terminalreporter) -> None:
        from conformance.bench import cross_check, goals
        from conformance.bench.summary_table import annotate, render

        benches = self.benches()
        if not benches or hasattr(self.config, "workerinput"):
            return
        table = render(annotate(benches))
        goal_table = goals.render(benches)  # refused entries too: a goal is never judged on the rest
        fp = fingerprint_line(self.config)
        terminalreporter.section("benchmark table (us per call; ratios in the same run)")
        terminalreporter.write_line(fp)
        for line in table.splitlines():
            terminalreporter.write_line(line)
        terminalreporter.section("serving goals (ratios in the same run)")
        for line in goal_table.splitlines():
            terminalreporter.write_line(line)
        check_table = cross_check.render(benches)
        terminalreporter.section("replay cross-check (a second timer, same calls)")
        for line in check_table.splitlines():
            terminalreporter.write_line(line)
        path = self.config.getoption("bench_report")
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Benchmark table\n\n{fp}\n\n## Serving goals\n\n{goal_table}\n\n"
                            "## Every benchmark (us per call; ratios in the same run)\n\n"
                            f"{table}\n\n## Replay cross-check\n\n{cross_check.DOC_LINE}\n\n"
                            f"{check_table}\n")


def fingerprint_line(config) -> str:
    """The run's machine fingerprint as one ``key=value`` line."""
    info = machine_fingerprint(config)
    return ", ".join(f"{k}={v}" for k, v in info.items() if not isinstance(v, dict))


_FP: dict | None = None


def machine_fingerprint(config) -> dict:
    """:func:`conformance.fingerprint.run_fingerprint` of the selected planners, plus the pinning."""
    global _FP
    if _FP is None:
        from conformance.plugin import gpu_pinning
        from conformance.fingerprint import run_fingerprint
        from conformance.corpus.corpus_subject import registry as _registry
        chosen_planners = _registry.chosen_planners

        _FP = run_fingerprint(chosen_planners(config.getoption("planner")), _registry.availability,
                              _registry.source_digest)
        _FP["gpu_pinning"] = gpu_pinning.PINNED or "none"
    return _FP


@pytest.hookimpl(optionalhook=True)  # pytest-benchmark's hooks: absent without it
def pytest_benchmark_update_machine_info(config, machine_info: dict) -> None:
    machine_info.update(machine_fingerprint(config))


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_json(config, benchmarks, output_json: dict) -> None:
    from conformance.bench import goals
    from conformance.bench.refusal import scrub, spread
    from conformance.bench.summary_table import annotate

    benches = annotate(scrub(spread(output_json["benchmarks"])))
    output_json[GOALS_KEY] = {"repeats": repeat_count(config),
                              "goals": goals.records(benches)}


@pytest.hookimpl(hookwrapper=True, optionalhook=True)
def pytest_benchmark_group_stats(config, benchmarks, group_by):
    """pytest-benchmark's own per-group tables: without refused figures."""
    from conformance.bench.refusal import published

    outcome = yield
    groups = [(name, published(list(members))) for name, members in outcome.get_result()]
    outcome.force_result([(name, members) for name, members in groups if members])


def pytest_configure(config: pytest.Config) -> None:
    """Register the results gatherer and the provenance record, once the output paths are checked
    (:func:`conformance.bench.output_paths.check`: raises ``pytest.UsageError``)."""
    output_paths.check(config)
    config.pluginmanager.register(BenchResults(config), "conformance-bench-results")
    if not config.pluginmanager.is_registered(provenance):
        config.pluginmanager.register(provenance, "conformance-bench-provenance")
