"""Run one case on one planner and judge every output byte: :func:`run_case` is
:func:`conformance.engine.judge.judge` of :func:`conformance.engine.observe.observe`.

What a run does and what it requires is described in :mod:`conformance.engine.steps` (the inputs
of every run and step), :mod:`conformance.engine.observe` (what is recorded) and
:mod:`conformance.engine.judge` (the verdict and its readable text).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conformance.corpus.case_model import Case
from conformance.engine.judge import ConformanceFailure, judge
from conformance.engine.observe import Observation, observe
from conformance.engine.rerun import case_dir_arg, cases_dir_arg, rerun_command
from conformance.engine.steps import RUNS, CaseBuildError
from conformance.corpus.corpus_subject import contract as _contract

Launcher = _contract.Launcher

__all__ = ["CaseBuildError", "ConformanceFailure", "Observation", "RUNS", "Target", "case_dir_arg",
           "cases_dir_arg", "judge", "observe", "rerun_command", "resolve_device", "run_case"]


@dataclass(frozen=True)
class Target:
    """What a case runs against: a planner's name, its launcher and the device its tensors live on."""

    name: str
    launch: Launcher | None
    device: torch.device


def resolve_device(device: str | torch.device) -> torch.device:
    """``cuda`` with its current index made explicit (tensors report ``cuda:0``), else as given."""
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


def run_case(case: Case, target: Target) -> None:
    """Run ``case`` on ``target`` and judge it.

    Raises:
        ConformanceFailure: any difference from the case's expectation (readable report).
        CaseBuildError: the case describes inputs that cannot be built (the case's fault, raised
            before the planner is called).
    """
    judge(case, observe(case, target), target.name, target.device)
