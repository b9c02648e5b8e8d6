"""The root conftest's checkout lock covers everything a test runs on the checkout: the setup of
the module-scoped fixtures it is the first to use (tests/test_bench_hacks.py starts its bench runs
in such fixtures; a plant of tests/test_subject_move_attacks.py on another worker made those runs
discover a second corpus subject when only the test function held the lock)."""

from __future__ import annotations

import os
import sys

import pytest

LOCK_HELD = sys.modules["conftest"].LOCK_HELD  # the root conftest, loaded by pytest


@pytest.fixture(scope="module")
def lock_at_module_setup():
    """Whether the checkout lock was held while this module-scoped fixture was set up."""
    return os.environ.get(LOCK_HELD)


@pytest.fixture(scope="session")
def lock_at_session_setup():
    return os.environ.get(LOCK_HELD)


def test_module_and_session_fixtures_are_set_up_under_the_lock(lock_at_module_setup,
                                                                 lock_at_session_setup):
    assert (lock_at_module_setup, lock_at_session_setup) == ("1", "1")


def test_the_test_itself_runs_under_the_lock():
    assert os.environ.get(LOCK_HELD) == "1"
