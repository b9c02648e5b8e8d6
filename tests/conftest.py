"""Hypothesis profiles for the harness's own property tests, and a plain environment for the
children the tests start.

``ci`` (the default) keeps each property test within CI time on one core; ``deep`` is the long
search: ``pytest tests/ --hypothesis-profile=deep`` (10,000 examples per property test that does
not fix its own count).
"""

import os

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
