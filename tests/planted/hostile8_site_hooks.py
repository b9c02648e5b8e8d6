"""Eighth hostile review: start-up hooks an entrant leaves in its planner folder
(tests/test_hostile8.py copies this file there as ``sitecustomize.py`` and ``usercustomize.py``,
beside a ``h8hooks.pth`` that imports it): the interpreter's ``site`` runs them in any process
whose ``sys.path`` holds that folder at start-up. In the judge (a process started as pytest) it
appends a line to ``$HOSTILE8_MARKER``; elsewhere (the planner's own children) it does nothing."""

import os
import sys

if "pytest" in " ".join(getattr(sys, "orig_argv", sys.argv)) and os.environ.get("HOSTILE8_MARKER"):
    with open(os.environ["HOSTILE8_MARKER"], "a") as _f:
        _f.write(f"start-up hook ran in pid {os.getpid()}: {sys.orig_argv}\n")
