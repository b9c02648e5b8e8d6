"""What ``--planner NAME`` accepts and what it says about a name it refuses
(conformance/corpus/entries.py ``planner_name_error``)."""

from __future__ import annotations

import pytest

from conformance.corpus.entries import planner_name_error


@pytest.mark.parametrize("name", ["python", "triton", "numba-cuda-bound", "mypkg.kernels:launch",
                                  "a.b.c:Planner.launch"])
def test_planner_names_that_are_accepted(name):
    assert planner_name_error(name) is None


def test_a_module_path_without_a_callable_is_told_both_readings():
    """``mypkg.kernels`` is either module ``mypkg`` with callable ``kernels`` or module
    ``mypkg.kernels`` with its callable left out: the hint gives both forms."""
    error = planner_name_error("mypkg.kernels")
    assert "mypkg:kernels when kernels is the callable" in error
    assert "mypkg.kernels:<callable> when mypkg.kernels is the module" in error


def test_a_file_path_is_told_the_module_name_it_stands_for():
    """``--planner mypkg/kernels.py`` names a file: the hint gives the module form and where its
    folder goes, never a path with ':' appended."""
    error = planner_name_error("mypkg/kernels.py")
    assert "mypkg.kernels:<callable>" in error
    assert "the folder that holds mypkg in CONFORMANCE_PLANNER_PATH" in error
    assert "mypkg/kernels.py:" not in error
    assert "CONFORMANCE_PLANNER_PATH" in planner_name_error("/abs/mypkg/kernels.py")


@pytest.mark.parametrize("name", ["my pkg:launch", "pkg:class", "pkg.1mod:launch", ""])
def test_names_that_are_refused(name):
    assert planner_name_error(name) is not None
