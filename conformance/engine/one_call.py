"""The one-call engine: a case is one launcher call of a subject (``ENGINE = "one-call"``,
:mod:`conformance.corpus.subjects`), judged element by element with the rule that decides each.

For each of the three runs (:data:`conformance.engine.call_runs.RUNS`: ``a`` and ``b`` fill the
outputs with poison, :func:`conformance.engine.inputs.poison_values`, random per element, positive
in ``a`` and negative in ``b``; ``plain`` with values a stale plan could hold,
:func:`conformance.engine.inputs.stale_plan_values`, so that a planner right only on poison-sized
fills is seen; all drawn from the process's poison seed) the subject builds the case's arguments
(the case it gets carries ``_run`` and ``_seed``, :func:`conformance.engine.inputs.run_seed`, for
the values of an input the contract leaves unread), the harness moves every tensor argument into a
guarded allocation of its own (:class:`conformance.engine.allocations.Allocations`: guard zones
around it, and the storage a strided view skips, filled with the run's values), fills every
output with that run's values, keeps its own views of every tensor (a planner that rebinds a
tensor's storage with ``set_`` does not move them) and a copy of every input, calls the launcher,
synchronises the device, and compares:

* a documented error: an instance of the built-in class the subject's error class derives from
  (``ValueError`` for a ``PlanError``) with the case's exact text (and its ``error_id``, when the
  exception carries one: :mod:`conformance.engine.call_error`), and
  every output still holding its poison (errors come before any write: each element decided by
  the error's rule, or by the subject's ``error_element_rules`` where it has them, a project rule
  there excusing only the value the subject's ``error_written_values`` gives); a return where only a
  project rule raises (the subject's ``error_rule``) differs from that rule, and so do the
  elements such a call writes; elsewhere it is the contract's ``no-error``;
* a valid call: nothing raised (a raise, or a device error at the synchronisation after the
  call, is decided by the subject's ``error_rule``: the project rule of the situation the case
  reaches, else the contract's; the elements it left unwritten are not counted again), ``None``
  returned, every output element of the golden's leading
  region equal to it, every later element still its poison, except where the subject's
  ``element_rules`` say ``unspecified``;
* every input equal to its copy (inputs are read-only), and at the end of the case still as it
  was after its run's call (a later call that writes an earlier run's input writes a server's);
* every byte of every allocation that no argument's view covers as it was filled (a write there
  is an ``outside`` difference, with its proof: the status is ``oob``).

A call that rebinds an attribute of the engine's modules or of a class they define (the judge and
its parts, the verdict, the allocations, the subject), or changes in place a dict, list, set or
bytearray they hold (``verdict.PROFILES``), is a difference, and everything is set back before
the next judgement; an error that judging raises after a call (the call's doing) is a RuntimeError, never
the case's ValueError, KeyError or TypeError.

Each difference is a :class:`~conformance.engine.verdict.Difference` with the element's rule
(``contract`` or a project rule key); :func:`judge_call` returns the
:class:`~conformance.engine.verdict.VerdictData` (its readable text:
:func:`conformance.engine.call_report.failure_text`), and nothing here names a subject.
"""

from __future__ import annotations

import copy
import sys
from types import ModuleType

import torch

from conformance.engine import call_error, call_report, call_runs, inputs, object_text
from conformance.engine.allocations import Allocations
from conformance.engine.call_error import judge_error
from conformance.engine.call_runs import RUNS, output_fill, uncovered_fill
from conformance.engine.inputs import run_seed
from conformance.engine.namespaces import restore_changed, snapshot, type_name
from conformance.engine.object_text import one_line, repr_line
from conformance.engine.verdict import Difference, VerdictData

UNSPECIFIED = "unspecified"


def _call(launch, kwargs: dict, device: torch.device):
    """(returned, raised, at_sync) of one launcher call and the device synchronisation after it:
    ``at_sync`` when the error surfaced there (a device-side fault or trap, after which the
    device's context cannot be read)."""
    try:
        returned = launch(**kwargs)
    except KeyboardInterrupt:  # the user's Ctrl-C stops the run
        raise
    except BaseException as exc:  # noqa: BLE001 - judged below; a skip, xfail or SystemExit too
        return None, exc, False
    if device.type == "cuda":
        try:
            torch.cuda.synchronize(device)
        except Exception as exc:  # noqa: BLE001 - the launch's own error, surfacing here
            return returned, exc, True
    return returned, None, False


def _judge_outputs(data: VerdictData, run: str, got: dict, poison: dict, golden: dict,
                   rules: dict, raised: bool = False, allowed: dict | None = None) -> None:
    """Every output element against its expected state; ``raised``: the call raised, so the
    elements it left unwritten are the raise's difference, not counted again. ``allowed``
    ({output: value per element}, an error case's): where an element's project rule lets a
    planner write, the one value it may write; any other write there is the contract's."""
    for name, values in got.items():
        want = golden.get(name, [])
        other = (allowed or {}).get(name)
        for i, value in enumerate(values):
            rule = rules[name][i]
            if rule == UNSPECIFIED:
                continue
            before = poison[name][i]
            expected = want[i] if i < len(want) else before
            if value == expected:
                continue
            if other is not None and rule != "contract" and value != other[i]:
                data.add(Difference(0, run, "value", name, i, other[i], value, "contract"))
                continue
            what = ("never-written" if value == before  # still what it held (a stale fill may
                    # equal a wrong value: the poisoned runs tell them apart)
                    else "written" if i >= len(want)  # the step defines none: must keep its fill
                    else "value")
            if raised and what == "never-written":
                continue
            data.add(Difference(0, run, what, name, i, expected, value, rule))


def _readable(tensor: torch.Tensor) -> bool:
    """Whether the harness can fill and read ``tensor`` (not a ``meta`` tensor, an int dtype it
    has poison for)."""
    return tensor.device.type != "meta" and tensor.dtype in (torch.int32, torch.int64)


def _flat(tensor: torch.Tensor) -> list:
    return tensor.detach().cpu().flatten().tolist()


def _watched(subject: ModuleType) -> list[ModuleType]:
    """The modules whose attributes decide a verdict or its text: this engine, the verdict's, the
    guarded allocations', the namespace guard's own, the subject's, and this engine's parts (the
    runs' fills and the values they are drawn from, the error's judgement, a planner's object as
    text, the verdict's text) (and the classes each defines:
    :func:`conformance.engine.namespaces.snapshot`)."""
    return [sys.modules[__name__], sys.modules[VerdictData.__module__],
            sys.modules[Allocations.__module__], sys.modules[snapshot.__module__], subject,
            call_runs, inputs, call_error, object_text, call_report]


def _judge_input(data: VerdictData, run: str, name: str, before: torch.Tensor,
                 after: torch.Tensor) -> None:
    """An ``input`` difference at the first element of input ``name`` that is not its copy."""
    if after.shape != before.shape or not torch.equal(after, before):
        flat_a, flat_b = after.flatten().tolist(), before.flatten().tolist()
        i = next((j for j, (x, y) in enumerate(zip(flat_a, flat_b)) if x != y),
                 min(len(flat_a), len(flat_b)))
        data.add(Difference(0, run, "input", name, i, flat_b[i] if i < len(flat_b) else None,
                            flat_a[i] if i < len(flat_a) else None, "contract"))


def judge_call(subject: ModuleType, case: dict, launch, device: torch.device) -> VerdictData:
    """Run ``case`` on ``launch`` in every run of :data:`RUNS` and judge it (module docstring). The
    subject sees a deep copy of the case with ``_device`` added (the device the call runs on, as
    torch prints it), and ``_run`` and ``_seed`` when it builds a run's arguments; what the case expects is read from the subject before any call, and an earlier
    run's outputs and inputs are read again after the last call (a planner that keeps a reference
    and writes them later is caught there).

    Raises:
        ValueError, KeyError, TypeError: the case's inputs cannot be built (the case's fault, before
            any call).
        RuntimeError: a call resized (freed) a tensor's storage, which the judge cannot read; or
            judging raised one of the errors above after the planner was called (what the call
            left behind, never the case's fault: a later run's ``build`` that fails, say).
    """
    calls = []

    def counted(**kwargs):
        calls.append(None)
        return launch(**kwargs)
    try:
        return _judge_runs(subject, case, counted, device)
    except (ValueError, KeyError, TypeError) as exc:
        if not calls:
            raise
        raise RuntimeError(f"judging raised {type_name(exc)} after {len(calls)} call(s) of the "
                           f"planner: {one_line(exc)}") from exc


def _judge_runs(subject: ModuleType, case: dict, launch, device: torch.device) -> VerdictData:
    """:func:`judge_call`'s judgement (its errors unchanged)."""
    data = VerdictData()
    device = torch.empty(0, device=device).device  # "cuda" -> "cuda:0", as tensors print it
    case = copy.deepcopy({**case, "_device": str(device)})
    error, error_rule = subject.expected_error(case), subject.error_rule(case)
    golden = None if error is not None else copy.deepcopy(subject.golden(case))
    outputs, error_class = list(subject.OUTPUTS), subject.ERROR
    error_ok, earlier = True, []
    for run in RUNS:
        built = subject.build({**case, "_run": run, "_seed": run_seed(run)}, device)
        guarded = Allocations(built, {k for k in built if k not in outputs}, uncovered_fill(run))
        kwargs = guarded.kwargs
        views = {k: v[...] for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
        judged = [n for n in outputs if n in views and _readable(views[n])]
        poison = {}
        for index, name in enumerate(judged):
            views[name].copy_(output_fill(run, index, views[name]))
            poison[name] = _flat(views[name])
        inputs = {k: v.cpu().clone() for k, v in views.items()
                  if k not in outputs and v.device.type != "meta"}
        if error is None:
            rules = subject.element_rules(case, kwargs)
        elif hasattr(subject, "error_element_rules"):  # who decides what an error case wrote
            rules = subject.error_element_rules(case, kwargs)
        else:  # the error's rule decides every element
            rules = {name: [error_rule] * len(poison[name]) for name in judged}
        allowed = subject.error_written_values(case, kwargs) if error is not None and hasattr(
            subject, "error_written_values") else None
        saved = snapshot(_watched(subject))
        guarded.seal()
        returned, raised, at_sync = _call(launch, kwargs, device)
        restore_changed(data, run, saved)
        if at_sync:  # nothing more can be read on this device
            data.add(Difference(0, run, "raised", "error", None, "no error",
                                f"{type_name(raised)} at synchronize: {one_line(raised)}",
                                error_rule, got_kind=type_name(raised)))
            return data
        guarded.judge(data, run)  # refuses a resized allocation before anything reads it
        got = {name: _flat(views[name]) for name in judged}
        if error is not None:
            error_ok = judge_error(data, error, error_rule, error_class, run, raised) and error_ok
            _judge_outputs(data, run, got, poison, {}, rules, allowed=allowed)
        else:
            if raised is not None:  # the rule of the situation the case reaches, if any
                data.add(Difference(0, run, "raised", "error", None, "no error",
                                    f"{type_name(raised)}: {one_line(raised)}", error_rule,
                                    got_kind=type_name(raised)))
            elif returned is not None:
                data.add(Difference(0, run, "returned", "return", None, None,
                                    repr_line(returned), "contract"))
            _judge_outputs(data, run, got, poison, golden, rules, raised=raised is not None)
        read = {name: views[name].cpu().clone() for name in inputs}  # as judged after the call
        for name, before in inputs.items():
            _judge_input(data, run, name, before, read[name])
        earlier.append((run, views, judged, got, guarded, read))
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    for run, views, judged, got, guarded, read in earlier[:-1]:  # written after it returned
        guarded.judge_again(data, run)
        for name, then in read.items():
            _judge_input(data, run, name, then, views[name].cpu())
        for name in judged:
            for i, (now, then) in enumerate(zip(_flat(views[name]), got[name])):
                if now != then:
                    data.add(Difference(0, run, "written", name, i, then, now, "contract"))
    if error is not None:
        data.error_steps.append({"step": 0, "id": error[0], "ok": error_ok})
    return data
