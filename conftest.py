"""Root conftest: loads the conformance plugin, so that ``pytest conformance/`` (and its options
``--planner``, ``--case``, ``--cases``) work from the repository root; and shapes the project's own
test run (``pytest`` with no path, so ``testpaths``: README's test command and ``pytest -m slow``).

An install (``pip install -e .`` or the wheel) loads the same plugin first, through its ``pytest11``
entry point named ``conformance.plugin.hooks``; pytest then finds this entry already loaded and
registers nothing twice. This line keeps a checkout without an install (``PYTHONPATH=.``, or
``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``) working.
"""

import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["conformance.plugin.hooks"]

SLOW_MODES = ("simulator", "interpreter")
"""Modes of a GPU planner on a machine without a GPU (impls/offsets_planner/registry.py): Numba's CUDA simulator
and Triton's interpreter, which run the kernel in Python."""

MAX_WORKERS = 4
"""pytest-xdist workers of the project's run at most: one per CPU up to this (each imports torch,
Triton and Numba; the largest test file bounds the run beyond it)."""


def _project_run(config: pytest.Config) -> bool:
    return config.args_source == pytest.Config.ArgsSource.TESTPATHS


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The project's run goes on one pytest-xdist worker per CPU (:data:`MAX_WORKERS` at most),
    a test file to a worker (``--dist loadfile``: a module's shared runs stay in one process). Most
    of its time is spent waiting on the ``pytest conformance/`` runs its tests start, one core
    each. ``-n N`` (``-n 0``: none) decides instead; a path given (``pytest conformance/``, a
    user's corpus run) never gets workers from here.

    Runs ahead of pytest-xdist's own hook (both ``tryfirst``; a conftest's is called first), which
    turns ``numprocesses`` into its workers. A worker (``workerinput``) starts none."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (not _project_run(config) or hasattr(config, "workerinput")
            or not config.pluginmanager.hasplugin("xdist") or (cpus or 1) < 2
            or config.getoption("numprocesses", None) is not None
            or config.getoption("collectonly")):
        return
    config.option.numprocesses = min(cpus, MAX_WORKERS)
    config.option.dist = "loadfile"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The project's run marks the corpus on the ``-bound`` planners ``slow`` where they run on a
    CPU stand-in (:data:`SLOW_MODES`): the same kernels as ``triton`` / ``numba-cuda``, whose corpus
    stays in the default run, behind another launcher (about a minute on 2 cores under the
    simulator). ``pytest -m slow`` runs them; ``pytest conformance/`` (a path given) and a machine
    with a GPU run them as always.

    Runs before ``-m`` deselects: pytest calls a conftest's hook ahead of its own mark plugin's
    (registered first; pluggy calls the last registered first)."""
    if not _project_run(config):
        return
    for item in items:
        avail = getattr(item, "avail", None)  # a corpus item (conformance/plugin/corpus_items.py)
        if str(getattr(item, "planner", "")).endswith("-bound") and avail is not None \
                and avail.mode in SLOW_MODES:
            item.add_marker(pytest.mark.slow)


CHECKOUT_LOCK = Path(tempfile.gettempdir()) / (
    "planner-conformance-checkout-"
    f"{hashlib.sha256(bytes(Path(__file__).resolve().parent)).hexdigest()[:16]}.lock")
LOCK_HELD = "CONFORMANCE_CHECKOUT_LOCK_HELD"
"""Set while a test holds :data:`CHECKOUT_LOCK`: the pytest runs it starts (children, same
checkout) take no lock of their own, which would wait forever on their parent's."""


@contextlib.contextmanager
def _checkout_lock(exclusive: bool):
    """Hold :data:`CHECKOUT_LOCK` (alone when ``exclusive``), unless this process's parent test
    holds it already (:data:`LOCK_HELD`)."""
    if os.environ.get(LOCK_HELD):
        yield
        return
    with open(CHECKOUT_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        os.environ[LOCK_HELD] = "1"
        try:
            yield
        finally:
            del os.environ[LOCK_HELD]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Every test holds a shared lock on this checkout through its whole protocol (the setup and
    teardown of the module- and session-scoped fixtures it is the first or last to use included:
    tests/test_bench_hacks.py's bench runs are such fixtures); a test that asks for the
    ``no_plant`` fixture (tests/test_subject_move_attacks.py: a planner may plant a second corpus
    subject under ``impls/`` there) holds it alone, so that no test of another worker discovers
    the plant meanwhile (subject discovery reads ``impls/*/subject.py``)."""
    with _checkout_lock("no_plant" in getattr(item, "fixturenames", ())):  # corpus items have none
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """A worker collects under the shared lock too (collection discovers the subjects), so that
    it never collects while another worker's test has a plant in ``impls/``."""
    with _checkout_lock(False):
        return (yield)
