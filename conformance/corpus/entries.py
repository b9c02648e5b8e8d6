"""What a case calls (its ``entry``) and the planner-column names of results that belong to no
planner. One place for these names: the pytest plugin, the results writer, the rerun command and
the report all import them.

* ``launcher`` cases run on every planner under test;
* ``validator`` cases call the shared inner validator (impls/<subject>/validate.py) directly, once, in the
  column :data:`VALIDATOR`;
* ``allocate`` cases call the buffer allocator (impls/<subject>/buffers.py), once, in the column
  :data:`ALLOCATOR`;
* a case file that fails to load is one result in the column :data:`LOAD`.
"""

from __future__ import annotations

import keyword

VALIDATOR, ALLOCATOR, LOAD = "validator", "allocator", "load"
SHARED_PLANNERS: dict[str, str] = {"validator": VALIDATOR, "allocate": ALLOCATOR}
"""Entry of a case that reaches shared code, not a planner -> the column its result is in."""
PSEUDO_PLANNERS: tuple[str, ...] = (VALIDATOR, ALLOCATOR, LOAD)
"""Planner-column names of results that belong to no planner, in report order: cases that reach
only the shared validator, the buffer allocator's errors, and faults of case files found at load
time."""


def planner_name_error(name: str) -> str | None:
    """Why ``name`` is not a planner name, or None when it is one: a built-in name (letters, digits,
    ``-``) or ``pkg.mod:attr`` (dotted Python identifiers, no keyword), the only forms that are
    ever imported, written into a repro script's import line or into a rerun command."""
    module, colon, attr = name.partition(":")
    if not colon:
        if name and all(c.isascii() and (c.isalnum() or c == "-") for c in name):
            return None
        if "/" in name or name.endswith(".py"):
            return (f"planner name {name!r} is a file path; a planner is named by its module and "
                    f"callable, module.path:callable{_path_hint(name)}")
        module, _, attr = name.rpartition(".")
        hint = (f" (a callable is named with ':': {module}:{attr} when {attr} is the callable, "
                f"{name}:<callable> when {name} is the module)" if module and attr else "")
        return (f"planner name {name!r} is neither a built-in name (letters, digits, '-') nor "
                f"module.path:callable{hint}")
    parts = [*module.split("."), *attr.split(".")]
    if all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return None
    return (f"planner {name!r} is not module.path:callable (dotted Python identifiers on each "
            "side of one ':')")


def _path_hint(path: str) -> str:
    """For a relative path such as ``mypkg/kernels.py``: the module name it stands for and the
    folder to name in CONFORMANCE_PLANNER_PATH; nothing for a path that reads as no module."""
    parts = [p for p in path.removesuffix(".py").split("/") if p not in ("", ".")]
    if path.startswith("/") or not parts or not all(
            p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        return " (the file's folders from the one named in CONFORMANCE_PLANNER_PATH, dotted)"
    holder = parts[0] if len(parts) > 1 else f"{parts[0]}.py"
    return (f" ({'.'.join(parts)}:<callable>, with the folder that holds {holder} in "
            "CONFORMANCE_PLANNER_PATH)")
