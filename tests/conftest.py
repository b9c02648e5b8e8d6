"""Hypothesis profiles for the harness's own property tests, a plain environment for the
children the tests start, and one folder per test session for the runs several test files share
(tests/report_runs.py).

``ci`` (the default) keeps each property test within CI time on one core; ``deep`` is the long
search: ``pytest tests/ --hypothesis-profile=deep`` (10,000 examples per property test that does
not fix its own count).
"""

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=250, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")

XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
"""What pytest-xdist sets in a worker's environment. A ``pytest conformance/`` run that inherits
``PYTEST_XDIST_WORKER`` takes itself for a worker (it claims no results file:
conformance/plugin/results_writer.py), so the tests' children must never see them."""


@pytest.fixture(scope="session", autouse=True)
def _no_xdist_environment():
    """On a pytest-xdist worker (the project's run, conftest.py at the root), the tests and every
    child they start see the environment of a run without workers; set back at the end."""
    saved = {name: os.environ.pop(name) for name in XDIST_VARIABLES if name in os.environ}
    yield
    os.environ.update(saved)


SHARED_RUNS_VARIABLE = "CONFORMANCE_TEST_SHARED_RUNS"
"""The folder of the session's shared runs (tests/report_runs.py): made by the process that starts
the session (pytest-xdist's controller, or the only process), inherited by its workers, so that a
run several test files read happens once per session, not once per worker."""


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or SHARED_RUNS_VARIABLE in os.environ:
        return
    folder = tempfile.mkdtemp(prefix="report-runs-")
    os.environ[SHARED_RUNS_VARIABLE] = folder
    config.add_cleanup(lambda: (os.environ.pop(SHARED_RUNS_VARIABLE, None),
                                shutil.rmtree(folder, ignore_errors=True)))


FIXED_POISON_SEED = 20261203
"""The poison seed of the tests that count a verdict's differences exactly: the plain run's fill
(values a stale plan could hold, conformance/engine/inputs.py) can equal a golden or a planted
bug's value at an element by chance under a random seed, which drops that run's difference there;
under this seed the counts are the same on every run."""


@pytest.fixture
def fixed_poison_seed():
    """The process's fills drawn from :data:`FIXED_POISON_SEED` for one test, the run's own seed
    set back after it."""
    from conformance.engine.inputs import poison_seed, set_poison_seed

    before = poison_seed()
    set_poison_seed(FIXED_POISON_SEED)
    yield FIXED_POISON_SEED
    set_poison_seed(before)


@pytest.fixture(autouse=True)
def _import_system_left_as_found():
    """Fails, at its teardown, the test after which the import system no longer reads as when the
    harness started (impls/import_snapshot.py ``intact``): every later source lookup of that
    process would be refused, and the tests that read a digest would fail far from the cause.
    Autouse, so it is torn down after the test's own fixtures (monkeypatch's undo included)."""
    from impls import import_snapshot

    was = import_snapshot.intact()
    yield
    if was and not import_snapshot.intact():
        pytest.fail("this test left the import system changed: "
                    + "; ".join(import_snapshot.changes()), pytrace=False)
