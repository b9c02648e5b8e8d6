"""Verdicts as data: what the judge saw, per element, with the rule that decides it (spec section 8).

:class:`Difference` is one thing a planner did that its case does not allow: an output element with
another value, an element never written, an element written that must not be, a write outside a
tensor, an input modified, a wrong error, no error, a raise on a valid step, a value returned. Each
names the rule that decides it (``contract``, a section-6 row key, the 0-d rule, ``wrapper``:
:mod:`conformance.corpus.rule_kinds`). :class:`VerdictData` holds every difference of one case
on one planner (a sample of them kept whole, every one counted by rule), the outcome of every
error step, and what the planner did in each section-6 situation the case reaches. It is plain
JSON (:meth:`VerdictData.to_json`), so it travels from the judge through pytest's reports (xdist
included) to the results file and every report; :func:`status_of` turns it into a status for a
profile, and nothing parses a report's text to decide one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from conformance.corpus.rule_kinds import CONTRACT, WRAPPER, kind_of

PROFILES = {"contract": ("contract",), "project": ("contract", "project"),
            "all": ("contract", "project", "wrapper")}
"""What each ``--profile`` judges: the rule kinds of spec section 8 whose differences fail a case.
Built-in planners are judged on ``all``; an external one on ``contract`` unless a run asks for more."""
DEFAULT_PROFILE = "contract"
"""What an external planner is judged on when a run names no ``--profile``."""
FAILING = ("fail", "oob")
"""Statuses :func:`status_of` gives a case that fails."""
KEPT = 64
"""Differences a verdict keeps whole (every one is counted in :attr:`VerdictData.by_rule`)."""
NEVER_A_RULE = ("never-written", "no-error", "outside", "input", "returned")
"""What spec section 8 (and section 6's last line) never leaves to a project rule or the wrapper:
an element that must be written and was not, a step that must raise and returned, an access
outside a tensor, an input modified, a value returned."""
OUTSIDE = "outside"


@dataclass
class Difference:
    """One difference, as data.

    Attributes:
        step, run: the step index (0-based) and the poison run (``a``, ``b``).
        what: ``value`` (another value), ``never-written`` (still what it held before the call),
            ``written`` (must keep what it held, changed), ``outside`` (a write outside the
            tensor), ``input`` (an input modified), ``error`` (another error), ``no-error`` (must
            raise, returned), ``raised`` (raised on a valid step), ``returned`` (returned a value).
        field: the output or input name, or ``error`` / ``return``.
        index: the tensor index (negative or >= length: outside it), None for a whole-step one.
        expected, got: the values (ints for elements; one line of text for errors).
        rule: the rule that decides it.
        evidence: why it proves an access outside a tensor (spec §6, last line), or None.
        inputs: {per-request input name: its value} of request ``index`` where the element is
            request ``index``'s (an output indexed by request, index < bs), else None.
        got_kind: for a raise (``error``, ``raised``), what kind of error it was: its class and,
            for a wrong error, the documented error id it carries or whose message it has
            (``ValueError [bs-range]``; ``[unidentified]``: none; :func:`error_kind` says how
            a kind that would read as the expected one is told apart); ``no error`` where only
            a project rule raises and the call returned; else None (and in older verdicts).
        error_parts: for a wrong error (``error``), which parts of the documented error (spec
            section 4) the raise got right: ``{"type", "message", "id"}``, each ``{"expected",
            "got", "same"}`` (the message's also ``first_difference``, a character index), from
            :func:`conformance.engine.error_parts.error_parts`; else None (and in older verdicts,
            and where the engine that judged it records none).
    """

    step: int
    run: str
    what: str
    field: str
    index: int | None
    expected: object
    got: object
    rule: str
    evidence: str | None = None
    inputs: dict[str, int] | None = None
    got_kind: str | None = None
    error_parts: dict | None = None


def error_kind(class_name: str, fake_builtin: bool, error_id: str | None,
               other_message: bool) -> str:
    """A wrong error's ``got_kind``: ``CLASS [ID]`` (``[unidentified]`` for no id), with what
    makes a raise that carries the expected class name and id still another error: a class of
    the built-in's name that is not a subclass of it (``ValueError (not the built-in) [dtype]``),
    the documented id with another message (``ValueError [dtype], another message``). Without
    them the kind would read as the documented error in every grouping of failures."""
    name = f"{class_name} (not the built-in)" if fake_builtin else class_name
    kind = f"{name} [{error_id or 'unidentified'}]"
    return f"{kind}, another message" if other_message else kind


@dataclass
class VerdictData:
    """Every difference of one case on one planner.

    Attributes:
        differences: the first :data:`KEPT` differences, in (run, step, field, index) order.
        by_rule: {rule: number of differences it decides}, over all of them.
        count: how many differences in all.
        error_steps: one ``{"step", "id", "ok"}`` per step that expects a documented error: whether
            the planner raised exactly it in every run with no other difference on that step (it
            wrote nothing, modified no input: spec section 4's checks come before any write).
        situations: {section-6 row key: what the planner did on the elements where that situation
            shows: ``rule`` (as the project's rule, no difference there), ``upstream`` (upstream's
            kernel's value, where spec section 6 says it), ``other`` (another value),
            ``never-written``, ``outside`` (an access outside a tensor seen there), ``raised``,
            ``raised-shared`` (raised on a step that shows other rows too)}.
        outside: the first proof of an access outside a tensor, or None.
        by_kind: {rule: {what: number of differences}}, over all of them: which kinds of
            difference each rule decides, the ones past :data:`KEPT` included.
    """

    differences: list[Difference] = field(default_factory=list)
    by_rule: dict[str, int] = field(default_factory=dict)
    count: int = 0
    error_steps: list[dict] = field(default_factory=list)
    situations: dict[str, str] = field(default_factory=dict)
    outside: str | None = None
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, diff: Difference) -> None:
        """Count ``diff`` (keep it whole while fewer than :data:`KEPT` are)."""
        if diff.what in NEVER_A_RULE:
            diff.rule = CONTRACT
        self.count += 1
        self.by_rule[diff.rule] = self.by_rule.get(diff.rule, 0) + 1
        kinds = self.by_kind.setdefault(diff.rule, {})
        kinds[diff.what] = kinds.get(diff.what, 0) + 1
        if diff.evidence and self.outside is None:
            self.outside = diff.evidence
        if len(self.differences) < KEPT:
            self.differences.append(diff)

    def kinds(self, rule: str | None = None) -> set[str]:
        """The kinds (``what``) of every difference ``rule`` decides (every rule's: None), past
        the kept ones too; a verdict written before ``by_kind`` existed answers from its kept
        differences."""
        if self.by_kind or not self.count:
            return {w for r, kinds in self.by_kind.items() if rule in (None, r) for w in kinds}
        return {d.what for d in self.differences if rule in (None, d.rule)}

    def rules(self) -> set[str]:
        """Every rule that decides a difference."""
        return set(self.by_rule)

    def to_json(self) -> dict:
        """Plain data (the results file's ``verdict``)."""
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict) -> VerdictData:
        """The verdict :meth:`to_json` wrote."""
        doc = dict(doc)
        diffs = [Difference(**d) for d in doc.pop("differences", [])]
        return cls(differences=diffs, **doc)


def status_of(verdict: VerdictData | None, judged: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The status of a case whose judge saw ``verdict``, for a planner judged on the rule kinds
    ``judged`` (``contract``, ``project``, ``wrapper``; spec section 8), and the rules behind it.

    * no difference: ``pass``;
    * an access outside a tensor: ``oob`` (never a rule's to excuse);
    * any difference a judged rule decides (the contract's always are): ``fail``;
    * else ``differs`` when a project rule decides one of them, otherwise ``not-wrapper``.
    """
    if verdict is None or not verdict.count:
        return "pass", ()
    rules = tuple(sorted(verdict.rules()))
    if verdict.outside:
        return "oob", rules
    failing = tuple(r for r in rules if r == CONTRACT or kind_of(r) in judged)
    if failing:
        return "fail", failing
    if any(kind_of(r) == "project" for r in rules):
        return "differs", rules
    return "not-wrapper", rules


def rule_name(rule: str) -> str:
    """A rule as reports name it: ``contract``, ``wrapper`` or ``project rule past-row``."""
    return rule if rule in (CONTRACT, WRAPPER) else f"project rule {rule}"


def rule_line(counts: Counter) -> str:
    """``decided by: contract (3), project rule past-row (1)`` for a report."""
    parts = []
    for rule, n in sorted(counts.items(), key=lambda kv: (kv[0] != CONTRACT, kv[0])):
        name = rule_name(rule)
        parts.append(f"{name} ({n})" if len(counts) > 1 or n > 1 else name)
    return "decided by: " + ", ".join(parts)


def describe(diff: dict) -> str:
    """One difference (a :class:`Difference` as plain data: a ``verdict.differences`` entry of a
    results file) in words: ``out_write_offsets[2]: got 0, expected 3``, then the inputs of its
    request where it has them: ``(request 2: prefix_lens 4, extend_seq_lens 1)``."""
    what, got, expected = diff["what"], diff["got"], diff["expected"]
    at = f"{diff['field']}[{diff['index']}]" if diff["index"] is not None else diff["field"]
    text = {
        "value": lambda: f"{at}: got {got}, expected {expected}",
        "never-written": lambda: f"{at}: never written (expected {expected}, got {got})",
        "written": lambda: f"{at}: written {got}, must keep what it held before the call "
                           f"({expected}: the poison, or an earlier step's value)",
        "outside": lambda: f"{at}: written outside the tensor",
        "input": lambda: f"input {at} modified: {expected} became {got}",
        "error": lambda: wrong_error_words(diff.get("error_parts")) or f"wrong error: got {got}",
        "no-error": lambda: f"no error raised: expected {expected}",
        "raised": lambda: f"raised on a valid step: {got}",
        "returned": lambda: f"returned {got}; a launcher returns None",
    }.get(what, lambda: f"{at}: {what}")()
    inputs = diff.get("inputs")
    if not inputs or not isinstance(inputs, dict):  # none, or a hand-edited file's other value
        return text
    return f"{text} (request {diff['index']}: {', '.join(f'{n} {v}' for n, v in inputs.items())})"


ERROR_PARTS = ("type", "message", "id")
"""The parts of a documented error (spec section 4: its built-in class, its exact message, its
catalog id), in the order :func:`wrong_error_words` names them."""


def _position(value) -> str:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return f" (first difference at character {value})" if ok else ""


def wrong_error_words(parts) -> str | None:
    """A wrong error in words from its ``error_parts`` (:class:`Difference`): which parts differed,
    which matched, and the expected and the raised value of each that differed, messages quoted
    as Python literals (one line, control characters escaped; each report then escapes the line
    for its own sink)::

        wrong error message (the type ValueError and the id [dtype] matched): expected message
        'kv-canary: ...', got '...' (first difference at character 42)

    None where ``parts`` is not that shape (an older verdict, a hand-edited results file) or no
    part differed."""
    if not isinstance(parts, dict) or not all(
            isinstance(parts.get(p), dict) and isinstance(parts[p].get("same"), bool)
            for p in ERROR_PARTS):
        return None
    kind, message, ident = (parts[p] for p in ERROR_PARTS)
    differed = [p for p in ERROR_PARTS if not parts[p]["same"]]
    if not differed:
        return None
    matched, said = [], []
    if kind["same"]:
        subclass = "" if kind.get("got") == kind.get("expected") else f" (a {kind.get('expected')})"
        matched.append(f"the type {kind.get('got')}{subclass}")
    elif kind.get("got") == kind.get("expected"):
        said.append(f"expected the built-in {kind.get('expected')}, got a class of that name that "
                    "is not a subclass of it")
    else:
        said.append(f"expected type {kind.get('expected')}, got {kind.get('got')}")
    if message["same"]:
        matched.append("the message")
    else:
        said.append(f"expected message {str(message.get('expected'))!r}, got "
                    f"{str(message.get('got'))!r}{_position(message.get('first_difference'))}")
    if ident["same"] and ident.get("got") is None:  # an optional id, not carried
        matched.append("the id (none carried)")
    elif ident["same"]:
        matched.append(f"the id [{ident.get('got')}]")
    else:
        said.append(f"expected id [{ident.get('expected')}], got "
                    f"[{ident.get('got') or 'unidentified'}]")
    head = "wrong error " + " and ".join(differed)
    if matched:
        head += f" ({' and '.join(matched)} matched)"
    return f"{head}: {'; '.join(said)}"
