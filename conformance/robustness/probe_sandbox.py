"""``python -m conformance.robustness.probe_sandbox PROBE_MODULE NAME``: the availability probe of
an external planner (``python -m PROBE_MODULE NAME``, the corpus subject's ``probe`` module) in the
isolation workers' sandbox.

The probe imports the planner's module, so the module's top level runs there: without a sandbox
it could find pytest among its ancestors and stop it (SIGSTOP hangs the run), or leave a daemon
behind. This launcher moves into new user + PID (+ mount) namespaces
(:func:`conformance.robustness.sandbox.new_user_pid_namespaces`, :func:`~conformance.robustness.
sandbox.private_proc`), runs the probe as PID 1's only child with every capability dropped, and
ends as the probe ended; when the probe exits PID 1 exits too, and the kernel kills whatever the
module left in the namespace. The harness's checkout and the interpreter's folders are read-only
there (:func:`~conformance.robustness.sandbox.read_only`): the module cannot rewrite a case file
or plant bytecode that pytest imports later. The probe's stdout is this process's (the pipe
the subject's planner registry reads). Where the namespaces are refused the probe runs as it
would without this launcher, capabilities dropped.

The registry runs this launcher instead of the plain probe when the pytest plugin says so (its
``PROBE_COMMAND``): where the workers get the sandbox (``--sandbox auto`` on the CPU,
``--sandbox namespace``), :func:`conformance.robustness.isolation.sandbox_mode`. This module
imports nothing of the subject: the probe module comes as the first argument.

Not guarded: the probe's answer is what the module's process prints; a module can forge it
(tests/test_sandbox.py keeps that as a strict xfail).
"""

from __future__ import annotations

import os
import signal
import sys

from conformance.robustness import sandbox

def use_for_probes(option: str = "auto", cuda: bool | None = None) -> bool:
    """Make the corpus subject's registry probe external planners through this launcher where the
    isolation workers get the sandbox (:func:`conformance.robustness.isolation.sandbox_mode` of
    ``option`` on a machine where torch does, or does not, see ``cuda``); True when it does."""
    from conformance.corpus.corpus_subject import PROBE_MODULE, registry

    from conformance.robustness.isolation import sandbox_mode

    if cuda is None:
        import torch

        cuda = torch.cuda.is_available()
    if sandbox_mode(option, cuda)[0] == "none":
        return False
    registry.PROBE_COMMAND[:] = [sys.executable, "-P", "-m", __name__, PROBE_MODULE]
    return True


def _exec_probe(module: str, name: str) -> None:
    sandbox.drop_capabilities()
    os.execv(sys.executable, [sys.executable, "-P", "-m", module, name])


def _exit_as(status: int) -> None:
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def main(argv: list[str] | None = None) -> None:
    """Run probe module ``argv[0]`` on planner ``argv[1]`` in the sandbox; exits with the probe's
    code (128 + signal when a signal ended it). Never returns."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:  # run by hand: say what it takes, never exec a half-made command
        print("usage: python -m conformance.robustness.probe_sandbox PROBE_MODULE NAME",
              file=sys.stderr)
        os._exit(2)
    module, name = args
    sandbox.die_with_parent()
    if sandbox.new_user_pid_namespaces():
        _exec_probe(module, name)
    init = os.fork()
    if init:
        _, status = os.waitpid(init, 0)  # PID 1 ends as the probe did
        _exit_as(status)
    sandbox.die_with_parent()
    if sandbox.private_proc() is None:
        sandbox.read_only(sandbox.protected_paths())
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    probe = os.fork()
    if probe == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        sandbox.die_with_parent()
        _exec_probe(module, name)
    _exit_as(sandbox.reap_until(probe))  # PID 1: reaps what the module orphaned meanwhile


if __name__ == "__main__":
    main()
