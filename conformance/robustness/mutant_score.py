"""The mutation score of ``python -m conformance mutants`` (:mod:`conformance.robustness.mutants`):
each mutant's :class:`Verdict` per profile, read from a run's results file
(``reports/results.schema.json``), the :class:`Score` table and its readable report.

A mutant is **killed** under a profile when the run has at least one result of that mutant with a
failing status (:data:`KILLING`: fail, oob, crash, timeout, xpass); ``differs`` and
``not-wrapper`` never kill. A run counts only when pytest exited 0 or 1 with a complete file
(:func:`check_run`), and its kills only when the unmutated control passed every case
(:func:`check_control`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tabulate import tabulate

from conformance.engine.verdict import describe, rule_line

PROFILE_NAMES = ("contract", "project")
KILLING = frozenset({"fail", "oob", "crash", "timeout", "xpass"})
"""Results statuses that kill a mutant (``differs`` / ``not-wrapper`` / ``declared`` never do)."""


class MutantsError(RuntimeError):
    """A run that cannot be scored (pytest did not finish, the control failed, a bad name)."""


@dataclass
class Verdict:
    """One mutant under one profile.

    Attributes:
        killed: at least one result with a status in :data:`KILLING`; None when not run.
        statuses: count of each status its results got.
        differs: (case id, the rules that decide its differences, its first difference in words)
            of each result that read ``differs`` or ``not-wrapper``, from the result's verdict.
        inferred: the kill is taken from the contract run (a superset profile), not run again.
    """

    killed: bool | None = None
    statuses: Counter = field(default_factory=Counter)
    differs: list[tuple[str, str, str]] = field(default_factory=list)
    inferred: bool = False


def judge_results(doc: dict, planners: list[str]) -> dict[str, Verdict]:
    """Per planner name, its :class:`Verdict` from a results document (``results.schema.json``).

    A planner with no result in ``doc`` gets ``killed=False`` and no statuses (a narrowed run).
    """
    verdicts = {name: Verdict(killed=False) for name in planners}
    for result in doc.get("results", []):
        verdict = verdicts.get(result.get("planner"))
        if verdict is None:
            continue
        status = result.get("status")
        verdict.statuses[status] += 1
        if status in KILLING:
            verdict.killed = True
        elif status in ("differs", "not-wrapper"):
            verdict.differs.append((result.get("case") or result.get("id"),
                                    *_first_difference(result.get("verdict"))))
    return verdicts


def _first_difference(verdict: dict | None) -> tuple[str, str]:
    """(the rules that decide the differences, the first difference in words) of a result's
    verdict (``results.schema.json``'s ``verdict``: data, never the message's text); empty
    strings without one."""
    if not verdict:
        return "", ""
    rules = rule_line(Counter(verdict["by_rule"])) if verdict.get("by_rule") else ""
    first = describe(verdict["differences"][0]) if verdict.get("differences") else ""
    return rules, first


def check_run(doc: dict | None, exitstatus: int, profile: str) -> None:
    """Raise :class:`MutantsError` unless the run finished: pytest exited 0 or 1 and the results
    file says ``complete``."""
    if exitstatus not in (0, 1):
        raise MutantsError(f"the {profile} run did not finish: pytest exited {exitstatus}")
    if doc is None or not doc.get("complete"):
        raise MutantsError(f"the {profile} run left an incomplete results file")


def check_control(verdict: Verdict, profile: str) -> None:
    """Raise :class:`MutantsError` unless the unmutated planner passed every case it ran."""
    bad = {s: n for s, n in verdict.statuses.items() if s not in ("pass", "skip")}
    if bad or not verdict.statuses:
        raise MutantsError(f"the unmutated control planner did not pass every case under "
                           f"{profile} ({dict(verdict.statuses) or 'no results'}): no kill "
                           "means anything until it does")


@dataclass
class Score:
    """The table: per mutant key its reason (None = not equivalent) and its verdict per profile."""

    reasons: dict[str, str | None]
    verdicts: dict[str, dict[str, Verdict]]  # profile -> key -> verdict

    def kill_rate(self, profile: str) -> tuple[int, int]:
        """(killed, non-equivalent) under ``profile``."""
        live = [k for k, reason in self.reasons.items() if reason is None]
        return sum(1 for k in live if self.verdicts[profile][k].killed), len(live)

    def survivors(self, profile: str) -> list[str]:
        return [k for k, reason in self.reasons.items()
                if reason is None and not self.verdicts[profile][k].killed]

    def wrong_declarations(self) -> list[str]:
        """Equivalent mutants that the contract profile kills: the declaration is wrong."""
        return [k for k, reason in self.reasons.items()
                if reason is not None and self.verdicts["contract"][k].killed]

    def equivalent_survivors(self) -> list[str]:
        """Equivalent mutants that even the project profile does not kill."""
        return [k for k, reason in self.reasons.items()
                if reason is not None and self.verdicts["project"][k].killed is False]

    def failed(self) -> bool:
        return bool(self.survivors("contract") or self.wrong_declarations()
                    or self.equivalent_survivors())

    def to_json(self) -> dict:
        rates = {p: dict(zip(("killed", "non_equivalent"), self.kill_rate(p)))
                 for p in PROFILE_NAMES}
        return {"kill_rate": rates, "mutants": [
            {"mutant": key, "equivalent": reason, **{p: {
                "killed": self.verdicts[p][key].killed, "inferred": self.verdicts[p][key].inferred,
                "statuses": dict(self.verdicts[p][key].statuses),
                "differs": [dict(zip(("case", "rules", "first"), d))
                            for d in self.verdicts[p][key].differs]} for p in PROFILE_NAMES}}
            for key, reason in self.reasons.items()]}


def _cell(verdict: Verdict) -> str:
    if verdict.killed is None:
        return "-"
    if verdict.inferred:
        return "killed (contract)"
    return "killed" if verdict.killed else "SURVIVED"


def render(score: Score) -> str:
    """The readable report: the table, the kill rates, survivors, equivalents and wrong ones."""
    rows = [[key, _cell(score.verdicts["contract"][key]), _cell(score.verdicts["project"][key]),
             "equivalent" if reason else ""] for key, reason in score.reasons.items()]
    out = [tabulate(rows, headers=["mutant", "contract", "project", "declared"]), ""]
    equivalents = [k for k, reason in score.reasons.items() if reason]
    for profile in PROFILE_NAMES:
        killed, total = score.kill_rate(profile)
        rate = f"{100 * killed / total:.0f}%" if total else "-"
        line = f"kill rate --profile {profile}: {killed}/{total} non-equivalent ({rate})"
        if profile != "contract" and equivalents:  # declared equivalent under contract only
            also = sum(1 for k in equivalents if score.verdicts[profile][k].killed)
            line += f"; {also}/{len(equivalents)} equivalent under contract killed"
        out.append(line)
    for key in score.reasons:
        where = [p for p in PROFILE_NAMES if key in score.survivors(p)]
        if where:
            out += ["", f"survivor: {key} (survives --profile {' and '.join(where)})"]
            for profile in where:
                out += [f"  under {profile}:"] + ["  " + ln for ln in
                                                   _why(score.verdicts[profile][key])]
    for key in score.wrong_declarations():
        out += ["", f"WRONG DECLARATION: {key} is declared equivalent but the contract profile "
                    f"kills it"] + _why(score.verdicts["contract"][key])
    for key in score.equivalent_survivors():
        out += ["", f"equivalent mutant not killed under project: {key}"] + \
            _why(score.verdicts["project"][key])
    equivalent = [(k, r) for k, r in score.reasons.items() if r]
    if equivalent:
        out += ["", "equivalent under contract:"] + [f"  {k}: {r}" for k, r in equivalent]
    return "\n".join(out)


def _why(verdict: Verdict) -> list[str]:
    lines = ["  statuses: " + (", ".join(f"{s} {n}" for s, n in sorted(verdict.statuses.items()))
                               or "no results")]
    if not verdict.killed and verdict.statuses and set(verdict.statuses) <= {"pass", "skip"}:
        lines.append("  no case reached its bug (every case passed)")
    for case, rules, first in verdict.differs:
        lines.append(f"  {case}: {first}" + (f" ({rules})" if rules else ""))
    return lines
