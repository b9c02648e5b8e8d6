"""One case across the process boundary of crash isolation (the worker's side is
:mod:`conformance.robustness.isolation_worker`).

The harness does everything but the planner's calls in its own process: it builds the case's
inputs and guarded, poisoned outputs (:mod:`conformance.engine.steps`), snapshots them before and
after every call and records the :class:`conformance.engine.observe.Observation` with the very
observer an in-process run uses (:func:`conformance.engine.observe.observe`); only the launcher is
a stand-in (:class:`RemoteLauncher`) that hands the call's tensors to the worker in shared memory
(:mod:`conformance.robustness.shared_tensors`) and waits for "returned R" or "raised E". So:

* the worker never receives a case: no id, no file path, no golden; walking its frames or its heap
  finds the tensors of one call and nothing else;
* what is compared is read by the harness from memory it owns, with its own comparison: a planner
  that rebinds ``torch.equal``, pushes a ``TorchFunctionMode`` or patches the observer in the worker
  changes nothing here, and an input written through ``.data`` or numpy is seen in the bytes;
* a write past the end (or before the start) of an argument's memory lands in the hidden guards
  each shared storage has (:mod:`conformance.robustness.shared_tensors`), which the harness reads
  after every call and hands the judge as the call's ``past_end`` (so the plain run's exact-size
  buffers are guarded too, the planner unable to see it);
* the inputs (``_contract.INPUT_NAMES``) are *fenced*: the worker maps the pages around them
  ``PROT_NONE``, so a read outside the table, the LUT or a per-request input faults (a ``crash``)
  even when its value is thrown away, within the limits of a page
  (:mod:`conformance.robustness.guard_pages` says which reads that catches and which it cannot);
* the worker's reports -- what the launcher returned or raised, the version counters of the
  tensors it wrote in place, the torch state it left changed -- are taken as given: the version
  counters are advisory (a planner can write without moving them; the byte comparison decides).
"""

from __future__ import annotations

import torch

from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.case_model import Case
from conformance.corpus.text import counted
from conformance.engine.inputs import poison_seed
from conformance.engine.observe import Raised, ReportedRaise, observe
from conformance.engine.runner import CaseBuildError, Target, resolve_device
from conformance.robustness.worker_process import ChildLost
from conformance.robustness.shared_tensors import Sender


def case_request(case: Case, planner: str, device: str) -> dict:
    """The request that runs ``case`` on ``planner`` (tensors on ``device``) in a worker. It stays
    in this process: the worker is sent the tensors of each call, never the case."""
    return {"case": case, "planner": planner, "device": device}


class RemoteLauncher:
    """A launcher that runs each call in ``worker`` on the very tensors it is given (shared with
    the worker), until ``deadline`` (``time.monotonic()``) for the whole case."""

    def __init__(self, worker, deadline: float, timeout: float) -> None:
        self.worker, self.deadline, self.timeout = worker, deadline, timeout
        self.sender = Sender(poison_seed(), fenced=_contract.INPUT_NAMES)
        self.past_end: list[list[dict]] = []  # per call: what it wrote into the hidden guards

    def __call__(self, **kwargs):
        message, fds = self.sender.describe(kwargs)
        answer = self.worker.call(message, fds, self.deadline, self.timeout)
        self.past_end.append(self.sender.after_call())
        for name, grew in (answer.get("versions") or {}).items():
            value = kwargs.get(name)
            if isinstance(value, torch.Tensor) and isinstance(grew, int):
                for _ in range(min(grew, 1000)):  # advisory: the worker's count of in-place writes
                    torch.autograd.graph.increment_version(value)
        if answer.get("status") == "raised":
            try:
                raised = Raised(**answer["raised"])
            except (TypeError, KeyError):
                raise ChildLost({"status": "error", "text": "the isolation worker sent an "
                                 "unreadable exception record"}) from None
            raise ReportedRaise(raised)
        if answer.get("status") != "returned":
            raise ChildLost({"status": "error", "text": f"the isolation worker sent an "
                             f"unknown reply {str(answer)[:200]!r}"})
        if answer.get("returned_none") is True:
            return None
        return _Returned(str(answer.get("returned_repr")))


class _Returned:
    """What a launcher returned in the worker, as its ``repr`` there."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def observe_in(worker, request: dict, deadline: float, timeout: float) -> dict:
    """Observe ``request``'s case here with its planner's calls in ``worker`` (see the module
    docstring).

    Returns:
        ``{"status": "observed", "observation": Observation, "device": "cuda:0",
        "state_changed": [...]}``; ``{"status": "case-error", "text": <one line>}`` when the
        inputs cannot be built (the case's fault); ``crash`` / ``timeout`` / ``error`` answers
        (:class:`conformance.robustness.worker_process.ChildLost`).
    """
    device = resolve_device(request["device"])
    launcher = RemoteLauncher(worker, deadline, timeout)
    try:
        worker.begin(str(device))
        try:
            seen = observe(request["case"], Target(request["planner"], launcher, device))
        except CaseBuildError as exc:
            launcher.sender.close()
            worker.end(deadline, timeout)
            return {"status": "case-error", "text": str(exc)}
        changed = worker.end(deadline, timeout)
        if launcher.past_end:  # one record per call, and a launcher case's calls are its steps
            if len(launcher.past_end) != len(seen.steps):
                raise ChildLost({"status": "error", "text": (
                    f"{counted(len(launcher.past_end), 'call')} for "
                    f"{counted(len(seen.steps), 'observed step')}")})
            for step, found in zip(seen.steps, launcher.past_end):
                step.past_end = found
    except ChildLost as lost:
        launcher.sender.close()
        if lost.answer["status"] == "error":  # the worker lives on: close the case there
            try:
                worker.end(deadline, timeout)
            except ChildLost as later:
                return {**lost.answer, "tail": later.answer.get("tail", "")}
        return lost.answer
    except BaseException:
        launcher.sender.close()
        raise
    # kept, to be read once more for writes after the case's last call (late_writes.py)
    worker.parting.keep(launcher.sender, worker.owner)
    return {"status": "observed", "observation": seen, "device": str(device),
            "state_changed": changed}


def judge_observed(case: Case, planner: str, answer: dict) -> None:
    """Judge an ``observed`` answer against ``case``.

    Raises:
        ConformanceFailure: the planner's behaviour differs from the case (readable report).
    """
    from conformance.engine.runner import judge

    judge(case, answer["observation"], planner, answer["device"])
