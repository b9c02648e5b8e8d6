"""What an isolated case's worker answered, as the item's status and its readable report (the
options and the run's isolation: :mod:`conformance.plugin.isolation_options`)."""

from __future__ import annotations

from conformance.corpus.text import terminal_text
from conformance.engine.rerun import RUN_OPTIONS
from conformance.engine.runner import case_dir_arg, rerun_command
from conformance.robustness.isolation import DEFAULT_TIMEOUT, IsolationFailure
from conformance.robustness.worker_process import LINGER_SECONDS
from conformance.robustness.sanitizer import AccessError


RERUN_ISOLATED = "rerun_isolated"
"""The user property of an item whose failure report's rerun line adds ``--isolate``
(:func:`failure_report`, :mod:`conformance.plugin.worker_deaths`): the results file's ``rerun``
adds it too (:mod:`conformance.plugin.results_writer`)."""


ISOLATE = " --isolate"
"""What an isolated failure's rerun command adds to the case's rerun command."""


def isolated_rerun(item) -> str:
    """The command that reruns ``item``'s case (``.case``, ``.planner``) isolated, as a failure
    that needs isolation to be seen again prints it."""
    case = item.case
    return rerun_command(case.id, item.planner, case_dir_arg(case)) + ISOLATE


def carry_isolation_options(config) -> list[str]:
    """Set :data:`conformance.engine.rerun.RUN_OPTIONS` to the run's isolation options that
    differ from their defaults (``--isolate-timeout``, ``--isolate-linger``, ``--sandbox``,
    ``--sanitize``): a case that timed out after 5 s, or an access error under memcheck, is
    rerun under the same limits. Returns them."""
    options = []
    for flag, name, default in (("--isolate-timeout", "isolate_timeout", DEFAULT_TIMEOUT),
                                ("--isolate-linger", "isolate_linger", LINGER_SECONDS),
                                ("--sandbox", "sandbox", "auto"), ("--sanitize", "sanitize", None)):
        value = config.getoption(name)
        if value != default:
            options += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    RUN_OPTIONS[:] = options
    return options


def status_of(answer: dict) -> str:
    """The item's status from a worker's answer: ``observed`` (to be judged), ``oob``,
    ``crash``, ``timeout``, ``state`` (torch's global state changed), ``case-error`` or
    ``error``. An access error the sanitizer reported wins over everything (it is the cause of
    a crash or a stray value), then crash / timeout, then a change of process-global torch
    state, then the case's own outcome."""
    if answer.get("access_errors"):
        return "oob"
    if answer["status"] in ("crash", "timeout"):
        return answer["status"]
    if answer.get("state_changed"):
        return "state"
    return answer["status"]


def failure_report(item, status: str, answer: dict) -> str:
    """The readable report of an isolated item (``.case``, ``.planner``) that got ``status``
    from the worker's ``answer``: head line, torch state changes, sanitizer lines, the worker's
    text and last lines of output, and the rerun command."""
    case = item.case
    heads = {"oob": "oob (sanitizer: access error)",
             "case-error": "error: the case's inputs cannot be built (the case's fault, not the "
                           "planner's)",
             "state": "failed (isolated): changed process-global torch state, or its caller's "
                      "tensor objects, which the caller and every later op of its process see; "
                      "the worker was replaced"}
    head = heads.get(status, f"{status} (isolated)")
    lines = [f"{case.id}[{item.planner}]  ({case.location})", f"  {case.description}",
             f"  {head}" + (f": {answer['reason']}" if answer.get("reason") else "")]
    lines += [f"    {change}" for change in answer.get("state_changed") or ()]
    for error in answer.get("access_errors") or ():
        error = AccessError(**error)
        lines.append(f"  {error.summary()}")
        lines += [f"    {ln.strip()}" for ln in error.lines or ()]
    if answer.get("text"):
        lines += ["  " + ln for ln in answer["text"].rstrip().splitlines()]
    if answer.get("tail"):
        lines += ["  last lines of output:"] + ["    " + ln for ln in answer["tail"].splitlines()]
    lines.append(f"  rerun: {isolated_rerun(item)}")
    return "\n".join(lines)


def repr_failure(original, excinfo, style=None):
    if isinstance(excinfo.value, IsolationFailure):
        return terminal_text(str(excinfo.value))  # the child's text: escaped and cut
    return original(excinfo, style)
