"""The reference: goldens and expected plans from the pure-Python planner (impls/<subject>/python_planner.py).

Used by ``python -m conformance record``, by fuzz (the golden of a random plan) and by the bench's
correctness check. A golden from here is a convenience, not evidence: it came from one of the
planners under test. ``tests/test_goldens.py`` checks every committed golden against an independent
oracle.
"""

from __future__ import annotations

import torch

from conformance.corpus.case_model import Case
from conformance.engine.diff import field_diff
from conformance.engine.steps import CaseInputs, RUNS
from conformance.corpus.subject import CORPUS_SUBJECT, Subject, subject_of
from conformance.corpus.corpus_subject import python_planner
from conformance.corpus.corpus_subject import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES

BS_ARGUMENT = REQUEST_INPUT_NAMES[0]
"""The argument whose ``shape[0]`` is bs (spec section 3)."""


def record_expectations(case: Case) -> list[dict]:
    """The golden of every step of a launcher ``case``, from the pure-Python planner on the CPU.

    Each step is built by the runner's step builder (:mod:`conformance.engine.steps`), so its
    ``req_to_token_set`` / ``lut_set`` and overrides apply and persist exactly as when it is run.

    Returns:
        One expectation per step: every output's defined region (spec section 5; scalars as ints),
        or ``{"error": {"type", "id", "message"}}`` when the step raises a documented error
        (a ``ValueError``, spec section 4).

    Raises:
        CaseBuildError: the case's inputs cannot be built.
    """
    subject = subject_of(case)
    out = []
    for built in CaseInputs(case, "cpu").steps(runs=RUNS[:1], goldens=False):
        try:
            python_planner.launch(**built.kwargs)
        except ValueError as exc:
            out.append({"error": {"type": "ValueError", "id": getattr(exc, "error_id", "?"),
                                  "message": str(exc)}})
            continue
        views = {name: b.view for name, b in built.buffers.items()}
        out.append(subject.read_golden(views, built.step.bs))
    return out


def reference_plan(kwargs: dict[str, object], subject: Subject = CORPUS_SUBJECT) -> dict[str, object]:
    """The pure-Python planner's plan for launcher ``kwargs`` (any device): every output's defined
    region (spec section 5) as a golden (lists; scalars as ints), computed on CPU copies, so the
    given tensors are not touched.

    Raises:
        ValueError: the inputs fail validation (spec section 4).
    """
    copies = {k: v.detach().cpu().clone() if isinstance(v, torch.Tensor) else v
              for k, v in kwargs.items()}
    python_planner.launch(**copies)
    bs = int(copies[BS_ARGUMENT].shape[0])
    return subject.read_golden(copies, bs)


def plan_mismatch(kwargs: dict[str, object], subject: Subject = CORPUS_SUBJECT) -> str | None:
    """Whether the outputs a planner wrote into launcher ``kwargs`` equal the reference plan over
    their defined regions: None when they do, else a readable diff of the first differing field.
    For the benchmark's correctness check (outputs written by a timed call).

    Raises:
        ValueError: the inputs fail validation (spec section 4).
    """
    want = reference_plan(kwargs, subject)
    bs = int(kwargs[BS_ARGUMENT].shape[0])
    got = subject.read_golden({k: v for k, v in kwargs.items() if k in subject.outputs}, bs)
    for name in subject.outputs:
        w, g = want[name], got[name]
        diff = field_diff(name, w if isinstance(w, list) else [w], g if isinstance(g, list) else [g])
        if diff:
            return diff
    return None
