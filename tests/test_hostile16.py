"""Sixteenth hostile review, kept as tests: planners right in every byte that leave their
caller's process changed where tests/test_hostile14.py and tests/test_hostile15.py's checks did
not read (planted: tests/planted/hostile16_state.py). Each planner is shown harming its caller
outside the harness, then named and set back by conformance/robustness/torch_state.py, then
failed by a corpus run.

Fooled before this review (each was exit 0, every case ``pass``), fixed in
conformance/robustness/process_state.py: the umask, the resource limits, the states of Python's
``random`` and numpy's global generator and the bindings of ``builtins`` were not read.

Still not read (stated in conformance/robustness/torch_state.py): ``os.environ``.
"""

from __future__ import annotations

import builtins
import os
import random
import resource
import subprocess
import sys
import textwrap

import numpy
import pytest

from tests.planner_folder_runs import ROOT, planted_run

STATE = "tests.planted.hostile16_state"
CASES = ("spec7-prefill-and-decodes", "steps-same-shape-decodes")

EFFECTS = {
    "clears_umask": textwrap.dedent("""
        import os, stat, tempfile
        path = os.path.join(tempfile.mkdtemp(), "server.log")
        open(path, "w").close()
        print("mode", oct(stat.S_IMODE(os.stat(path).st_mode)))"""),
    "lowers_open_file_limit": textwrap.dedent("""
        import tempfile
        files = []
        try:
            for _ in range(300):
                files.append(tempfile.TemporaryFile())
            print("300 files open")
        except OSError as exc:
            print("OSError", exc.errno)"""),
    "draws_from_random": textwrap.dedent("""
        import random
        print("first draw" if random.random() == FIRST else "another draw")"""),
    "draws_from_numpy": textwrap.dedent("""
        import numpy
        print("first draw" if numpy.random.random_sample() == FIRST else "another draw")"""),
    "rebinds_round": "print('round(2.6) =', round(2.6))",
}
AFTER = {"clears_umask": "mode 0o666", "lowers_open_file_limit": "OSError 24",
         "draws_from_random": "another draw", "draws_from_numpy": "another draw",
         "rebinds_round": "round(2.6) = 2"}
"""What the caller's own code sees after one right call: a world-writable file (umask 0 under
``open``'s 0o666), EMFILE (errno 24), a seeded generator one draw on, ``round`` truncating."""
BEFORE_CALL = textwrap.dedent("""
    import random, numpy
    random.seed(7); FIRST = random.random(); random.seed(7)
    if "numpy" in {planner!r}:
        numpy.random.seed(7); FIRST = numpy.random.random_sample(); numpy.random.seed(7)
    import os; os.umask(0o022)
""")
CALL = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from tests import test_hostile14 as t
    from tests.planted import hostile16_state as planted
    kwargs = t._kwargs()
    planted.{planner}(**kwargs)
    assert kwargs["out_write_offsets"].tolist() == [0, 8, 9, 10]  # spec section 7: right
""")
STATE_LINES = {"clears_umask": "umask: 0022 -> 0000",
               "lowers_open_file_limit": "resource limits: changed: RLIMIT_NOFILE (",
               "draws_from_random": "Python random state: sha256:",
               "draws_from_numpy": "numpy global random state: sha256:",
               "rebinds_round": "builtins bindings: rebound round"}


@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_each_state_planner_harms_its_caller(planner):
    """Outside the harness, in a process of its own: one right call, then the caller's own code
    behaves otherwise (:data:`AFTER`)."""
    code = (BEFORE_CALL.format(planner=planner) + CALL.format(root=str(ROOT), planner=planner)
            + EFFECTS[planner])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == AFTER[planner], proc.stdout


@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_the_snapshot_names_each_change_and_sets_it_back(planner):
    """conformance/robustness/torch_state.py, in this process (the in-process runs' path)."""
    from conformance.robustness import torch_state
    from tests.planted import hostile16_state as planted
    from tests.test_hostile14 import _kwargs

    mask = os.umask(0o022)
    os.umask(mask)
    limit, rounding = resource.getrlimit(resource.RLIMIT_NOFILE), builtins.round
    random_state, numpy_state = random.getstate(), numpy.random.get_state()
    before = torch_state.snapshot()
    try:
        getattr(planted, planner)(**_kwargs())
        changes = torch_state.changes(before, torch_state.snapshot())
        assert [c for c in changes if c.startswith(STATE_LINES[planner])] == changes, changes
        assert len(changes) == 1, changes
        assert torch_state.restore(before) == []
        assert torch_state.changes(before, torch_state.snapshot()) == []
        assert os.umask(mask) == mask and resource.getrlimit(resource.RLIMIT_NOFILE) == limit
        assert builtins.round is rounding and random.getstate() == random_state
        after = numpy.random.get_state()
        assert after[1].tolist() == numpy_state[1].tolist() and after[2:] == numpy_state[2:]
    finally:
        os.umask(mask)
        resource.setrlimit(resource.RLIMIT_NOFILE, limit)
        builtins.round = rounding
        random.setstate(random_state)
        numpy.random.set_state(numpy_state)


def test_rlimits_names_each_limit_once():
    """Linux's ``RLIMIT_OFILE`` is ``RLIMIT_NOFILE``: one change must not read as two."""
    from conformance.robustness.process_state import RLIMITS

    values = [getattr(resource, name) for name in RLIMITS]
    assert len(values) == len(set(values)) and "RLIMIT_NOFILE" in RLIMITS


@pytest.mark.slow
@pytest.mark.parametrize("planner", sorted(EFFECTS))
def test_a_planner_that_leaves_its_process_changed_fails(tmp_path, planner):
    """Fixed (each was exit 0, both cases ``pass``): ``fail``, naming the setting."""
    code, out, statuses = planted_run(tmp_path, f"{STATE}:{planner}", *CASES)
    assert code == 1 and statuses == {c: "fail" for c in CASES}, (code, statuses, out[-3000:])
    assert "changed process-global torch state" in out and STATE_LINES[planner] in out, \
        out[-3000:]
