"""Lay a release's *entries* launcher out from its wheel, with sglang's own JIT build machinery.

The launcher ``launch_plan_entries_kernel`` (``sglang/kernels/ops/kv_canary/plan/entries_kernel.py``,
0.5.23) JIT-builds the CUDA source ``kv_canary/canary_plan_entries.cuh`` through sglang's JIT utils
package ``sglang.kernels.jit.utils`` (``load_jit``: it writes a ``build.ninja``, runs ``ninja``, which
runs ``nvcc`` on a generated ``cuda.cu`` and the host compiler ``$CXX`` / ``c++`` to link, then loads
the ``.so`` with ``tvm_ffi.load_module``). Unlike the offsets launcher, this one needs that package
for real, so it is laid out byte for byte (RECORD-checked) with everything it imports at module level:

* Python: every ``sglang`` module the launcher reaches through unconditional module-level imports,
  inside :data:`CODE_ROOTS` (the kv_canary package, the JIT package, ``sglang/srt/environ.py``, which
  imports only the standard library). The ``__init__`` files of the JIT package
  (:data:`REAL_PACKAGE_ROOT`) are sglang's own (its public interface is one of them); every other
  parent package (``sglang``, ``sglang.kernels``, ``kv_canary``, ``plan``, ``sglang.srt``, ...) is an
  empty one of ours, so that sglang's top ``__init__``, the kernel registry and the server never run.
* Data: the JIT package's whole ``include/`` folder and ``csrc/kv_canary/`` (the CUDA sources and
  headers ``load_jit`` compiles; ``paths.py`` needs both folders to exist).
* **One stand-in**, :data:`STAND_IN_MODULE` (``sglang.srt.utils.common``, the server's 4,000-line
  utilities: orjson, psutil, PIL, starlette, ``sglang.srt.platforms``, ...), which ``arch.py`` imports
  ``is_cuda`` from at module level; ``get_cuda_version`` is imported in a function, only when
  ``nvcc --version`` cannot run. Both raise: no build step of ours stands in for upstream's.

Imports that only run in a function or under a module-level ``if`` and that fall outside the layout
(``flashinfer`` for sm_107, ``sailify``, ``sglang.utils``, the CUDA core-dump hook) are listed in
``tree.json`` (``not_laid_out``), never stubbed; an unconditional one outside the layout is a
:class:`EntriesLayoutError`. ``tree.json`` beside ``site/`` names the release, the wheel and its
SHA-256, every file copied with its RECORD SHA-256, the stand-in and the synthetic packages;
:func:`check_tree` re-hashes a tree laid out earlier (one carried to a machine without the wheel).
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from conformance.upstream.release_tree import _parents, _path
from conformance.upstream.wheel import Wheel, file_sha256, sha256_hex

LAUNCHER = "launch_plan_entries_kernel"
START = "sglang/kernels/ops/kv_canary/plan/entries_kernel.py"
"""The launcher's module in the wheel (0.5.20 and later keep the KV canary under sglang/kernels/ops)."""
PLAN_STARTS = ("sglang/kernels/ops/kv_canary/plan/api.py", "sglang/kernels/ops/kv_canary/plan_ref.py")
"""Also laid out when the wheel has them: the whole-plan wrapper ``launch_canary_plan_kernels`` and
its torch reference ``launch_canary_plan_kernels_torch_reference`` (which the wrapper calls, in a
function, on a device that is not CUDA)."""
JIT_LOADER = "_jit_plan_entries_module"
"""The launcher module's function that builds one variant: (has_swa_lut, has_pool) -> tvm-ffi Module."""
CODE_ROOTS = ("sglang/kernels/ops/kv_canary/", "sglang/kernels/jit/", "sglang/srt/environ.py")
REAL_PACKAGE_ROOT = "sglang/kernels/jit/"
DATA_ROOTS = ("sglang/kernels/jit/include/", "sglang/kernels/jit/csrc/kv_canary/")
STAND_IN_MODULE = "sglang.srt.utils.common"
STAND_IN_NAMES = ("is_cuda", "get_cuda_version")
STAND_IN_NOTE = ("planner-conformance's stand-in for sglang.srt.utils.common (the server's utilities): "
                 "is_cuda and get_cuda_version raise; neither is called on a CUDA build whose nvcc runs")
STAND_IN_SOURCE = f'''"""Stand-in for {STAND_IN_MODULE}, written by planner-conformance; NOT sglang's code.

The real module imports the server (orjson, psutil, PIL, starlette, sglang.srt.platforms, ...).
sglang.kernels.jit.utils.arch imports is_cuda from it (used by get_activation_cuda_cflags only) and,
in a function, get_cuda_version (only when `nvcc --version` cannot run). Both raise here.
"""


def is_cuda():
    raise RuntimeError("planner-conformance stand-in for {STAND_IN_MODULE}: is_cuda is not available")


def get_cuda_version():
    raise RuntimeError("planner-conformance stand-in for {STAND_IN_MODULE}: get_cuda_version is not "
                       "available (sglang asked for it because `nvcc --version` could not run)")
'''
TREE_JSON = "tree.json"
EMPTY_INIT = '"""Empty parent package written by planner-conformance (not sglang\'s __init__)."""\n'


class EntriesLayoutError(RuntimeError):
    """No entries launcher in the wheel, or an unconditional import this layout will not stub."""


@dataclass
class EntriesTree:
    """A laid-out release: ``site`` goes first on PYTHONPATH; ``files`` maps each wheel file copied
    to its RECORD SHA-256 (hex)."""

    release: str
    wheel: str
    wheel_sha256: str
    site: str
    module: str
    launcher: str
    files: dict[str, str]
    stand_ins: dict[str, str]
    synthetic_packages: list[str]
    environment: list[str]
    not_laid_out: list[str] = field(default_factory=list)


def _imports_with_context(source: bytes) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """(context, line, module, names) of every absolute import in ``source``; context is
    ``module`` (runs on import), ``conditional`` (under a module-level ``if``) or ``function``.
    ``if TYPE_CHECKING:`` blocks are skipped."""
    found = []

    def visit(nodes, context):
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend((context, node.lineno, a.name, ()) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    raise EntriesLayoutError(f"relative import (level {node.level}) not followed")
                found.append((context, node.lineno, node.module, tuple(a.name for a in node.names)))
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                inner = "conditional" if context == "module" else context
                visit(node.body + node.orelse, inner)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, "function")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, context)
            elif isinstance(node, (ast.Try, ast.With)):
                visit(node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
                      + [h for x in getattr(node, "handlers", []) for h in x.body], context)
            else:
                visit([c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)], context)

    visit(ast.parse(source).body, "module")
    return found


def _module_file(wheel: Wheel, module: str) -> str | None:
    for candidate in (_path(module), module.replace(".", "/") + "/__init__.py"):
        if candidate in wheel.record:
            return candidate
    return None


def _in_roots(path: str) -> bool:
    return any(path == r or path.startswith(r) for r in CODE_ROOTS)


def closure(wheel: Wheel) -> tuple[dict[str, bytes], set[str], set[str], list[str]]:
    """The wheel's Python files the entries launcher and the whole-plan launchers of
    :data:`PLAN_STARTS` need, transitively.

    Returns (files: path -> RECORD-checked bytes, stand-in names used, environment modules,
    not_laid_out: one line per conditional / function-level import left out).
    Raises EntriesLayoutError for an unconditional import outside the layout.
    """
    files: dict[str, bytes] = {}
    stand_in: set[str] = set()
    environment: set[str] = set()
    left_out: list[str] = []
    todo = [START, *(p for p in PLAN_STARTS if p in wheel.record)]
    while todo:
        path = todo.pop()
        if path in files:
            continue
        files[path] = wheel.member_bytes(path)
        parent = path.rsplit("/", 1)[0]
        while parent.startswith(REAL_PACKAGE_ROOT.rstrip("/")):
            if f"{parent}/__init__.py" in wheel.record:
                todo.append(f"{parent}/__init__.py")  # Python runs it before any submodule
            parent = parent.rsplit("/", 1)[0]
        for context, line, module, names in _imports_with_context(files[path]):
            where = f"{path}:{line} {context}-level: {module}" + (f" ({', '.join(names)})" if names else "")
            top = module.split(".")[0]
            if top != "sglang":
                if top not in sys.stdlib_module_names:
                    environment.add(f"{top} ({context})")
                continue
            if module == STAND_IN_MODULE:
                extra = sorted(set(names) - set(STAND_IN_NAMES))
                if extra and context == "module":
                    raise EntriesLayoutError(f"{where}: needs {extra}, which the stand-in does not give")
                stand_in.update(names)
                continue
            targets = [_module_file(wheel, f"{module}.{n}") for n in names]
            if not (names and all(targets)):
                targets = [_module_file(wheel, module)]
            if all(t is not None and _in_roots(t) for t in targets):
                todo.extend(targets)
            elif context == "module":
                raise EntriesLayoutError(f"{where}: outside {', '.join(CODE_ROOTS)} or not a module "
                                         f"file of the wheel: not loaded, not stubbed")
            else:
                left_out.append(where)
    return files, stand_in, environment, sorted(set(left_out))


def build_entries_tree(wheel: Wheel, folder: Path) -> EntriesTree:
    """Lay the entries launcher out under ``folder/site`` (replaced) and write ``folder/tree.json``.

    Raises:
        EntriesLayoutError: no entries launcher, or an import this layout cannot satisfy.
        RecordError: a file whose bytes do not match RECORD.
    """
    if START not in wheel.record:
        raise EntriesLayoutError(f"sglang {wheel.release} has no entries launcher ({START})")
    files, stand_in, environment, left_out = closure(wheel)
    for name in wheel.record:
        if name.startswith(DATA_ROOTS):
            files[name] = wheel.member_bytes(name)
    metadata = f"sglang-{wheel.release}.dist-info/METADATA"
    if metadata in wheel.record:  # importlib.metadata.version("sglang") names the release
        files[metadata] = wheel.member_bytes(metadata)
    folder = Path(folder)
    site = folder / "site"
    if site.exists():
        shutil.rmtree(site)
    stand_in_path = _path(STAND_IN_MODULE)
    python_files = [p for p in files if p.endswith(".py")] + [stand_in_path]
    synthetic = [p for p in _parents(python_files) if f"{p}/__init__.py" not in files]
    for package in synthetic:
        (site / package).mkdir(parents=True, exist_ok=True)
        (site / package / "__init__.py").write_text(EMPTY_INIT)
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    (site / stand_in_path).write_text(STAND_IN_SOURCE)
    tree = EntriesTree(
        release=wheel.release, wheel=wheel.path.name, wheel_sha256=wheel.sha256, site=str(site),
        module=START[:-3].replace("/", "."), launcher=LAUNCHER,
        files={p: sha256_hex(d) for p, d in sorted(files.items())},
        stand_ins={STAND_IN_MODULE: STAND_IN_NOTE + f" (names imported: {', '.join(sorted(stand_in))})"},
        synthetic_packages=[p.replace("/", ".") for p in synthetic],
        environment=sorted(environment), not_laid_out=left_out)
    (folder / TREE_JSON).write_text(json.dumps(asdict(tree), indent=1) + "\n")
    return tree


def load_tree(folder: Path) -> EntriesTree:
    """The tree laid out earlier in ``folder`` (its ``tree.json``); ``site`` is re-pointed at
    ``folder/site`` (a carried copy lives elsewhere). Raises OSError / ValueError when absent."""
    folder = Path(folder)
    doc = json.loads((folder / TREE_JSON).read_text(encoding="utf-8"))
    doc["site"] = str(folder / "site")
    return EntriesTree(**doc)


def check_tree(tree: EntriesTree) -> list[str]:
    """Every laid-out wheel file whose bytes no longer match the SHA-256 it was copied with
    (RECORD's), as ``path (why)``; empty when the tree is intact."""
    bad = []
    for path, digest in tree.files.items():
        target = Path(tree.site) / path
        if not target.is_file():
            bad.append(f"{path} (missing)")
        elif file_sha256(target) != digest:
            bad.append(f"{path} (differs from RECORD)")
    return bad
