"""Load a release's offsets launcher from its wheel, unchanged: which files it needs, and a folder
that imports them without sglang's package ``__init__`` chain.

The launcher ``launch_plan_offsets_kernel`` lives in ``<pkg>/plan/offsets_kernel.py`` with
``<pkg>`` = ``sglang/kernels/ops/kv_canary`` (0.5.20 and later) or ``sglang/jit_kernel/kv_canary``
(0.5.15). Its imports are followed from the module level (``if TYPE_CHECKING:`` blocks skipped):
every ``sglang.*`` module they reach is copied byte for byte from the wheel (checked against RECORD);
every package on the way gets an empty ``__init__.py`` of our own, so that neither sglang's top
``__init__`` nor ``kv_canary/__init__`` (which imports sglang's kernel registry, msgspec) ever runs.
One module may be a stand-in, sglang's JIT utils (``verify.py`` imports ``cache_once``, ``load_jit``,
``make_cpp_args`` from it; the real one reaches ``sglang.srt.utils`` and the server's dependencies):
``cache_once`` is the identity, the other two raise. It is named in every results file
(``fingerprint.planners[...].upstream.stand_ins``). Any other module outside the wheel's kernel
package is a :class:`ReleaseLayoutError`, never a stub.

The folder (``site/``) also holds the wheel's own ``METADATA``, so that
``importlib.metadata.version("sglang")`` names the release (the manifests' ``releases`` ranges read
it, :mod:`conformance.corpus.manifest`).
"""

from __future__ import annotations

import ast
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from conformance.corpus.corpus_subject import contract as _contract
from conformance.fingerprint import PROVENANCE_ATTR
from conformance.upstream.wheel import Wheel, sha256_hex

ARGUMENT_NAMES = _contract.ARGUMENT_NAMES

LAUNCHER = "launch_plan_offsets_kernel"
"""The launcher's name in every release (spec section 3's signature)."""
KERNEL_PACKAGES = ("sglang/kernels/ops/kv_canary", "sglang/jit_kernel/kv_canary")
"""Where releases keep the KV canary, newest first."""
STAND_IN_MODULES = ("sglang.kernels.jit.utils", "sglang.jit_kernel.utils")
"""The only modules a stand-in may replace: sglang's CUDA JIT utils (no code under test)."""
STAND_IN_NAMES = ("cache_once", "load_jit", "make_cpp_args")
STAND_IN_SOURCE = '''"""Stand-in for {module}, written by planner-conformance; NOT sglang's code.

The real module builds CUDA extensions (tvm-ffi) and imports sglang.srt.utils. The offsets launcher
never calls it: verify.py only decorates its JIT loaders with cache_once at import time.
"""


def cache_once(fn):
    return fn


def load_jit(*args, **kwargs):
    raise RuntimeError("planner-conformance stand-in for {module}: load_jit is not available")


def make_cpp_args(*args, **kwargs):
    raise RuntimeError("planner-conformance stand-in for {module}: make_cpp_args is not available")
'''


class ReleaseLayoutError(RuntimeError):
    """The release has no offsets launcher, another signature, or imports this loader will not stub."""


@dataclass
class ReleaseTree:
    """A release laid out for import. ``site`` goes on PYTHONPATH; ``planner`` is the
    ``module:attr`` name; ``files`` maps each wheel file copied to its SHA-256 (RECORD's)."""

    release: str
    site: Path
    planner: str
    files: dict[str, str]
    stand_ins: dict[str, str]
    synthetic_packages: list[str]
    environment_imports: list[str] = field(default_factory=list)


def find_kernel_package(wheel: Wheel) -> str:
    """The wheel folder holding ``plan/offsets_kernel.py``. Raises ReleaseLayoutError."""
    for package in KERNEL_PACKAGES:
        if f"{package}/plan/offsets_kernel.py" in wheel.record:
            return package
    raise ReleaseLayoutError(f"sglang {wheel.release} has no offsets kernel "
                             f"(none of {', '.join(p + '/plan/offsets_kernel.py' for p in KERNEL_PACKAGES)})")


def launcher_signature(source: bytes) -> tuple[str, ...] | None:
    """The keyword-only parameter names of ``launch_plan_offsets_kernel`` in ``source``, or None
    when it defines no such function (or takes positional parameters)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == LAUNCHER:
            if node.args.args or node.args.posonlyargs or node.args.vararg:
                return None
            return tuple(a.arg for a in node.args.kwonlyargs)
    return None


def _module_level_imports(tree: ast.Module) -> list[ast.stmt]:
    out, stack = [], list(tree.body)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
    return out


def _imports(source: bytes) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) of each module-level import (names empty for ``import X``)."""
    found = []
    for node in _module_level_imports(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, ()) for alias in node.names)
        elif node.level == 0 and node.module:
            found.append((node.module, tuple(alias.name for alias in node.names)))
        else:
            raise ReleaseLayoutError(f"relative import (level {node.level}) not followed")
    return found


def _path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def closure(wheel: Wheel, start: str) -> tuple[dict[str, bytes], dict[str, set[str]], set[str]]:
    """The wheel files the module at ``start`` imports, transitively.

    Returns:
        (files: wheel path -> verified bytes, stand_ins: module -> names imported from it,
        environment: top-level names imported from outside sglang).
    Raises:
        ReleaseLayoutError: an ``sglang`` module that is neither a wheel file under the kernel
        package nor a permitted stand-in; RecordError: bytes that do not match RECORD.
    """
    package = find_kernel_package(wheel)
    files: dict[str, bytes] = {}
    stand_ins: dict[str, set[str]] = {}
    environment: set[str] = set()
    todo = [start]
    while todo:
        path = todo.pop()
        if path in files:
            continue
        files[path] = wheel.member_bytes(path)
        for module, names in _imports(files[path]):
            if module.split(".")[0] != "sglang":
                environment.add(module.split(".")[0])
                continue
            if module in STAND_IN_MODULES:
                stand_ins.setdefault(module, set()).update(names)
                continue
            candidates = [_path(f"{module}.{n}") for n in names] if names else []
            submodules = [c for c in candidates if c in wheel.record]
            if submodules and len(submodules) == len(candidates):
                targets = submodules  # from package import module, ...
            elif _path(module) in wheel.record:
                targets = [_path(module)]
            else:
                raise ReleaseLayoutError(f"{path} imports {module} ({', '.join(names) or 'whole'}), "
                                         f"which is not a module file of the wheel (a package "
                                         f"__init__ or missing): not loaded, not stubbed")
            for target in targets:
                if not target.startswith(package + "/"):
                    raise ReleaseLayoutError(f"{path} imports {target}, outside {package}/: "
                                             f"not loaded, not stubbed")
                todo.append(target)
    for module, names in stand_ins.items():
        extra = sorted(names - set(STAND_IN_NAMES))
        if extra:
            raise ReleaseLayoutError(f"the kernel needs {module}.{', '.join(extra)}, which the "
                                     f"stand-in does not give")
    return files, stand_ins, environment


def _parents(paths) -> list[str]:
    """Every package folder above the given module paths (``sglang``, ``sglang/kernels``, ...)."""
    out = set()
    for path in paths:
        parts = path.split("/")[:-1]
        out.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return sorted(out)


def build_tree(wheel: Wheel, folder: Path) -> ReleaseTree:
    """Lay ``wheel``'s offsets launcher out under ``folder/site`` (replaced each time).

    Raises:
        ReleaseLayoutError: no offsets kernel, another launcher signature, an import not loadable.
        RecordError: a file whose bytes do not match RECORD.
    """
    package = find_kernel_package(wheel)
    start = f"{package}/plan/offsets_kernel.py"
    signature = launcher_signature(wheel.member_bytes(start))
    if signature is None:
        raise ReleaseLayoutError(f"sglang {wheel.release}: {start} defines no keyword-only {LAUNCHER}")
    if set(signature) != set(ARGUMENT_NAMES):
        missing = sorted(set(ARGUMENT_NAMES) - set(signature))
        extra = sorted(set(signature) - set(ARGUMENT_NAMES))
        raise ReleaseLayoutError(f"sglang {wheel.release}: {LAUNCHER} has another signature "
                                 f"(missing {missing or 'none'}, extra {extra or 'none'})")
    files, stand_ins, environment = closure(wheel, start)
    site = Path(folder) / "site"
    if site.exists():
        shutil.rmtree(site)
    stand_in_paths = {_path(m): m for m in stand_ins}
    synthetic = [p for p in _parents([*files, *stand_in_paths])
                 if f"{p}/__init__.py" not in files]
    provenance = {"release": wheel.release, "wheel": wheel.path.name, "wheel_sha256": wheel.sha256,
                  "stand_ins": {m: "planner-conformance's stand-in: cache_once is the identity, "
                                   "load_jit and make_cpp_args raise" for m in sorted(stand_ins)},
                  "synthetic_packages": [p.replace("/", ".") for p in synthetic],
                  "record": {p: wheel.record[p] for p in sorted(files)}}
    for package_dir in synthetic:
        init = site / package_dir / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        text = '"""Empty parent package written by planner-conformance (not sglang\'s __init__)."""\n'
        if package_dir == "sglang":
            text += f"{PROVENANCE_ATTR} = {json.dumps(provenance, indent=1)}\n"
        init.write_text(text)
    for path, data in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_bytes(data)
    for path, module in stand_in_paths.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(STAND_IN_SOURCE.format(module=module))
    metadata = f"sglang-{wheel.release}.dist-info/METADATA"
    if metadata in wheel.record:
        (site / metadata).parent.mkdir(parents=True, exist_ok=True)
        (site / metadata).write_bytes(wheel.member_bytes(metadata))
    module = start[:-3].replace("/", ".")
    return ReleaseTree(wheel.release, site, f"{module}:{LAUNCHER}",
                       {p: sha256_hex(d) for p, d in files.items()},
                       provenance["stand_ins"], provenance["synthetic_packages"], sorted(environment))


def verify_tree(tree: ReleaseTree) -> None:
    """Re-hash every copied file under ``tree.site`` against RECORD (nothing edited since it was
    laid out). Raises RecordError naming the first that differs."""
    from conformance.upstream.wheel import RecordError, file_sha256
    for path, digest in tree.files.items():
        if file_sha256(tree.site / path) != digest:
            raise RecordError(f"{tree.site / path} no longer matches the wheel's RECORD")
