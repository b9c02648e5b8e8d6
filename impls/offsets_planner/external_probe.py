"""The availability probe of an external planner (``module.path:attr``), from the harness's side:
one child process per planner (:data:`impls.offsets_planner.registry.PROBE_COMMAND`, which runs
:mod:`impls.offsets_planner.probe`), in a session of its own, read to EOF and killed with its
process group (:mod:`impls.offsets_planner.registry` says why the harness never imports such a
module itself).

The child's answer is its last :data:`PROBE_MARK` line (JSON: ``available``, ``mode``,
``reason``; the registry's docstring says what is taken from it), kept per name and process.
``PROBE_COMMAND``, ``Availability`` and ``default_device`` are read on the registry at call time,
so that a command set there (a sandboxing launcher, a test) is the one run.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time

from impls.planner_path import find_planner_source
from impls.source_file import child_pythonpath
from impls.source_imports import digest_with_imports as digest

PROBE_TIMEOUT = 60.0
"""Seconds an external planner's module may take to import in the probe (default; the harness
passes its timeout of a call, ``--isolate-timeout``)."""
PROBE_MARK = "conformance-probe: "
"""Prefix of the probe's answer line on its stdout."""
_PROBED: dict[str, tuple[registry.Availability, dict | None]] = {}


PROBE_STARTUP = 300.0
"""Seconds the probe may take to import torch and the registry, before the planner's module (not
counted in the import's timeout)."""
PROBE_READY = "conformance-probe-ready "
"""Prefix of the probe's line saying its own imports are done (then ``time.monotonic()``)."""


def probe_all(names: list[str], timeout: float | None = None) -> None:
    """Find the availability of every external planner of ``names`` at once (their probes run in
    parallel; each module's import gets ``timeout`` seconds from when its probe is ready); later
    calls of :func:`impls.offsets_planner.registry.availability` answer from memory."""
    timeout = PROBE_TIMEOUT if timeout is None else timeout
    started = {name: (_start_probe(name), time.monotonic()) for name in dict.fromkeys(names)
               if ":" in name and name not in _PROBED}
    for name, (proc, since) in started.items():
        _PROBED[name] = _finish_probe(name, proc, since, timeout)


def _probe_external(name: str,
                    timeout: float | None) -> tuple[registry.Availability, dict | None]:
    if name not in _PROBED:
        probe_all([name], timeout)
    return _PROBED[name]


def _start_probe(name: str) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    return subprocess.Popen([*registry.PROBE_COMMAND, name], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def _read_probe(proc: subprocess.Popen, since: float, timeout: float) -> str | None:
    """The probe's stdout up to EOF; None when its import ran past ``timeout`` (from its ready
    line) or it never got ready."""
    out, deadline, ready = b"", since + PROBE_STARTUP, False
    while True:
        left = max(0.0, deadline - time.monotonic())  # what is there already still counts
        if not select.select([proc.stdout], [], [], left)[0]:
            return None
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            return out.decode(errors="replace")
        out += chunk
        if not ready and PROBE_READY.encode() in out:
            ready = True
            line = out.split(PROBE_READY.encode(), 1)[1].split(b"\n", 1)[0]
            try:
                deadline = float(line) + timeout
            except ValueError:
                deadline = time.monotonic() + timeout


def _signature(faults) -> tuple[str, ...]:
    """The probe's signature faults as the harness prints them: only the two forms
    :func:`impls.offsets_planner.external_planner.signature_faults` writes, each a Python
    identifier (the probe ran the planner's code, which could write anything there)."""
    if not isinstance(faults, list):
        return ()
    return tuple(f for f in faults[:32] if isinstance(f, str) and len(f) < 200
                 and f.startswith(("cannot take ", "requires "))
                 and f.partition(" ")[2].removeprefix("take ").isidentifier())


def _finish_probe(name: str, proc: subprocess.Popen, since: float,
                  timeout: float) -> tuple[registry.Availability, dict | None]:
    try:
        out = _read_probe(proc, since, timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever the module started goes with it
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        proc.stdout.close()
    module = name.partition(":")[0]
    if out is None:
        return (registry.Availability(False, None, registry.default_device(),
                                      f"importing {module!r} for planner {name!r} did not finish "
                                      f"in {timeout:g} s (the timeout of a call): stopped",
                                      fails=True), None)
    answers = [line[len(PROBE_MARK):] for line in out.splitlines() if line.startswith(PROBE_MARK)]
    try:
        doc = json.loads(answers[-1])
        available = bool(doc["available"])
        return (registry.Availability(available, doc["mode"], registry.default_device(),
                                      doc["reason"], signature=_signature(doc.get("signature"))),
                digest(module, find_planner_source(module)[0]) if available else None)
    except (IndexError, ValueError, KeyError, TypeError):
        return (registry.Availability(False, None, registry.default_device(),
                                      f"cannot import {module!r} for planner {name!r}: the import "
                                      f"ended the process (exit status {proc.returncode})",
                                      fails=True), None)


from impls.offsets_planner import registry  # noqa: E402 (last: the registry imports this module)
