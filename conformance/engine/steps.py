"""The one step builder: a case's shared inputs built once, then every (run, step) as launcher
keyword arguments with its golden expanded.

Used by the runner (:mod:`conformance.engine.observe`), ``record``
(:mod:`conformance.engine.reference`), the stream check, the bench's correctness check and the
golden test, so that "the inputs of step k" means the same thing everywhere:

* the table, the LUT and the guarded output buffers are built once per case (from the case's
  subject, :mod:`conformance.corpus.subject`), as a server keeps them;
* the per-request inputs live in one allocation per input for the whole case
  (:class:`conformance.engine.inputs.RequestInputs`);
* before each run the table and LUT are restored and the output allocations poisoned afresh
  (:data:`RUNS`); step k's ``req_to_token_set`` / ``lut_set`` are applied in place (they persist to
  later steps of the same run), then its overrides;
* the expected state of every output allocation after step k is the state after step k-1 with step
  k's golden written over its defined regions (an error step writes nothing);
* every launcher case (error steps included) runs once more, as run :data:`PLAIN`, on tensors as a server
  hands them over: zero-filled outputs and inputs with no guard zone nor tail, each in an
  allocation of its own (:mod:`conformance.engine.plain`, :func:`runs_of`).

Anything that fails while building (a table entry outside the table, a ``lut_set`` without a LUT, an
override the machine cannot honour) is raised as :class:`CaseBuildError`: a fault of the case, never
of the planner.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from conformance.corpus.case_file import display_path
from conformance.corpus.case_model import Case, Step
from conformance.engine.inputs import (
    GUARD,
    OutputBuffer,
    RequestInputs,
    allocate_outputs,
    apply_overrides,
    apply_patches,
    build_tables,
    launcher_kwargs,
)
from conformance.corpus.subject import Subject, subject_of
from conformance.engine.plain import (PLAIN, ZEROED_EACH_STEP, has_plain_run, plain_outputs,
                                      plain_requests)
from conformance.corpus.corpus_subject import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES

RUNS = ("a", "b")
"""The poison of each run of a launcher case: the second run, on freshly poisoned buffers, catches
an output that depends on what the buffers held before (spec section 5)."""


def runs_of(case: Case) -> tuple[str, ...]:
    """The runs a case is observed in: :data:`RUNS`, then :data:`PLAIN` for a launcher case
    (:func:`conformance.engine.plain.has_plain_run`)."""
    return RUNS + (PLAIN,) if has_plain_run(case) else RUNS


class CaseBuildError(Exception):
    """A case's inputs could not be built, before any planner was called: the case's fault.

    ``str()`` is one line: the case file, the JSON path of the part that failed, and what failed.
    Attributes ``path``, ``json_path`` and ``detail`` hold the parts.
    """

    def __init__(self, case: Case, json_path: str, detail: str) -> None:
        self.path, self.json_path, self.detail = case.path, json_path, detail
        super().__init__(f"{display_path(case.path)}: at {json_path}: cannot build the inputs: "
                         f"{detail}")


def _short(exc: BaseException) -> str:
    """One short line for ``exc``: class and the first line of its message, at most 200 chars."""
    text = str(exc).strip().splitlines()
    line = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return line if len(line) <= 200 else line[:197] + "..."


class _Building:
    """Context manager: any exception inside becomes a :class:`CaseBuildError` at ``json_path``."""

    def __init__(self, case: Case, json_path: str) -> None:
        self.case, self.json_path = case, json_path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None and isinstance(exc, Exception) and not isinstance(exc, CaseBuildError):
            raise CaseBuildError(self.case, self.json_path, _short(exc)) from None
        return False


def step_json_path(case: Case, index: int) -> str:
    """JSON path of step ``index``'s own fields (``$.steps[k]`` or the case itself)."""
    return f"{case.json_path}.steps[{index}]" if "steps" in case.raw else case.json_path


@dataclass
class BuiltStep:
    """One (run, step) of a case, ready to launch.

    Attributes:
        run: the run's name (``a``, ``b`` or ``plain``); ``run_index`` its position in the
            case's runs (:func:`runs_of`).
        index: the step's index in ``case.steps``; ``step`` the step itself.
        kwargs: the launcher's 13 keyword arguments, table/LUT changes and overrides applied.
        buffers: the output buffers: the guarded ones (shared by every step of the poisoned
            runs), or the plain run's own.
        poison: {output name: the whole allocation (guard zones included) as filled for this run}.
        expected: {output name: the whole allocation as it must be after this step}, or None when
            built without goldens (``record``).
        guard: elements of guard zone before each output in its allocation (0 in the plain run).
    """

    run: str
    run_index: int
    index: int
    step: Step
    kwargs: dict[str, object]
    buffers: dict[str, OutputBuffer]
    poison: dict[str, list[int]]
    expected: dict[str, list[int]] | None
    guard: int = GUARD


def expand_golden(subject: Subject, previous: dict[str, list[int]], golden: dict,
                  guard: int = GUARD) -> dict[str, list]:
    """Expected output allocations after a valid step: ``previous`` (whole allocations, guard zones
    included) with ``golden``'s values written from each tensor's element 0 (at index ``guard``)."""
    out = {name: list(values) for name, values in previous.items()}
    for name, values in subject.golden_values(golden).items():
        out[name][guard:guard + len(values)] = values
    return out


class CaseInputs:
    """The inputs of one case on one device, built once and shared by all its steps and runs.

    Raises:
        CaseBuildError: the table, LUT or output buffers cannot be built (``__init__``), or a
            step's inputs cannot (while iterating :meth:`steps`).
    """

    def __init__(self, case: Case, device: torch.device | str) -> None:
        self.case, self.device = case, torch.device(device)
        self.subject = subject_of(case)
        with _Building(case, f"{case.json_path}.inputs"):
            self.table, self.lut = build_tables(case, self.device)
            self.buffers = allocate_outputs(case, self.device)
            self.requests = RequestInputs(case, self.device)
        self._pristine = [t.clone() for t in self._tables()]

    def _tables(self) -> list[torch.Tensor]:
        return [t for t in (self.table, self.lut) if t is not None]

    def steps(self, runs: tuple[str, ...] = RUNS, goldens: bool = True) -> Iterator[BuiltStep]:
        """Every (run, step) in order, over the same tensors.

        Args:
            runs: run names, one run of every step per name: poison names (:data:`RUNS`) and
                :data:`PLAIN` (see :func:`runs_of`).
            goldens: expand each valid step's golden into :attr:`BuiltStep.expected`; False for a
                case whose goldens are not known yet (``record``).
        """
        case = self.case
        for r, run in enumerate(runs):
            for tensor, original in zip(self._tables(), self._pristine):
                tensor.copy_(original)  # undo the previous run's step patches
            if run == PLAIN:
                buffers, guard = plain_outputs(case, self.device), 0
                table, lut = (None if t is None else t.clone() for t in (self.table, self.lut))
            else:
                buffers, guard, table, lut = self.buffers, GUARD, self.table, self.lut
                for buffer in buffers.values():
                    buffer.poison(run)
            poison = {name: b.storage.tolist() for name, b in buffers.items()}
            expected = poison if goldens else None
            for k, step in enumerate(case.steps):
                where = step_json_path(case, k)
                if run == PLAIN and k > 0:  # as the caller does before every launch
                    for name in ZEROED_EACH_STEP:
                        buffers[name].storage.zero_()
                        if expected is not None:
                            expected = {**expected, name: [0] * len(expected[name])}
                with _Building(case, f"{where}.inputs"):
                    apply_patches(table, lut, step)
                    kwargs = launcher_kwargs(step, self.device, table, lut, buffers,
                                             None if run == PLAIN else self.requests)
                    if run == PLAIN:
                        kwargs.update(plain_requests(step, REQUEST_INPUT_NAMES, self.device))
                with _Building(case, f"{where}.overrides"):
                    kwargs = apply_overrides(kwargs, step.overrides)
                if goldens and step.error is None:
                    with _Building(case, f"{where}.expect"):
                        expected = expand_golden(self.subject, expected, step.expect, guard)
                yield BuiltStep(run, r, k, step, kwargs, buffers, poison, expected, guard)


def first_step(case: Case, device: torch.device | str) -> BuiltStep:
    """Step 1, run ``a`` of ``case``, built alone (the validator entry, the stream check).

    Raises:
        CaseBuildError: as :class:`CaseInputs`.
    """
    return next(CaseInputs(case, device).steps(runs=RUNS[:1], goldens=False))
