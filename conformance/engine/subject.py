"""The kernel subject a case pins: what its outputs are, which elements of each a golden defines,
and how its shared inputs are generated. Everything in the engine that knows the offsets planner's
outputs reaches them through :func:`subject_of`, so that a second kernel can be added as a second
:class:`Subject` without touching the runner, the judge or ``record``.

A case names its subject in the case file's ``subject`` field (default ``offsets-planner``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from conformance.corpus.arrays import evaluate
from conformance.engine.inputs import allocate_outputs, build_tables
from impls.contract import OUTPUT_NAMES, SCALAR_OUTPUT_NAMES

DEFAULT_SUBJECT = "offsets-planner"
"""The subject of a case file that names none."""


class UnknownSubject(LookupError):
    """A case names a subject no :class:`Subject` is registered for."""


@dataclass(frozen=True)
class Subject:
    """One kernel's view of its outputs.

    Attributes:
        name: the case files' ``subject`` value.
        outputs: output argument names, in the launcher's order.
        scalar_outputs: the outputs whose golden is one int (a one-element tensor), not a list.
        defined_lengths: bs -> {output name: number of leading elements a golden defines}.
        build_tables: (case, device) -> the inputs shared by every step (for the offsets planner
            ``(req_to_token, LUT or None)``, from the case's generators, inside guarded allocations).
        allocate_outputs: (case, device) -> {output name: guarded output buffer}.
    """

    name: str
    outputs: tuple[str, ...]
    scalar_outputs: tuple[str, ...]
    defined_lengths: Callable[[int], dict[str, int]]
    build_tables: Callable
    allocate_outputs: Callable

    def golden_values(self, golden: Mapping) -> dict[str, list[int]]:
        """{output name: the values a step's golden (``expect``) writes at elements 0..n-1}; array
        specs evaluated, a scalar output as a one-element list."""
        return {name: [golden[name]] if name in self.scalar_outputs else evaluate(golden[name])
                for name in self.outputs}

    def read_golden(self, views: Mapping[str, torch.Tensor], bs: int) -> dict[str, object]:
        """A golden (``expect``) read from filled output tensors: each output's defined region as a
        list, a scalar output as an int."""
        lengths = self.defined_lengths(bs)
        return {name: int(views[name][0]) if name in self.scalar_outputs
                else views[name][: lengths[name]].tolist() for name in self.outputs}


def _offsets_planner_lengths(bs: int) -> dict[str, int]:
    """Spec section 5: scratch[:bs+1] and write_offsets[:bs+1] (exclusive prefix sums and their
    totals), seeds[:bs], and element 0 of each scalar output; nothing else is written."""
    ends = dict(zip(OUTPUT_NAMES[:3], (bs + 1, bs + 1, bs)))
    return {name: ends.get(name, 1) for name in OUTPUT_NAMES}


OFFSETS_PLANNER = Subject(DEFAULT_SUBJECT, OUTPUT_NAMES, SCALAR_OUTPUT_NAMES, _offsets_planner_lengths,
                          build_tables, allocate_outputs)
"""The offsets planner of spec sections 3 and 5."""

SUBJECTS: dict[str, Subject] = {OFFSETS_PLANNER.name: OFFSETS_PLANNER}
"""Every registered subject, by the name case files use."""


def subject_of(case) -> Subject:
    """The :class:`Subject` of ``case`` (its ``subject`` attribute, default ``offsets-planner``).

    Raises:
        UnknownSubject: the case names a subject that is not registered.
    """
    name = getattr(case, "subject", None) or DEFAULT_SUBJECT
    try:
        return SUBJECTS[name]
    except KeyError:
        raise UnknownSubject(f"unknown subject {name!r}; known: {', '.join(SUBJECTS)}") from None
