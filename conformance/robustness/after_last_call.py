"""What a planner's worker does after its case's last call, recorded as that case's failure: the
worker's death (a signal from a thread of its own, an exit, a hang when told to end) and, through
:class:`conformance.robustness.late_writes.Parting`, a write into the case's CPU tensors. The
records are reported as the case's teardown error by :mod:`conformance.plugin.worker_deaths`.

:class:`AfterLastCall` is a part of :class:`conformance.robustness.worker_process.WorkerProcess`
(its process, its log: ``proc``, ``tail``, ``log_size``).
"""

from __future__ import annotations

import signal
import time

from conformance.robustness.late_writes import Parting
from conformance.robustness.outside_view import WHERE, changed, read

LINGER_SECONDS = 2.0
"""How long :meth:`WorkerProcess.close` waits by default, counted from the end of the worker's last case, for
the worker to die of its own accord before it is told to end: a planner whose thread kills its
process after the step (in a server the process dies) fails its last case when it does so within
this time, or before the next case begins; one that waits longer is not seen."""


CAUSES = ("death", "hang", "write-inside", "write-outside", "state")
"""What a planner did after its case's last call, as a record's ``cause`` (and the results file's
``after_last_call``) names it: its worker died, did not end when told to, it wrote into an
argument or outside one (:mod:`conformance.robustness.late_writes`), or its process state changed
as the harness reads it from outside (:mod:`conformance.robustness.outside_view`)."""


END_SECONDS = 5.0
"""How long :meth:`WorkerProcess.close` waits for a worker told to end (stdin EOF, on which its
watchdog thread exits at once) before it kills it; one that takes longer (twelve times longer
under a sanitizer) hung after its last case's last call, a death of that case."""


class AfterLastCall:
    """The bookkeeping of a worker's cases after their last call (a mixin of
    :class:`conformance.robustness.worker_process.WorkerProcess`, which provides ``proc``,
    ``tail`` and ``log_size``)."""

    def after_last_call_init(self) -> None:
        self.owner = None  # the case now running (the caller's token), set by the caller
        self.last_owner = None  # the last case that ended with the worker alive
        self.last_end, self._end_offset = 0.0, 0  # when it ended; the log's size then
        self.ending = False  # the harness killed the worker or told it to end
        self.deaths: list[dict] = []  # ``owner``, ``status``, ``reason``, ``tail`` each
        self.parting = Parting()  # the last case's shared storages, read again later
        self.last_view = None  # the worker's /proc state when the last case ended (outside_view)

    def case_ended(self) -> None:
        """The case of :attr:`owner` ended with the worker alive: a death from now until the next
        case, or until :meth:`close`, is that case's (:attr:`deaths`)."""
        self.last_owner, self.last_end = self.owner, time.monotonic()
        self._end_offset = self.log_size()

    def _note_death(self, when: str, told: bool = False) -> None:
        """Record the worker's end as a death of its last case when the harness did not ask for
        it (:attr:`ending`) and it ended after that case's last call: killed by a signal, or an
        exit of any code (the worker exits only when told to, or after a crash it reported); when
        it was ``told`` to end (stdin EOF), a signal or an exit code other than 0."""
        code = self.proc.poll() if self.proc is not None else None
        if code is None or self.ending or self.last_owner is None or (told and code == 0):
            return
        self.deaths.append({"owner": self.last_owner, "tail": self.tail(self._end_offset),
                            "status": "crash", "cause": "death",
                            "reason": f"the worker {exit_words(code)} after the case's last "
                                      f"call, with no call running ({when})"})
        self.last_owner = None

    def _note_state(self, when: str) -> bool:
        """Record, as a failure of its last case, a worker alive whose process state as the
        harness reads it in ``/proc`` (:mod:`conformance.robustness.outside_view`) changed since
        that case ended (a thread of the planner's, with no call running: in a server, the
        caller's state changes under it); returns whether it did (the worker must then be
        replaced before another case)."""
        if self.ending or self.last_owner is None or self.proc is None \
                or self.proc.poll() is not None:
            return False
        moved = changed(self.last_view, read(getattr(self, "pid", None)))
        if not moved:
            return False
        self.deaths.append({"owner": self.last_owner, "tail": "", "status": "fail",
                            "cause": "state",
                            "reason": f"the worker's process state changed after the case's "
                                      f"last call, with no call running ({when}; {WHERE}): "
                                      + "; ".join(moved)})
        self.last_owner = None
        return True

    def _note_hang(self, waited: float, tampered: str | None) -> None:
        """Record, as a death of its last case, a worker that did not end within ``waited``
        seconds of being told to (stdin EOF ends a healthy worker at once, whatever its main
        thread is doing): after that case's last call the planner hung or stopped its process
        (in a server: hung after the step), or stopped its parent (``tampered``)."""
        if self.ending or self.last_owner is None:
            return
        why = tampered or "it hung or was stopped"
        self.deaths.append({"owner": self.last_owner, "tail": self.tail(self._end_offset),
                            "status": "crash", "cause": "hang",
                            "reason": f"the worker did not end within {waited:g} s of being told "
                                      f"to, after the case's last call, with no call running "
                                      f"({why}; it was killed)"})
        self.last_owner = None

    def take_deaths(self) -> list[dict]:
        """The deaths recorded since the last call (each ``owner``, ``status``, ``cause``,
        ``reason``, ``tail``): the worker's own end (``crash``; ``cause`` ``death``, or ``hang``
        when it did not end when told to) and the writes after a case's last call
        (``oob`` / ``fail``, :mod:`conformance.robustness.late_writes`)."""
        deaths, self.deaths = self.deaths, []
        return deaths


def exit_words(code: int) -> str:
    """``exited with code N`` / ``was killed by signal N (NAME)`` for a Popen return code."""
    if code < 0:
        return f"was killed by signal {-code} ({signal_name(-code)})"
    return f"exited with code {code}"


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; ``signal N`` for a number with no name here."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
