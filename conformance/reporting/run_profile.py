"""What a run's planners were judged on (spec section 8), read from its results file: the
``--profile`` its external planners were judged on, as the run recorded it in its fingerprint and
in its arguments, checked against each other and against the statuses the file holds (the file is
untrusted: a hand edit shows), and which kinds of planner (built-in, external) the run had."""

from __future__ import annotations

from conformance.corpus.case_file import printable
from conformance.corpus.corpus_subject import registry as _registry
from conformance.corpus.entries import PSEUDO_PLANNERS
from conformance.engine.verdict import DEFAULT_PROFILE, PROFILES


def run_profile(args) -> str | None:
    """The ``--profile`` a run was given, read from its recorded arguments (a results file's
    ``args``: ``--profile NAME`` or ``--profile=NAME``, the last one wins), or None."""
    found = None
    args = list(args or [])
    for i, arg in enumerate(args):
        if arg == "--profile" and i + 1 < len(args):
            found = args[i + 1]
        elif isinstance(arg, str) and arg.startswith("--profile="):
            found = arg.split("=", 1)[1]
    return found


def weaker_profile(old: dict, new: dict) -> str | None:
    """What ``report --compare`` says first when results ``new`` were judged on fewer rule kinds
    than ``old`` (a status NEW does not fail may be one OLD's profile fails), else None."""
    before, after = run_profile_of(old), run_profile_of(new)
    if set(PROFILES[after]) < set(PROFILES[before]):
        return (f"NEW judged on --profile {after}, fewer rules than OLD's --profile {before}: an "
                "item NEW does not fail there is no fix")
    return None


def run_profile_of(doc: dict) -> str:
    """The ``--profile`` an external planner of the run was judged on: the fingerprint's
    ``profile`` (recorded by the run), else the run's recorded arguments, else the default; a
    name that is no profile reads as the default (:data:`~conformance.engine.verdict.PROFILES`).
    Where the file disagrees with itself (:func:`profile_fault`), the profile that judges fewer
    rule kinds."""
    named = [n for n in (doc["fingerprint"].get("profile"),
                         run_profile(doc.get("args"))) if n in PROFILES]
    return min(named, key=lambda n: len(PROFILES[n])) if named else DEFAULT_PROFILE


_GIVEN_ONLY_WITHOUT = {"differs": "project", "not-wrapper": "wrapper"}
"""A judged status, and the rule kind whose judging would have failed it instead (spec section 8):
a run on a profile with that kind gives no such status."""


def profile_fault(doc: dict) -> str | None:
    """Why the profile a results file records cannot be the one its results were judged on, or
    None: its fingerprint and its arguments name different profiles, or a result's status is one
    that profile never gives (``differs`` where it judges project rules, ``not-wrapper`` where it
    judges the wrapper's check). The file is untrusted: a hand edit shows here."""
    recorded = doc["fingerprint"].get("profile")
    argued = run_profile(doc.get("args"))
    if recorded is not None and argued is not None and recorded != argued:
        return (f"the fingerprint's profile {printable(str(recorded))!r} is not the run's "
                f"--profile {printable(str(argued))!r}")
    profile = recorded or argued or DEFAULT_PROFILE
    kinds = PROFILES.get(profile, PROFILES[DEFAULT_PROFILE])
    for r in doc.get("results") or ():
        kind = _GIVEN_ONLY_WITHOUT.get(r.get("status"))
        if kind in kinds:
            return (f"a result reads {r['status']!r}, which --profile "
                    f"{printable(str(profile))} never gives (it judges {kind} rules)")
    return None


def ran_kinds(results) -> tuple[bool, bool]:
    """(whether a built-in planner ran, whether an external one did) in ``results`` (a results
    file's entries): a one-call subject's result (``subject``) is a built-in planner's, the
    shared validator's and allocator's rows and a case file's load fault are neither's, any
    other planner not built in is external. The terminal's "conformance profile" section
    (:mod:`conformance.plugin.profiles`) likewise names only the kinds that ran."""
    builtin = external = False
    for r in results or ():
        if not isinstance(r, dict):
            continue
        planner = r.get("planner")
        if r.get("subject") or planner in _registry.builtin_names():
            builtin = True
        elif isinstance(planner, str) and planner not in PSEUDO_PLANNERS:
            external = True
    return builtin, external


def judged_on(profile: str, results) -> str:
    """What the planners of a run were judged on, in one line (spec section 8): the built-in
    planners on every rule kind, the external ones on ``profile``'s; each named only when
    ``results`` (the run's entries, :func:`ran_kinds`) hold one of its planners, the built-in
    ones also when they hold neither kind (a run of the validator's rows alone)."""
    builtin, external = ran_kinds(results)
    parts = []
    if builtin or not external:
        parts.append(f"built-in planners on {'+'.join(PROFILES['all'])}")
    if external:
        parts.append(f"external planners on {'+'.join(PROFILES[profile])} (--profile {profile})")
    return ", ".join(parts)
