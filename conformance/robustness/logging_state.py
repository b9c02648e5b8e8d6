"""``logging``'s configuration, read and set back for
:data:`conformance.robustness.runtime_state.SETTINGS` (tests/test_hostile19.py: a planner right
in every byte raised the root logger's level, and its caller's every later warning went
unprinted): the level, ``disabled`` and ``propagate`` flags, handlers and filters of the root
logger and of every logger that existed before the call (a logger first made during the call is
no change: a library's ``logging.getLogger(__name__)``), the logger class, the record factory and
``logging.lastResort``.
"""

from __future__ import annotations

import logging


def _logger_state(logger) -> tuple:
    return (logger, logger.level, logger.disabled, logger.propagate, tuple(logger.handlers),
            tuple(logger.filters))


def logging_state() -> tuple[tuple, dict]:
    """((logger class, record factory, ``lastResort``), {name: (logger, level, disabled,
    propagate, handlers, filters)}) of the root logger (``""``) and every logger made so far."""
    loggers = {"": _logger_state(logging.root)}
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            loggers[name] = _logger_state(logger)
    return (logging.getLoggerClass(), logging.getLogRecordFactory(), logging.lastResort), loggers


def logging_changed(before, after) -> list[str]:
    """``the logger class replaced``, ``logger 'x': level 0 -> 50`` for each difference (handlers
    and filters by identity) of a logger ``before`` holds."""
    out = [f"{name} replaced" for name, a, b in zip(
        ("the logger class", "the record factory", "logging.lastResort"), before[0], after[0])
        if a is not b]
    words = ("", "level", "disabled", "propagate", "handlers", "filters")
    for name, was in before[1].items():
        now = after[1].get(name)
        if now is None or now[0] is not was[0]:
            out.append(f"logger {name or 'root'!r} replaced")
            continue
        for i in range(1, 6):
            same = (len(was[i]) == len(now[i]) and all(a is b for a, b in zip(was[i], now[i]))
                    if i >= 4 else was[i] == now[i])
            if not same:
                out.append(f"logger {name or 'root'!r}: {words[i]} "
                           + (f"{was[i]!r} -> {now[i]!r}" if i < 4
                              else f"{len(was[i])} -> {len(now[i])}"))
    return out


def set_logging_state(value) -> None:
    logging.setLoggerClass(value[0][0])
    logging.setLogRecordFactory(value[0][1])
    logging.lastResort = value[0][2]
    for name, (logger, level, disabled, propagate, handlers, filters) in value[1].items():
        logger.setLevel(level)
        logger.disabled, logger.propagate = disabled, propagate
        logger.handlers[:], logger.filters[:] = handlers, filters
        if name and logging.root.manager.loggerDict.get(name) is not logger:
            logging.root.manager.loggerDict[name] = logger
