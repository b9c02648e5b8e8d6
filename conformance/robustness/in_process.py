"""Guards around a planner that runs in the harness's own process (not isolated).

A planner in the same process can reach everything the harness does, so these guards only stop the
ordinary ways a planner ends or bends the run; the isolation worker
(:mod:`conformance.robustness.isolation`) is the guarantee:

* ``raise KeyboardInterrupt`` / ``SystemExit`` / ``GeneratorExit``, or any other BaseException
  (pytest's own ``skip`` / ``xfail`` / ``fail`` / ``exit`` outcomes included, which would otherwise
  let a planner mark its own case skipped or expected to fail) from a planner fail that case
  (:class:`PlannerEscape`); a real Ctrl-C (SIGINT delivered to the process) still stops the run,
  told apart by :func:`install_interrupt_flag`'s handler;
* ``os._exit`` (and ``posix._exit``) called during a case raise :class:`PlannerEscape` instead of
  ending the process; ``ctypes`` calls to libc's ``_exit``, signals and the like are out of reach
  (the results file then stays ``"complete": false``);
* a child process the planner forked that returns into the harness ends when it leaves the case
  (without it every fork would run the rest of the suite, print its own summary and write the
  results file);
* process-global torch state a planner changed is named and set back
  (:mod:`conformance.robustness.torch_state`).
"""

from __future__ import annotations

import contextlib
import os
import posix
import signal
import threading

from conformance.robustness import torch_state

ESCAPES = (KeyboardInterrupt, SystemExit, GeneratorExit)
"""The built-in BaseExceptions that are not Exceptions: a planner raising one (or any other
BaseException that is not an Exception) must fail its case, not the run."""


class PlannerEscape(Exception):
    """A planner tried to leave the case other than by returning or raising an Exception: it raised
    one of :data:`ESCAPES` or called ``os._exit``; ``str()`` says which."""


class _Interrupts:
    sigint = False


def install_interrupt_flag() -> None:
    """Record real SIGINTs (then raise KeyboardInterrupt as Python's default handler does), so that
    :func:`guarded` lets a user's Ctrl-C through and fails only a planner's own KeyboardInterrupt.
    A no-op outside the main thread or when another handler was installed."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return

    def handler(signum, frame):
        _Interrupts.sigint = True
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, handler)


def safe_repr(value) -> str:
    """``repr(value)``, or ``<repr() raised>`` when that raises (a planner's values may be
    hostile)."""
    try:
        return repr(value)
    except Exception:  # a planner's exception argument may be hostile
        return "<repr() raised>"


def _no_exit(code=0):
    raise PlannerEscape(f"called os._exit({safe_repr(code)}) during the case")


@contextlib.contextmanager
def guarded():
    """Run a planner's case inside: every BaseException that is not an Exception (:data:`ESCAPES`,
    pytest's outcomes, a planner's own subclass) and ``os._exit`` become :class:`PlannerEscape`.

    Raises:
        PlannerEscape: the planner raised a BaseException that is not an Exception (not a real
            SIGINT) or called ``os._exit``.
    """
    saved = os._exit, posix._exit
    pid = os.getpid()
    _Interrupts.sigint = False
    os._exit = posix._exit = _no_exit
    try:
        yield
    except Exception:
        raise
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt) and _Interrupts.sigint:
            raise  # the user pressed Ctrl-C
        raise PlannerEscape(f"raised {type(exc).__name__}({', '.join(map(safe_repr, exc.args))}) "
                            f"during the case") from None
    finally:
        os._exit, posix._exit = saved
        if os.getpid() != pid:  # a child the planner forked came back into the harness
            posix._exit(0)  # one run, one summary, one results file: the child ends here


@contextlib.contextmanager
def torch_state_kept(changed: list[str]):
    """Snapshot torch's process-global state; on leaving, append to ``changed`` what differs (see
    :func:`conformance.robustness.torch_state.changes`) and set it back."""
    before = torch_state.snapshot()
    try:
        yield
    finally:
        changed += torch_state.changes(before, torch_state.snapshot())
        if changed:
            stuck = torch_state.restore(before)
            changed += [f"{name}: could not be set back" for name in stuck]
