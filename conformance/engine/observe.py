"""Observe: run a case on a planner and record what happened, as plain data, judging nothing.

:func:`observe` runs every (run, step) of a case (built by :mod:`conformance.engine.steps`) and
records, for each, the exception raised, the value the launcher returned, every output allocation
(guard zones included) before and after, and every input allocation (garbage tails and guard zones
included) with torch's ``_version`` counter before and after. An :class:`Observation` is
JSON-serialisable (:meth:`Observation.to_json` / :meth:`Observation.from_json`), so that the
judge (:mod:`conformance.engine.judge`) can run in a process the planner never reaches.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import asdict, dataclass, field

import torch

from conformance.corpus.case_model import Case
from conformance.engine.inputs import GUARD, output_lengths
from conformance.engine.object_text import error_fields
from conformance.engine.steps import BuiltStep, CaseInputs, first_step, runs_of
from conformance.corpus.corpus_subject import buffers as _buffers
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import validate as _validate

PlanBuffers = _buffers.PlanBuffers
LUT_NAME = _contract.LUT_NAME
LUT_TENSOR_NAME = _contract.LUT_TENSOR_NAME
OUTPUT_NAMES = _contract.OUTPUT_NAMES
inner_args = _validate.inner_args
validate_offsets_inputs = _validate.validate_offsets_inputs
zero_lut = _validate.zero_lut

# Bound when the observer is imported, before any planner is (the isolation worker imports it
# first): a planner that monkeypatches torch.equal, Tensor.clone or Tensor.tolist in its process
# changes what it sees, not what the observer records.
_EQUAL = torch.equal
_CLONE = torch.Tensor.clone
_TOLIST = torch.Tensor.tolist

REPR_LIMIT = 200
"""Characters of a launcher's return value's ``repr`` kept in an observation."""
STAND_IN = f"{LUT_TENSOR_NAME} (the no-LUT stand-in)"
"""Name under which the shared zero LUT stand-in (spec section 4) is observed as an input."""


def _safe(fn, fallback: str) -> str:
    """``fn()``, or ``fallback`` when a hostile object's ``__str__``/``__repr__`` raises."""
    try:
        return str(fn())
    except Exception:  # a planner's own exception or return value may be hostile
        return fallback


@dataclass
class Raised:
    """An exception a call raised, as data.

    Attributes:
        class_name: ``type(exc).__name__``.
        builtin_bases: names of the built-in exception classes it is a subclass of (``issubclass``
            against the real built-ins, so a class merely *named* ``ValueError`` lists no
            ``ValueError``).
        is_value_error: ``isinstance(exc, ValueError)``.
        message: ``str(exc)``.
        error_id: the exception's ``error_id`` attribute (impls/<subject>/errors.py's catalog id), or None.
        traceback_tail: the last three entries of its formatted traceback.
    """

    class_name: str
    builtin_bases: list[str]
    is_value_error: bool
    message: str
    error_id: str | None
    traceback_tail: str

    @classmethod
    def of(cls, exc: BaseException) -> Raised:
        """Record ``exc`` (a :class:`ReportedRaise` stands for what the isolation worker recorded
        of the planner's exception there), reading the exception as data
        (:func:`conformance.engine.object_text.error_fields`)."""
        if isinstance(exc, ReportedRaise):
            return exc.raised
        tail = _safe(lambda: "".join(traceback.format_exception(exc)[-3:]).rstrip(),
                     "<traceback unavailable>")
        return cls(*error_fields(exc), tail)


class ReportedRaise(Exception):
    """What a launcher that runs in the isolation worker raised there, as the worker recorded it
    (:meth:`Raised.of` in the worker); raised in the harness by the worker's stand-in launcher
    (:mod:`conformance.robustness.isolated_case`) so that :func:`observe` records it as it records
    a local raise."""

    def __init__(self, raised: Raised) -> None:
        super().__init__(raised.message)
        self.raised = raised


def returned_fields(returned) -> tuple[bool, str]:
    """(whether a launcher's return value is None, its ``repr`` cut to :data:`REPR_LIMIT`)."""
    text = _safe(lambda: repr(returned), "<repr() raised>")
    return returned is None, text if len(text) <= REPR_LIMIT else text[:REPR_LIMIT - 3] + "..."


@dataclass
class InputState:
    """One input allocation around a launch.

    Attributes:
        name: the argument name (or :data:`STAND_IN`).
        offset, length: where the tensor lies in its allocation (elements).
        version_before, version_after: torch's ``_version`` counter of the allocation, which counts
            in-place writes even when they are undone.
        before, after: the whole allocation as a flat list, stored only when they differ (an
            unchanged allocation is recorded as ``None`` both, to keep large tables out).
    """

    name: str
    offset: int
    length: int
    version_before: int
    version_after: int
    before: list | None = None
    after: list | None = None

    @property
    def changed(self) -> bool:
        """Whether the allocation's values differ after the launch."""
        return self.before is not None


@dataclass
class StepObservation:
    """What one call did. ``run``/``run_index`` name the run (a poison, or ``plain``), ``index``
    the step.

    ``returned_repr`` is the launcher's return value's ``repr`` (None when it raised) and
    ``returned_none`` whether it was None (spec section 3: it must be). ``outputs_before`` /
    ``outputs_after`` hold every output allocation, guard zones included; ``guard`` is how many
    elements of guard zone lie before each output in it (0 in the plain run). ``past_end`` is
    what the call wrote past the end of an argument's memory where the engine maps a hidden guard
    there (the isolated engine's shared CPU storages), one ``{"field", "index", "past",
    "expected", "got"}`` per element
    (:meth:`conformance.robustness.shared_tensors.Sender.after_call`); empty where nothing was
    written there or no engine looked.
    """

    run: str
    run_index: int
    index: int
    raised: Raised | None = None
    returned_repr: str | None = None
    returned_none: bool = True
    outputs_before: dict[str, list] = field(default_factory=dict)
    outputs_after: dict[str, list] = field(default_factory=dict)
    inputs: list[InputState] = field(default_factory=list)
    guard: int = GUARD
    past_end: list[dict] = field(default_factory=list)


@dataclass
class Observation:
    """Everything :func:`observe` saw of one case on one planner.

    ``output_lengths`` is each output tensor's length (its allocation adds guard zones either side).
    """

    case_id: str
    entry: str
    target_name: str
    device: str
    output_lengths: dict[str, int] = field(default_factory=dict)
    steps: list[StepObservation] = field(default_factory=list)

    def to_json(self) -> str:
        """This observation as a JSON string."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Observation:
        """The observation :meth:`to_json` wrote."""
        doc = json.loads(text)
        steps = []
        for s in doc.pop("steps"):
            raised = s.pop("raised")
            inputs = [InputState(**i) for i in s.pop("inputs")]
            steps.append(StepObservation(raised=None if raised is None else Raised(**raised),
                                         inputs=inputs, **s))
        return cls(steps=steps, **doc)


def _snapshots(kwargs: dict, own_views: set[int]) -> list[tuple]:
    """(name, allocation, copy, offset, length, version) of every input: the whole allocation (garbage
    tails and guard zones included) and where the tensor sits in it, plus the shared no-LUT
    stand-in, which a planner must not write either."""
    out = []
    if kwargs.get(LUT_NAME) is None:
        device = kwargs[OUTPUT_NAMES[0]].device  # the stand-in lives on the scratch's device
        if device.type != "meta":
            stand_in = zero_lut(device)
            out.append((STAND_IN, stand_in, _CLONE(stand_in), 0, 1, stand_in._version))
    for name, value in kwargs.items():
        if not isinstance(value, torch.Tensor) or id(value) in own_views or value.is_meta:
            continue
        whole = value._base if value._base is not None else value
        offset = value.storage_offset() - whole.storage_offset()
        out.append((name, whole, _CLONE(whole), offset, value.numel(), whole._version))
    return out


def _input_states(snapshots: list[tuple]) -> list[InputState]:
    states = []
    for name, whole, before, offset, length, version in snapshots:
        state = InputState(name, offset, length, version, whole._version)
        if not _EQUAL(whole, before):
            state.before, state.after = _TOLIST(before.flatten()), _TOLIST(whole.flatten())
        states.append(state)
    return states


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _observe_launch(built: BuiltStep, launch, device: torch.device) -> StepObservation:
    seen = StepObservation(built.run, built.run_index, built.index, guard=built.guard)
    own_views = {id(b.view) for b in built.buffers.values()}
    snapshots = _snapshots(built.kwargs, own_views)
    seen.outputs_before = {name: _TOLIST(b.storage) for name, b in built.buffers.items()}
    try:
        returned = launch(**built.kwargs)
        _sync(device)
    except Exception as exc:  # judged later: a planner may raise anything
        seen.raised = Raised.of(exc)
    else:
        seen.returned_none, seen.returned_repr = returned_fields(returned)
    seen.outputs_after = {name: _TOLIST(b.storage) for name, b in built.buffers.items()}
    seen.inputs = _input_states(snapshots)
    return seen


def _call(fn) -> Raised | None:
    try:
        fn()
    except Exception as exc:  # judged later
        return Raised.of(exc)
    return None


def observe(case: Case, target) -> Observation:
    """Run ``case`` on ``target`` (a :class:`conformance.engine.runner.Target`) and record it.

    A launcher case runs every step twice (runs ``a`` and ``b``), and a third time on plain buffers
    (:func:`conformance.engine.steps.runs_of`); a validator case calls the shared
    inner validator (impls/<subject>/validate.py) with the case's derived integers; an allocate case calls
    :meth:`PlanBuffers.allocate` (the subject's ``buffers`` module).

    Raises:
        CaseBuildError: the case's inputs cannot be built (before the planner is called).
    """
    device = target.device
    seen = Observation(case.id, case.entry, target.name, str(device))
    if case.entry == "launcher":
        inputs = CaseInputs(case, device)
        seen.output_lengths = output_lengths(case)
        # goldens=False: the judge expands the goldens; the observer (maybe a child process the
        # planner shares) never needs them, and the isolation worker is not even sent them
        for built in inputs.steps(runs=runs_of(case), goldens=False):
            seen.steps.append(_observe_launch(built, target.launch, device))
    elif case.entry == "validator":
        kwargs = first_step(case, device).kwargs

        def validate() -> None:
            inner = inner_args(**kwargs)
            inner.update(case.derived)
            validate_offsets_inputs(**inner)

        seen.steps.append(StepObservation("a", 0, 0, raised=_call(validate)))
    else:
        raised = _call(lambda: PlanBuffers.allocate(**case.allocate, device=device))
        seen.steps.append(StepObservation("a", 0, 0, raised=raised))
    return seen
