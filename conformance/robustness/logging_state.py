"""``logging``'s configuration, read and set back for
:data:`conformance.robustness.runtime_state.SETTINGS` (tests/test_hostile19.py: a planner right
in every byte raised the root logger's level, and its caller's every later warning went
unprinted): the level, ``disabled`` and ``propagate`` flags, handlers and filters of the root
logger and of every logger that existed before the call (a logger first made during the call is
no change: a library's ``logging.getLogger(__name__)``), the logger class, the record factory and
``logging.lastResort``; and what each such logger does with a record (tests/test_hostile21.py):
its effective level (a logger made above it since, at ``CRITICAL + 1``, left its fields as they
were), its memo of ``isEnabledFor`` (``Logger._cache``) checked against its level, the handlers
its records reach, and the level, filters, formatter and stream of each of those handlers and of
``lastResort``.
"""

from __future__ import annotations

import logging


def _reached(logger) -> tuple:
    """The handlers a record of ``logger`` reaches (``Logger.callHandlers``: its own, then each
    parent's while ``propagate``), ``logging.lastResort`` where none."""
    out, current = [], logger
    while current is not None:
        out += current.handlers
        if not current.propagate:
            break
        current = current.parent
    return tuple(out) if out else (logging.lastResort,)


def _memo_contradicted(logger) -> tuple:
    """The levels at which ``logger``'s memo of ``isEnabledFor`` (``Logger._cache``, cleared by
    every ``setLevel`` and ``logging.disable``) holds another answer than its level, flags and
    ``logging.disable`` give: a memo rewritten, its fields left as they were."""
    disable = logging.root.manager.disable
    effective = logger.getEffectiveLevel()
    memo = dict(getattr(logger, "_cache", None) or {})
    return tuple(sorted(level for level, answer in memo.items() if isinstance(level, int)
                        and answer != (not logger.disabled and disable < level
                                       and level >= effective)))


def _logger_state(logger) -> tuple:
    """(logger, level, disabled, propagate, handlers, filters, parent, its effective level, the
    levels its ``isEnabledFor`` memo contradicts, the handlers its records reach): the fields,
    then what it does with a record (a parent made above it since, a memo rewritten)."""
    return (logger, logger.level, logger.disabled, logger.propagate, tuple(logger.handlers),
            tuple(logger.filters), logger.parent, logger.getEffectiveLevel(),
            _memo_contradicted(logger), _reached(logger))


def _handler_state(handler) -> tuple:
    """(handler, level, filters, formatter, the stream it holds itself or None)."""
    return (handler, getattr(handler, "level", None), tuple(getattr(handler, "filters", ())),
            getattr(handler, "formatter", None), vars(handler).get("stream"))


def logging_state() -> tuple[tuple, dict, dict]:
    """((logger class, record factory, ``lastResort``), {name: :func:`_logger_state`} of the root
    logger (``""``) and every logger made so far, {id: :func:`_handler_state`} of every handler
    they reach and of ``lastResort``)."""
    loggers = {"": _logger_state(logging.root)}
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger):
            loggers[name] = _logger_state(logger)
    handlers = {id(h): _handler_state(h) for state in loggers.values() for h in state[9]}
    if logging.lastResort is not None:
        handlers[id(logging.lastResort)] = _handler_state(logging.lastResort)
    return ((logging.getLoggerClass(), logging.getLogRecordFactory(), logging.lastResort),
            loggers, handlers)


def logging_changed(before, after) -> list[str]:
    """``the logger class replaced``, ``logger 'x': level 0 -> 50`` for each difference (handlers
    and filters by identity) of a logger ``before`` holds, ``logger 'x': effective level 30 -> 51``
    (a parent made above it), ``logger 'x': its isEnabledFor memo ...`` (rewritten),
    ``logger 'x': handlers its records reach`` where those differ, and ``handler
    <StreamHandler>: level 0 -> 51`` for each handler ``before`` reached (``lastResort`` too)
    whose level, filters, formatter or stream differ."""
    out = [f"{name} replaced" for name, a, b in zip(
        ("the logger class", "the record factory", "logging.lastResort"), before[0], after[0])
        if a is not b]
    words = ("", "level", "disabled", "propagate", "handlers", "filters")
    for name, was in before[1].items():
        now = after[1].get(name)
        label = f"logger {name or 'root'!r}"
        if now is None or now[0] is not was[0]:
            out.append(f"{label} replaced")
            continue
        for i in range(1, 6):
            same = (len(was[i]) == len(now[i]) and all(a is b for a, b in zip(was[i], now[i]))
                    if i >= 4 else was[i] == now[i])
            if not same:
                out.append(f"{label}: {words[i]} "
                           + (f"{was[i]!r} -> {now[i]!r}" if i < 4
                              else f"{len(was[i])} -> {len(now[i])}"))
        if was[7] != now[7]:
            out.append(f"{label}: effective level {was[7]!r} -> {now[7]!r}")
        if now[8] and now[8] != was[8]:
            out.append(f"{label}: its isEnabledFor memo (Logger._cache) contradicts its level "
                       f"at {len(now[8])} level(s)")
        if len(was[9]) != len(now[9]) or any(a is not b for a, b in zip(was[9], now[9])):
            out.append(f"{label}: handlers its records reach "
                       f"{[type(h).__name__ for h in was[9]]} -> "
                       f"{[type(h).__name__ for h in now[9]]}")
    fields = ("", "level", "filters", "formatter", "stream")
    for key, was in before[2].items():
        now = _handler_state(was[0])
        for i in range(1, 5):
            same = (len(was[i]) == len(now[i]) and all(a is b for a, b in zip(was[i], now[i]))
                    if i == 2 else (was[i] == now[i] if i == 1 else was[i] is now[i]))
            if not same:
                out.append(f"handler <{type(was[0]).__name__}>: {fields[i]} "
                           + (f"{was[i]!r} -> {now[i]!r}" if i == 1 else "replaced"))
    return out


def set_logging_state(value) -> None:
    logging.setLoggerClass(value[0][0])
    logging.setLogRecordFactory(value[0][1])
    logging.lastResort = value[0][2]
    for name, (logger, level, disabled, propagate, handlers, filters, parent, *_) in (
            value[1].items()):
        logger.setLevel(level)
        logger.disabled, logger.propagate = disabled, propagate
        logger.handlers[:], logger.filters[:] = handlers, filters
        if name:
            logger.parent = parent
        if name and logging.root.manager.loggerDict.get(name) is not logger:
            logging.root.manager.loggerDict[name] = logger
    for handler, level, filters, formatter, stream in value[2].values():
        handler.level, handler.formatter = level, formatter
        handler.filters[:] = filters
        if stream is not None:
            handler.stream = stream
    logging.root.manager._clear_cache()  # every memo of isEnabledFor: computed again
