"""Where ``python -m conformance fuzz`` runs its plans (:mod:`conformance.robustness.fuzz`): in
this process, or spread over ``--jobs`` processes.

Plans run in chunks of :data:`CHUNK` (:func:`check_plans`). With several jobs, chunk ``k`` goes to
job ``k % jobs``, a ``spawn`` process of its own (CUDA cannot be used in a forked child) that keeps
its isolation workers from chunk to chunk and ends them once, after its last chunk: what a
worker did after its last plan's last call is read then, after the linger, and handed back as
one more chunk. Ending them after every chunk instead cost a linger and a worker start per chunk
(100 isolated plans on two jobs took longer than on one). Results come back in chunk order,
streamed: memory does not grow with ``n``.
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Iterator
from multiprocessing.connection import wait

from conformance.engine.runner import Target
from conformance.robustness.plan_divergence import (after_last_call, divergence, end_workers,
                                                    make_target, with_golden)
from conformance.robustness.probe_sandbox import use_for_probes
from conformance.robustness.random_plans import random_plan

CHUNK = 25
"""Plans per chunk (what one job runs between two looks from the parent)."""

Failures = list[tuple[int, dict[str, str]]]
"""[(plan index, {planner: failure text} for the planners that diverged)]."""


@functools.cache
def targets(planners: tuple[str, ...]) -> list[Target]:
    """The :class:`conformance.engine.runner.Target` of each planner, made once per process."""
    return [make_target(name) for name in planners]


def _with_late(out: Failures, late: list[tuple[str, object, str]]) -> Failures:
    """``out`` with each (planner, owner plan, text) of ``late`` added to its plan's entry, or
    as an entry of its own for a plan of an earlier chunk."""
    mine = dict(out)
    for name, owner, text in late:
        if owner in mine:
            mine[owner].setdefault(name, text)
        else:
            out.append((owner, {name: text}))
    return out


def check_plans(planners: tuple[str, ...], seed: int, indices: list[int], isolate: bool = False,
                timeout: float = 60.0, end: bool = False) -> Failures:
    """Run plans ``indices`` of ``seed`` on every planner (in this process); ``end``: end the
    workers afterwards (each after its linger), so that nothing of the last plan goes unread.

    Returns:
        [(plan index, {planner: failure text} for the planners that diverged)], in index order;
        then, for a plan of an earlier call, what a planner did after its last call (found
        only now: :func:`conformance.robustness.plan_divergence.after_last_call`).
    """
    out, late = [], []
    for index in indices:
        case, _ = with_golden(random_plan(seed, index))
        failures = {}
        for target in targets(planners):
            failure = divergence(case, target, isolate, timeout, owner=index)
            if failure is not None:
                failures[target.name] = failure
            late += [(target.name, owner, text) for owner, text in after_last_call(target.name)]
        out.append((index, failures))
    if end:
        late += end_workers()
    return _with_late(out, late)


def _job(conn) -> None:
    """One job's process: run each chunk it is sent (``(planners, seed, indices, isolate,
    timeout)``) and send back ``("ok", failures)``; on ``None``, end its workers and send back
    what they did after their last calls; an exception is sent back as ``("error", exc)``."""
    use_for_probes()
    try:
        while (task := conn.recv()) is not None:
            conn.send(("ok", check_plans(*task)))
        conn.send(("ok", _with_late([], end_workers())))
    except BaseException as exc:  # noqa: BLE001 (handed to the parent, raised there)
        conn.send(("error", exc))


def _receive(conn, process) -> Failures:
    """The next reply of a job, raised again where it is an exception.

    Raises:
        ChildProcessError: the job's process ended without replying (a planner run in it, not
            isolated, may have killed it).
    """
    wait([conn, process.sentinel])
    if not conn.poll():
        process.join(1)
        raise ChildProcessError(f"fuzz: a job's process ended (exit code {process.exitcode}) "
                                f"before it replied")
    kind, value = conn.recv()
    if kind == "error":
        raise value
    return value


def checked(planners: tuple[str, ...], n: int, seed: int, jobs: int, isolate: bool,
            timeout: float) -> Iterator[Failures]:
    """:func:`check_plans` over plans 0..n-1 in chunks of :data:`CHUNK`, in order, streamed.
    ``jobs`` > 1: over that many processes (module docstring), at most two chunks in flight per
    job, then one last list per job of what its workers did after their last calls (only entries
    of plans already yielded). Ending the generator early stops the jobs.

    Raises:
        ChildProcessError: a job's process ended without replying; what a job raised.
    """
    count = -(-n // CHUNK)

    def chunk(k: int) -> list[int]:  # made when sent: memory does not grow with n
        return list(range(k * CHUNK, min((k + 1) * CHUNK, n)))

    if jobs <= 1:
        for k in range(count):
            yield check_plans(planners, seed, chunk(k), isolate, timeout)
        return
    context = multiprocessing.get_context("spawn")
    pipes = [context.Pipe() for _ in range(min(jobs, count))]
    processes = [context.Process(target=_job, args=(child,), daemon=True) for _, child in pipes]
    for process in processes:
        process.start()
    finished = False
    try:
        sent = 0
        for k in range(count):
            while sent < count and sent < k + 2 * len(pipes):
                pipes[sent % len(pipes)][0].send((planners, seed, chunk(sent), isolate, timeout))
                sent += 1
            yield _receive(pipes[k % len(pipes)][0], processes[k % len(pipes)])
        for parent, _ in pipes:
            parent.send(None)
        for (parent, _), process in zip(pipes, processes):
            late = _receive(parent, process)
            if late:
                yield late
        finished = True
    finally:
        for process in processes:  # done: joined; stopped early or failed: killed
            process.join(5 if finished else 0)
            if process.exitcode is None:
                process.kill()
                process.join()
