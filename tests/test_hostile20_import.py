"""Twentieth hostile review, kept as tests: planner modules that do their harm while first
imported (planted: tests/planted/hostile20_env_at_import.py, hostile20_atexit_at_import.py,
hostile20_c_env_at_import.py), each right in every byte and shown harming its caller beside the
honest pure-Python planner.

Fooled before this review, fixed here (each was exit 0, its case ``pass``): what a planner
module added while first imported (an environment variable, in ``os.environ`` or from C; an
``atexit`` handler) was taken for its libraries' own, so a planner did its harm at import. The
isolation worker now imports the libraries an honest planner uses before it reads any state, and
judges the module's own import like a call (conformance/robustness/first_import.py): its
additions fail its first case, named as the import's. An honest planner whose module imports
Triton, ``numba.cuda`` and ``multiprocessing`` and makes a logger stays green
(tests/planted/hostile20_honest_imports.py).

A library the worker does not import first that registers an ``atexit`` handler or sets a
variable when imported fails an honest planner's first case, unless ``CONFORMANCE_IMPORT_FIRST``
names it (the worker then imports it before any reading: whoever runs the harness vouches for it;
the results carry the variable).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.planner_folder_runs import ROOT, after_one_call, corpus_run, failing_run, results_of

HONEST = "impls.offsets_planner.python_planner:launch"
CASE = "spec7-prefill-and-decodes"
EFFECTS = {
    "env_at_import": """
        child = subprocess.run([sys.executable, "-c", "import warnings; warnings.warn('x')"],
                               capture_output=True)
        print("child exit", child.returncode)""",
    "atexit_at_import": "print('failing'); sys.exit(3)",
    "c_env_at_import": """
        print("child sees", subprocess.run(["sh", "-c", "echo ${HOSTILE20_FROM_C:-nothing}"],
                                           capture_output=True, text=True).stdout.strip())""",
}
"""Planted module (``tests.planted.hostile20_<name>``) -> the caller's code after the call."""
RESULTS = {
    "env_at_import": ("child exit 1 (exit 0)", "child exit 0 (exit 0)"),
    "atexit_at_import": ("failing (exit 0)", "failing (exit 3)"),
    "c_env_at_import": ("child sees 1 (exit 0)", "child sees nothing (exit 0)"),
}
"""Planted module -> (the caller's last line and exit status after one right call of its
planner, the same after one call of the honest planner)."""
WHILE = "while the planner's module was first imported: "
CHANGES = {
    "env_at_import": f"{WHILE}environment variable PYTHONWARNINGS set",
    "atexit_at_import": f"{WHILE}atexit handlers (how many): ",
    "c_env_at_import": f"{WHILE}environment variable HOSTILE20_FROM_C set from C "
                       "(unseen by os.environ)",
}
"""The line of each planted module's failure (after four spaces in the message)."""


def _planner(name: str) -> str:
    return f"tests.planted.hostile20_{name}:launch"


def _caller(effect: str, planner: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONWARNINGS", "HOSTILE20_FROM_C")}
    return after_one_call(planner, EFFECTS[effect], "import subprocess", env=env)


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_each_module_harms_its_caller_at_import(name):
    assert _caller(name, _planner(name)) == RESULTS[name][0]
    assert _caller(name, HONEST) == RESULTS[name][1]


@pytest.fixture(scope="module")
def one_run(tmp_path_factory) -> dict:
    """The planted modules and the honest one on one case: {name: (status, message)}."""
    names = [*EFFECTS, "honest_imports"]
    found = failing_run(tmp_path_factory.mktemp("hostile20_import") / "results.json",
                        [_planner(name) for name in names], CASE)
    return {name: found[_planner(name)] for name in names}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_module_that_harms_at_import_fails(one_run, name):
    """Fixed (each was exit 0, its case ``pass``): the case fails naming the import."""
    status, message = one_run[name]
    assert status == "fail" and f"\n    {CHANGES[name]}" in message, message


@pytest.mark.slow
def test_an_honest_module_that_imports_triton_and_numba_passes(one_run):
    assert one_run["honest_imports"] == ("pass", ""), one_run["honest_imports"]


def test_warm_up_imports_the_kernel_libraries_first():
    """conformance/robustness/first_import.py, in a fresh process: what it imports is no change
    of a later import of the same libraries; a variable or handler added after it is named."""
    code = textwrap.dedent("""
        import atexit, os, sys
        import torch
        from conformance.robustness import first_import as f
        from conformance.robustness.import_state import c_environ, environ
        from conformance.robustness.runtime_state import import_settings
        print(f.warm_up())
        before = environ(), c_environ(), import_settings()
        import impls.offsets_planner.triton_planner, impls.offsets_planner.numba_cuda_planner
        print(f.import_changes(before[0], environ(), before[1], c_environ(), before[2],
                               import_settings()))
        os.environ["X_HOSTILE20"] = "1"
        atexit.register(int)
        print(f.import_changes(before[0], environ(), before[1], c_environ(), before[2],
                               import_settings()))
    """)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRITON_INTERPRET", "NUMBA_ENABLE_CUDASIM")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 3, proc.stderr[-2000:]
    assert lines[0] == "['triton', 'numba', 'numba.cuda']"
    assert lines[1] == "[]"
    assert lines[2].startswith(f"[\"{WHILE}environment variable X_HOSTILE20 set\", "
                               f"\"{WHILE}atexit handlers (how many): "), lines[2]


def test_every_planted_module_is_tested():
    assert sorted(EFFECTS) == sorted(RESULTS) == sorted(CHANGES)


LIBRARY = "tests.planted.hostile20_library_at_exit"
USES_LIBRARY = "tests.planted.hostile20_uses_library:launch"


@pytest.mark.slow
def test_a_library_named_in_import_first_is_its_own(tmp_path):
    """An honest planner whose library registers an ``atexit`` handler at import fails its first
    case, the message naming the import; with ``CONFORMANCE_IMPORT_FIRST`` naming the library it
    passes, and the results file records the variable."""
    from conformance.engine.rerun import IMPORT_FIRST_ENV

    plain, vouched = tmp_path / "plain.json", tmp_path / "vouched.json"
    proc = corpus_run(None, plain, "--planner", USES_LIBRARY, "--case", CASE)
    [result] = results_of(plain)
    assert proc.returncode == 1 and result["status"] == "fail", proc.stdout[-2000:]
    assert f"\n    {CHANGES['atexit_at_import']}" in result["message"], result["message"]
    proc = corpus_run(None, vouched, "--planner", USES_LIBRARY, "--case", CASE,
                      **{IMPORT_FIRST_ENV: f" {LIBRARY} ,"})
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [r["status"] for r in results_of(vouched)] == ["pass"]
    doc = json.loads(vouched.read_text())
    assert doc["environment"][IMPORT_FIRST_ENV] == f" {LIBRARY} ,"


def test_import_first_names_modules_and_refuses_anything_else(tmp_path):
    from conformance.engine.rerun import IMPORT_FIRST_ENV
    from conformance.robustness.first_import import vouched

    assert vouched(" cupy , jax.numpy,,") == ("cupy", "jax.numpy")
    assert vouched(None) == vouched("") == ()
    with pytest.raises(ValueError, match=f"{IMPORT_FIRST_ENV}: not a module name: 'a b', "
                                         "'os;rm'"):
        vouched("a b, os;rm")
    proc = corpus_run(None, tmp_path / "r.json", "--planner", "python", "--case", CASE,
                      **{IMPORT_FIRST_ENV: "cupy, -x"})
    assert proc.returncode == 4, proc.stdout[-2000:]  # a usage error: no worker started
    assert f"{IMPORT_FIRST_ENV}: not a module name: '-x'" in proc.stderr
