"""Where an external planner's module is found, and why its folder stays off the judge's path.

A planner's folder is the entrant's: whatever it holds, or whatever the planner's code writes
there while the probe or a worker imports it, is imported by any process that has the folder on
its ``sys.path`` ahead of the library it shadows (``PYTHONPATH`` stands ahead of the standard
library and site-packages): a ``sortedcontainers.py`` there runs inside pytest when hypothesis's
plugin imports it, a ``tabulate.py`` inside the report. So the folder goes in
``$CONFORMANCE_PLANNER_PATH`` (:data:`impls.source_file.PLANNER_PATH_ENV`): the processes that
import the planner get it last on theirs (:func:`impls.source_file.child_pythonpath`), the judge
finds the planner's source there by reading (:func:`find_planner_source`), and a corpus run
whose external planner would be imported from a ``PYTHONPATH`` folder is refused
(:func:`judge_path_fault`).
"""

from __future__ import annotations

import os
import sys

from impls.source_file import PLANNER_PATH_ENV, lookup, origin_of, planner_folders
from impls.folder_lookup import lookup_in
from impls.source_imports import import_root

__all__ = ["PLANNER_PATH_ENV", "add_to_this_process", "find_planner_source", "judge_path_fault"]


def find_planner_source(module_name: str) -> tuple[str | None, str | None]:
    """The source file importing ``module_name`` loads in a planner's child: found by this
    process's import system (:func:`impls.source_file.lookup`), else in the planner folders
    (:func:`impls.folder_lookup.lookup_in`, nothing imported). ``(path, None)``, ``(None, None)``
    (not found) or ``(None, why)`` (lookup refused)."""
    found = lookup(module_name)
    if found == (None, None) and planner_folders():
        return lookup_in(module_name, planner_folders())
    return found


def judge_path_fault(name: str, trusted: tuple[str, ...] = (),
                     command: str = "pytest conformance/", whole: bool = False) -> str | None:
    """Why external planner ``name`` (``module:attr``) must not be judged from here, or None: its
    module would be imported from a folder on this process's own ``sys.path`` that the user put
    there, by ``PYTHONPATH`` or as the working directory (``python -m pytest``), other than
    ``trusted`` ones (the harness's checkout, read-only in the sandbox). A planner installed
    into site-packages is not refused: installing it was the operator's act. ``command``: the
    corpus command the fix names (``python -P -m pytest --pyargs conformance`` for an installed
    wheel, whose ``-P`` keeps the working directory off the path); ``whole``: ``command`` is
    the user's whole command (its ``--planner`` included), repeated as it is. Nothing is
    imported."""
    module = name.partition(":")[0]
    origin, _ = origin_of(module)
    if origin is None:
        return None
    root = os.path.realpath(import_root(module, origin))
    by_env = {os.path.realpath(os.path.abspath(e))
              for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e}
    cwd = os.path.realpath(os.getcwd())
    by_cwd = {cwd} if "" in sys.path or os.getcwd() in sys.path else set()
    if root not in by_env | by_cwd or root in {os.path.realpath(t) for t in trusted}:
        return None
    if root in by_env:
        how, fix = "on PYTHONPATH", f"Take it off PYTHONPATH and name it in {PLANNER_PATH_ENV}"
    else:
        how = "the working directory, which `python -m` puts on the import path"
        fix = (f"Name it in {PLANNER_PATH_ENV} and keep the working directory off the path "
               f"(`python -P`, as below, or run from another folder)")
    return (f"planner {name!r} is imported from {root}, a folder on the judge's own import path "
            f"({how}): every module there "
            f"(and every file the planner writes there) is on the judge's own import path, ahead "
            f"of the libraries it uses. {fix}: {PLANNER_PATH_ENV}={root} {command}"
            + ("" if whole else f" --planner {name}"))


def add_to_this_process() -> None:
    """Append the planner folders to this process's ``sys.path`` (last): for the commands that
    import a planner in their own process anyway (the benchmark, an unisolated fuzz run)."""
    for folder in planner_folders():
        if folder not in sys.path:
            sys.path.append(folder)
