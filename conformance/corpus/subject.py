"""The kernel subject a case pins: what its outputs are, which elements of each a golden defines,
how long each output buffer is and how its shared inputs (table, LUT) are generated. Everything
that knows the corpus subject's outputs (the load-time checks, the step builder, the judge,
``record``, the stream check) reaches them through :func:`subject_of`, built from the subject's
contract (:mod:`conformance.corpus.corpus_subject`).

A case names its subject in the case file's ``subject`` field (default: the corpus subject's
``NAME``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from conformance.corpus.arrays import evaluate
from conformance.corpus.generators import DEFAULT_TABLE, build_lut, build_table
from conformance.corpus.corpus_subject import constants as _constants
from conformance.corpus.corpus_subject import NAME as DEFAULT_SUBJECT
from conformance.corpus.corpus_subject import contract as _contract

SCRATCH_MIN_LEN = _constants.SCRATCH_MIN_LEN
LUT_NAME = _contract.LUT_NAME
OUTPUT_NAMES = _contract.OUTPUT_NAMES
REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
SCALAR_OUTPUT_NAMES = _contract.SCALAR_OUTPUT_NAMES
TABLE_NAME = _contract.TABLE_NAME
output_lengths = _contract.output_lengths

golden_lengths = _contract.golden_lengths


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
        buffer_lengths: case -> {output name: length of its tensor}.
        build_tables: (case, device) -> {argument name: tensor or None}: the inputs every step of
            the case shares, from the case's generators (the table and the LUT).
        request_inputs: the per-request input names (the contract's ``request`` role: one int64
            per request r, length bs, new every step), in the launcher's order.
    """

    name: str
    outputs: tuple[str, ...]
    scalar_outputs: tuple[str, ...]
    defined_lengths: Callable[[int], dict[str, int]]
    buffer_lengths: Callable
    build_tables: Callable
    request_inputs: tuple[str, ...] = ()

    def by_request(self, output: str) -> bool:
        """Whether element r of ``output`` is request r's (for r < bs): its defined region grows
        by exactly one element per request (``defined_lengths``), as a prefix-sum or a per-request
        output's does; a scalar's, a LUT's or a table's does not."""
        return self.defined_lengths(2)[output] - self.defined_lengths(1)[output] == 1

    def request_rows(self, inputs: Mapping, bs: int) -> dict[str, list[int]]:
        """{per-request input name: its values for requests 0..bs-1} of a step's ``inputs`` (the
        loaded step's, array specs evaluated; an absent input gives an empty row)."""
        return {name: evaluate(inputs.get(name, []))[:bs] for name in self.request_inputs}

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


def _buffer_lengths(case) -> dict[str, int]:
    """The contract's output lengths (spec section 3) for the case's ``write_req_capacity``
    (default: its largest bs), the scratch ``scratch_len`` when the case gives one."""
    return output_lengths(case.write_req_capacity, case.inputs.get("scratch_len", SCRATCH_MIN_LEN))




def _tables(case, device: torch.device) -> dict[str, torch.Tensor | None]:
    """The table and the LUT (None when the case has none), built by
    :mod:`conformance.corpus.generators` on ``device``."""
    return {TABLE_NAME: build_table(case.inputs.get(TABLE_NAME, DEFAULT_TABLE), device),
            LUT_NAME: build_lut(case.inputs.get("lut"), device)}


CORPUS_SUBJECT = Subject(DEFAULT_SUBJECT, OUTPUT_NAMES, SCALAR_OUTPUT_NAMES, golden_lengths,
                         _buffer_lengths, _tables, REQUEST_INPUT_NAMES)
"""The corpus subject's outputs (its contract's sections 3 and 5)."""

SUBJECTS: dict[str, Subject] = {CORPUS_SUBJECT.name: CORPUS_SUBJECT}
"""Every registered subject, by the name case files use."""


def subject_of(case) -> Subject:
    """The :class:`Subject` of ``case`` (its ``subject`` attribute, default the corpus subject).

    Raises:
        UnknownSubject: the case names a subject that is not registered.
    """
    return get_subject(getattr(case, "subject", None))


def get_subject(name: str | None) -> Subject:
    """The :class:`Subject` registered as ``name`` (None: the default, the corpus subject).

    Raises:
        UnknownSubject: no subject of that name is registered.
    """
    name = name or DEFAULT_SUBJECT
    try:
        return SUBJECTS[name]
    except KeyError:
        raise UnknownSubject(f"unknown subject {name!r}; known: {', '.join(SUBJECTS)}") from None
