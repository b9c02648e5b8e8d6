"""A loaded, checked case as data: :class:`Case` and its launches, :class:`Step`, built from a
case dict that has passed the schema and the load-time checks by :func:`make_case`.

The fields are those of ``cases/<subject>/schema.json`` (``cases/<subject>/README.md`` says what
each means); a case's ``pins`` is one of :data:`~conformance.corpus.rule_kinds.PINS` (spec
section 8), :data:`DEFAULT_PINS` when the file says nothing; ``out_of_contract`` is computed from
its values by the corpus subject's ``hazards.out_of_contract`` (spec section 6). Loading files is
:mod:`conformance.corpus.loader`'s.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from conformance.corpus.arrays import spec_len
from conformance.corpus.case_file import display_path
from conformance.corpus.corpus_subject import NAME as DEFAULT_SUBJECT
from conformance.corpus.corpus_subject import contract as _contract
from conformance.corpus.corpus_subject import hazards as _hazards

REQUEST_INPUT_NAMES = _contract.REQUEST_INPUT_NAMES
out_of_contract = _hazards.out_of_contract

DEFAULT_PINS = "contract"
"""A case file that says nothing pins the contract (``cases/<subject>/schema.json``)."""


@dataclass(frozen=True)
class Step:
    """One launch of a case: its inputs (case inputs merged with the step's), overrides, expectation."""

    inputs: dict
    overrides: list
    expect: dict

    @property
    def bs(self) -> int:
        return spec_len(self.inputs.get(REQUEST_INPUT_NAMES[0], []))

    @property
    def error(self) -> dict | None:
        return self.expect.get("error")


@dataclass(frozen=True)
class Case:
    """A loaded, checked case. ``path`` and ``json_path`` locate it for error messages;
    ``subject`` names the kernel it pins (default the corpus subject); ``out_of_contract`` lists the rows
    of spec section 6 its values reach (computed by the corpus subject's ``hazards.out_of_contract``;
    non-empty only on cases tagged ``hazard``)."""

    id: str
    description: str
    tags: tuple[str, ...]
    source: dict
    golden_check: str
    entry: str
    inputs: dict
    steps: tuple[Step, ...]
    derived: dict
    allocate: dict
    xfail: tuple[dict, ...]
    needs_review: bool
    path: Path
    json_path: str
    raw: dict = field(repr=False, compare=False)
    subject: str = DEFAULT_SUBJECT
    out_of_contract: tuple[str, ...] = ()
    """Rows of spec section 6 this case's values reach (the corpus subject's
    ``harness/hazards.py`` ROWS)."""
    pins: str = DEFAULT_PINS
    """What the case pins (spec section 8): one of :data:`~conformance.corpus.rule_kinds.PINS`."""

    @property
    def location(self) -> str:
        return f"{display_path(self.path)}{'' if self.json_path == '$' else ' ' + self.json_path}"

    @property
    def write_req_capacity(self) -> int:
        """Seed-buffer length: the case's, or the largest bs of its steps."""
        given = self.inputs.get("write_req_capacity")
        return given if given is not None else max(step.bs for step in self.steps)


def case_digest(case: Case) -> str:
    """The SHA-256 of what ``case`` is: its case dict as loaded (a group's defaults merged in), as
    JSON with sorted keys and each number as the file writes it. Two cases of one id, file and
    JSON path with other content (a copy of the checkout whose case files were edited, or an
    older corpus) have other digests; the results file keeps it per record (``case_digest``), and
    ``report --bench`` counts a record for a corpus case only where it is that case's
    (:mod:`conformance.reporting.corpus_coverage`)."""
    text = json.dumps(case.raw, sort_keys=True, separators=(",", ":"), default=str,
                      ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def make_case(raw: dict, path: Path, json_path: str) -> Case:
    """The :class:`Case` of one case dict ``raw`` that has passed the schema and the load-time
    checks (group defaults already merged), located at ``path`` / ``json_path``. Used by the loader,
    by fuzz (a generated plan) and by the isolation worker (a case sent as JSON)."""
    inputs = raw.get("inputs", {})
    if "steps" in raw:
        steps = tuple(Step({**inputs, **s.get("inputs", {})}, s.get("overrides", []), s["expect"])
                      for s in raw["steps"])
    else:
        steps = (Step(inputs, raw.get("overrides", []), raw["expect"]),)
    case = Case(
        id=raw["id"], description=raw["description"], tags=tuple(raw["tags"]),
        source=raw["source"], golden_check=raw["golden_check"],
        entry=raw.get("entry", "launcher"), inputs=inputs, steps=steps,
        derived=raw.get("derived", {}), allocate=raw.get("allocate", {}),
        xfail=tuple(raw.get("xfail", ())), needs_review=raw.get("needs_review", False),
        path=path, json_path=json_path, raw=raw, subject=raw.get("subject", DEFAULT_SUBJECT),
        pins=raw.get("pins", DEFAULT_PINS),
    )
    return replace(case, out_of_contract=tuple(out_of_contract(case)))
