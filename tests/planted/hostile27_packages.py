"""Planted planner packages for tests/test_hostile27.py, written into a temporary folder at test
time (a sourceless ``.pyc`` and a tree of 500+ modules cannot be committed as planted files):

* :func:`sourceless_kernel`: ``p27sl.launch:plan`` is a thin launcher whose kernel ``p27sl.kern``
  ships as bytecode alone (``p27sl/kern.pyc``, no ``kern.py``): the harness cannot pin its code,
  and the kernel can be swapped between the corpus run and the bench;
* :func:`wide_tree`: ``p27wide.launch:plan`` imports ``n`` filler modules before its kernel, so the
  kernel lies past the digest walk's ``MAX_IMPORTS``.
"""

from __future__ import annotations

import py_compile
from pathlib import Path

LAUNCH = "def plan(*args, **kwargs):\n    return kern.plan(*args, **kwargs)\n"


def kernel_source(value: int) -> str:
    """A kernel whose code differs by ``value`` (the judged one and the benched one)."""
    return f"def plan(*args, **kwargs):\n    return {value}\n"


def sourceless_kernel(root: Path, value: int) -> Path:
    """``root/p27sl``: the launcher, and its kernel as ``kern.pyc`` only (code ``value``)."""
    pkg = root / "p27sl"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch.py").write_text("from p27sl import kern\n\n" + LAUNCH)
    src = pkg / "kern.py"
    src.write_text(kernel_source(value))
    py_compile.compile(str(src), cfile=str(pkg / "kern.pyc"), doraise=True)
    src.unlink()
    return pkg


def wide_tree(root: Path, n: int, value: int) -> Path:
    """``root/p27wide``: the launcher imports ``m000`` .. ``m{n-1}``, then its kernel."""
    pkg = root / "p27wide"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for i in range(n):
        (pkg / f"m{i:03d}.py").write_text(f"X = {i}\n")
    imports = "".join(f"from p27wide import m{i:03d}\n" for i in range(n))
    (pkg / "launch.py").write_text(imports + "from p27wide import kern\n\n" + LAUNCH)
    (pkg / "kern.py").write_text(kernel_source(value))
    return pkg


def computed_import(root: Path, value: int) -> Path:
    """``root/p27dyn``: the launcher imports its kernel by a name it computes."""
    pkg = root / "p27dyn"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "launch.py").write_text("import importlib\n\nkern = importlib.import_module("
                                   "__name__.rpartition('.')[0] + '.kern')\n\n" + LAUNCH)
    (pkg / "kern.py").write_text(kernel_source(value))
    return pkg


def kernel_elsewhere(root: Path, value: int) -> tuple[Path, Path]:
    """``root/A/p27two``: the launcher imports its kernel ``p27kern``, which lies in another folder
    of the import path (``root/B``, as a second ``PYTHONPATH`` entry). Returns (A, B)."""
    a, b = root / "A", root / "B"
    (a / "p27two").mkdir(parents=True, exist_ok=True)
    b.mkdir(parents=True, exist_ok=True)
    (a / "p27two" / "__init__.py").write_text("")
    (a / "p27two" / "launch.py").write_text("import p27kern as kern\n\n" + LAUNCH)
    (b / "p27kern.py").write_text(kernel_source(value))
    return a, b
