"""Whether one plan diverges on one planner, as a failing test would say it: the plan's golden
recorded out of the planners' reach, the planner's :class:`~conformance.engine.runner.Target`,
and the harness's failure text for the plan on it (or None when it conforms).

The golden is the pure-Python planner's output (or the documented error it raises), recorded in
the golden process (:mod:`conformance.robustness.golden_process`), which never imports a planner
under test. The plan runs with the harness's own :func:`conformance.engine.runner.run_case`, or
in :mod:`conformance.robustness.isolation`'s worker process, so "diverges" means exactly what a
failing test means: any output byte (guard zones and stale tails included) differs, an input
changed, the two poisoned runs disagree, or the planner raised; in the worker also a crash or a
hang. Used by :mod:`conformance.robustness.fuzz`.

What an isolated planner does after a plan's last call returned -- a write into its tensors, its
worker's death, its process state changed, as ``pytest conformance/`` fails that case at its
teardown (:mod:`conformance.robustness.after_last_call`) -- is seen only at the worker's next
plan or when it is ended: :func:`after_last_call` and :func:`end_workers` hand those records over,
each with the plan (``owner``) it belongs to (tests/test_hostile23.py).
"""

from __future__ import annotations

from pathlib import Path

from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.case_model import Case, make_case
from conformance.engine.runner import ConformanceFailure, Target, resolve_device, run_case
from conformance.engine.verdict import FAILING, PROFILES, status_of
from conformance.robustness.golden_process import golden_process

UnknownPlanner = _registry.UnknownPlanner
availability = _registry.availability
builtin_names = _registry.builtin_names
get_planner = _registry.get_planner

_SCRATCH = Path("<fuzz>")


def with_golden(raw: dict) -> tuple[Case, dict]:
    """(the case, the case dict with ``expect``) for a plan without one: the golden is the
    pure-Python planner's output (or the documented error it raises), recorded in the golden
    process (:func:`conformance.robustness.golden_process.golden_process`), out of the planners'
    reach.

    Raises:
        GoldenError: the golden process died or could not record the plan.
    """
    raw = {**raw, "expect": golden_process().expectations(raw)[0]}
    return make_case(raw, _SCRATCH, "$"), raw


LATE = "after last call:"
"""How the failure text of a record of :func:`after_last_call` begins."""


def divergence(case: Case, target: Target, isolate: bool = False,
               timeout: float = 60.0, owner: object = None) -> str | None:
    """The harness's failure text for ``case`` on ``target``, or None when it conforms.

    With ``isolate`` the case runs in :mod:`conformance.robustness.isolation`'s worker process: a segfault, a
    CUDA error or a hang (``timeout`` seconds) is a divergence whose text starts ``crash:`` /
    ``timeout:`` and ends with the child's last lines of output; what the planner does after the
    case's last call is recorded as ``owner``'s (:func:`after_last_call`; None: not recorded).
    """
    if isolate or target.launch is None:  # an external planner runs in a worker, always
        from conformance.robustness.isolated_case import case_request, judge_observed
        from conformance.robustness.isolation import shared_pool

        answer = shared_pool().get(target.name).run(
            case_request(case, target.name, str(target.device)), timeout, owner=owner)
        if answer["status"] == "observed" and not answer.get("state_changed"):
            try:
                judge_observed(case, target.name, answer)
            except ConformanceFailure as exc:
                return _failing(exc, target.name)
            return None
        return "\n".join(x for x in (f"{answer['status']}: {answer.get('reason', '')}",
                                      answer.get("text", ""), answer.get("tail", "")) if x)
    try:
        run_case(case, target)
    except ConformanceFailure as exc:
        return _failing(exc, target.name)
    return None


def _late_text(record: dict) -> str:
    tail = record.get("tail") or ""
    return (f"{LATE} {record.get('status')} ({record.get('cause', '?')}): "
            f"{record.get('reason', '')}" + (f"\n{tail}" if tail else ""))


def after_last_call(planner: str) -> list[tuple[object, str]]:
    """(owner, failure text) of what ``planner``'s worker did after a case's last call, found
    since the last look (at its next case's start); [] for a planner with no worker."""
    from conformance.robustness import isolation

    pool = isolation._SHARED
    if pool is None or planner not in pool.workers:
        return []
    return [(d["owner"], _late_text(d)) for d in pool.workers[planner].take_deaths()
            if d.get("owner") is not None]


def end_workers() -> list[tuple[str, object, str]]:
    """End every worker of this process (each after its linger) and return (planner, owner,
    failure text) of what they did after their last cases' last calls."""
    from conformance.robustness import isolation

    pool = isolation._SHARED
    if pool is None:
        return []
    return [(d["planner"], d["owner"], _late_text(d)) for d in pool.close()
            if d.get("owner") is not None]


def _failing(exc: ConformanceFailure, planner: str) -> str | None:
    """The failure text of ``exc``, or None when every difference is one that a rule the planner
    is not judged on decides (``differs`` / ``not-wrapper``: spec section 8; built-in planners
    are judged on every rule, an external one on the contract, as ``pytest conformance/``)."""
    judged = PROFILES["all"] if planner in builtin_names() else PROFILES["contract"]
    if exc.verdict is not None and status_of(exc.verdict, judged)[0] not in FAILING:
        return None
    return str(exc)


def make_target(name: str) -> Target:
    """A :class:`Target` for planner ``name`` on its device.

    Raises:
        UnknownPlanner, PlannerUnavailable: with a one-line message.
    """
    a = availability(name)
    if ":" in name:  # never imported here: its cases run in the isolation worker
        if not a.available:
            raise UnknownPlanner(a.reason)
        return Target(name, None, resolve_device(a.device))
    launch = get_planner(name)
    return Target(name, launch, resolve_device(a.device))
