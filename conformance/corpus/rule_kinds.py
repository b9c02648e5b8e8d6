"""What kind of rule decides an element (spec section 8 of every subject): the contract's, the
wrapper's check, or a project rule (any other rule key: a section-6 row, the 0-d rule, a one-call
subject's own rules). Results files, manifests and statuses read the kind; nothing here names a
subject."""

from __future__ import annotations

CONTRACT = "contract"
"""The rule of the launcher contract: what any launcher, upstream's included, is held to."""
WRAPPER = "wrapper"
"""A check upstream makes in its wrapper, not in its launcher."""
PINS = (CONTRACT, "project", WRAPPER)
"""What a case may pin (spec section 8): the launcher contract (the documented errors, nothing
read or written outside a tensor), a project rule (section 6's "this project" column, the 0-d
rule) or the wrapper's check (a check upstream makes in its wrapper)."""


def kind_of(rule: str) -> str:
    """``contract``, ``wrapper`` or ``project`` (any other rule key)."""
    return rule if rule in (CONTRACT, WRAPPER) else "project"
