"""The stream check (hostile planners; GPU only): does a planner order its work after the
caller's *current* stream, or does it only work when the inputs were written on the default stream?

Spec section 1: the planner runs every step, inside CUDA-graph capture, on the server's stream, so
it must enqueue on ``torch.cuda.current_stream()``. :func:`busy_stream_divergence` builds the first
step of a launcher case with the runner's step builder (:mod:`conformance.engine.steps`), overwrites the per-request inputs
with zeros (every lane padding), then on a fresh side stream: sleeps ``sleep_cycles`` GPU cycles
(``torch.cuda._sleep``), writes the true inputs back, and calls the planner with that stream
current. A planner that waits on the current stream sees the true inputs; one that reads on another
stream (the default stream, or a private one) reads the zeros and its outputs differ from the golden.
"""

from __future__ import annotations

import torch

from conformance.corpus.case_model import Case
from conformance.engine.runner import Target
from conformance.engine.steps import first_step
from conformance.corpus.subject import subject_of
from conformance.corpus.corpus_subject import contract as _contract

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES

SLEEP_CYCLES = 200_000_000
"""About 0.1 s on an H200 (1.98 GHz): far longer than any launch, so a race always shows."""


class StreamCheckUnavailable(RuntimeError):
    """The check needs a CUDA device; the message says why it cannot run."""


def busy_stream_divergence(case: Case, target: Target,
                           sleep_cycles: int = SLEEP_CYCLES) -> str | None:
    """Run the first step of launcher ``case`` on ``target`` with its inputs written late on the
    caller's side stream (see the module docstring).

    Returns:
        None when every defined output region equals the golden, else one line naming the first
        field that differs.

    Raises:
        StreamCheckUnavailable: ``target.device`` is not a CUDA device.
    """
    device = target.device
    if device.type != "cuda":
        raise StreamCheckUnavailable(f"the stream check needs a CUDA device, {target.name} runs "
                                     f"on {device}")
    built = first_step(case, device)
    kwargs = built.kwargs
    truth = {name: kwargs[name].clone() for name in REQUEST_INPUT_NAMES}
    for name in REQUEST_INPUT_NAMES:
        kwargs[name].zero_()
    torch.cuda.synchronize(device)
    side = torch.cuda.Stream(device)
    with torch.cuda.stream(side):
        torch.cuda._sleep(sleep_cycles)
        for name in REQUEST_INPUT_NAMES:
            kwargs[name].copy_(truth[name])
        target.launch(**kwargs)
    torch.cuda.synchronize(device)
    for name, want in subject_of(case).golden_values(built.step.expect).items():
        got = built.buffers[name].view[: len(want)].tolist()
        if got != want:
            first = next(i for i, (a, b) in enumerate(zip(want, got)) if a != b)
            return (f"{name}[{first}]: expected {want[first]}, got {got[first]} with the inputs "
                    f"written on a busy side stream (current stream not awaited)")
    return None
