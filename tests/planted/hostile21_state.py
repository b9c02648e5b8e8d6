"""Planted planners of the twenty-first hostile review (tests/test_hostile21.py): each computes
the pure-Python planner's plan, right in every byte, and leaves its caller's process changed where
the checks of tests/test_hostile19.py and tests/test_hostile20.py did not read: ``logging``'s
configuration read as each logger's own fields (level, flags, handlers and filters by identity),
never as what a logger does with a record.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

from tests.planted.hostile17_state import harm_planners

PREMADE = "hostile21.premade.child"
"""A logger made when this module is imported (its caller's, in a server); its parents
``hostile21.premade`` and ``hostile21`` are placeholders, not loggers."""
logging.getLogger(PREMADE)
SILENT = logging.CRITICAL + 1
"""A level above every level a record has: nothing passes it."""


def _silence_last_resort() -> None:
    """The handler of a process that configured none (``logging.lastResort``, the same object)
    raised above every level: its caller's ``logging.error`` prints nothing."""
    logging.lastResort.setLevel(SILENT)


def _poison_level_caches() -> None:
    """Every logger's memo of ``isEnabledFor`` (``Logger._cache``) says no: its level, flags and
    handlers stay the same, its records are dropped until some ``setLevel`` clears the memo."""
    loggers = [logging.root, *(x for x in logging.root.manager.loggerDict.values()
                               if isinstance(x, logging.Logger))]
    for logger in loggers:
        logger._cache.update({level: False for level in range(0, SILENT + 1)})


def _adopt_a_logger() -> None:
    """A logger first made during the call (no change, by the rule for new loggers) whose name is
    a parent of an existing one's (``hostile21``): the existing logger is reparented to it, and
    inherits its level and its propagation's end."""
    parent = logging.getLogger(PREMADE.split(".")[0])
    parent.setLevel(SILENT)
    parent.propagate = False


def _global_dlopen() -> None:
    """Extension modules its caller imports later load with ``RTLD_GLOBAL | RTLD_NOW``: their
    symbols interpose on every library loaded after them."""
    sys.setdlopenflags(os.RTLD_GLOBAL | os.RTLD_NOW)


HARMS = {
    "silences_the_last_resort": _silence_last_resort,
    "poisons_the_level_caches": _poison_level_caches,
    "adopts_a_logger": _adopt_a_logger,
    "sets_global_dlopen": _global_dlopen,
}
"""Planner name -> what it does after the right plan."""

globals().update(harm_planners(HARMS))
