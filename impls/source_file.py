"""Which source file a planner module is, read by the process that asks, without running the module.

An external planner's module runs only in children (the probe, the isolation worker), and
whatever such a process prints is the module's own word: its top level can rebind any function
there, set its own ``__file__``, or leave a process behind that prints after the probe exited
(``tests/planted/forges_probe.py``). So the source digest a run records (:func:`digest`) is
computed here, in the harness's process, from the file the import system *would* load: each
finder of ``sys.meta_path`` asked in turn, level by level, a package's ``__path__`` taken from
its spec (``submodule_search_locations``) rather than from importing it, so that no package
``__init__`` of the planner's runs either.

What it pins is that one file as the harness read it: a module that loads other code (another
module, a file it ``exec``\\ s, a package ``__init__`` that changes its ``__path__`` at run time) runs
code the digest does not name, as it always could. Two ways for the import to run other code than
that file's are refused (the module then has no source file here: no digest rather than a false
one): a spec whose loader is not the standard one reading that very file (a finder's loader could
run anything while naming the file as its origin), and cached bytecode (``__pycache__``) that the
import would run instead of compiling the file, whose code is not the file's (a ``.pyc`` planted
with the file's mtime and size, or an unchecked hash-based one).
"""

from __future__ import annotations

import _imp
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import sys


def find_source(module_name: str) -> str | None:
    """The path of the source file (``.py``) the import of ``module_name`` would load (a
    package's ``__init__.py``), or None when no finder finds it, a level is not a package, or it
    has no source file (a namespace package, an extension module). Nothing is imported."""
    search, spec = None, None
    parts = module_name.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = _find_spec(name, search)
        if spec is None:
            return None
        if depth < len(parts):
            search = spec.submodule_search_locations
            if not search:
                return None
    origin = spec.origin if spec.has_location else None
    if not origin or not origin.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
        return None
    loader = spec.loader
    if type(loader) is not importlib.machinery.SourceFileLoader or loader.path != origin:
        return None  # a loader of the finder's own: what it runs is its choice, not the file
    try:
        with open(origin, "rb") as handle:
            if not runs_its_source(origin, handle.read()):
                return None
    except OSError:
        return None
    return origin


def runs_its_source(path: str, source: bytes) -> bool:
    """Whether importing ``path`` (whose bytes are ``source``) runs the code of ``source``: False
    when a cached bytecode file the import would load instead of compiling ``path`` (for any
    optimization level) holds other code. The import's own checks are repeated here: the magic
    number, then a hash-based file's source hash where the import checks it, else the source's
    mtime and size as the file records them."""
    for level in ("", 1, 2):
        try:
            with open(importlib.util.cache_from_source(path, optimization=level), "rb") as handle:
                data = handle.read()
            stat = os.stat(path)
        except (OSError, NotImplementedError, ValueError):
            continue
        if len(data) < 16 or data[:4] != importlib.util.MAGIC_NUMBER:
            continue  # the import recompiles it
        flags = int.from_bytes(data[4:8], "little")
        if flags & ~0b11:
            continue  # the import refuses it
        if flags & 0b1:  # hash-based: checked when its flag says so, or always / never
            mode = _imp.check_hash_based_pycs
            if mode == "always" or (flags & 0b10 and mode != "never"):
                if data[8:16] != importlib.util.source_hash(source):
                    continue
        elif (int.from_bytes(data[8:12], "little") != int(stat.st_mtime) & 0xFFFFFFFF
              or int.from_bytes(data[12:16], "little") != stat.st_size & 0xFFFFFFFF):
            continue
        try:
            if marshal.loads(data[16:]) != compile(source, path, "exec", dont_inherit=True,
                                                   optimize=level or 0):
                return False
        except Exception:  # noqa: BLE001 - unreadable bytecode, or a source that does not compile
            return False
    return True


def _rewriting_hook_type():
    """pytest's assertion-rewriting finder class, when pytest is loaded (else None)."""
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    return getattr(rewrite, "AssertionRewritingHook", None)


def _find_spec(name: str, search):
    # pytest's assertion-rewriting finder claims every module of a distribution that has a pytest
    # plugin when that distribution's metadata is on sys.path (``python -m pytest`` in a checkout
    # installed with ``pip install -e``: its egg-info sits in the working directory), naming
    # itself as the loader; it takes the spec of the standard path finder, and loads that same
    # source file with its assert statements rewritten. It is passed over, so that the standard
    # finder's spec (the same file) is judged; any other finder's loader is still refused, and so
    # is an instance of that class with a method of its own (what it loads is its choice then).
    rewriting = _rewriting_hook_type()
    for finder in sys.meta_path:
        if (rewriting is not None and type(finder) is rewriting
                and not {"find_spec", "create_module", "exec_module", "get_code",
                         "get_data"} & set(vars(finder))):
            continue
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, None if search is None else list(search))
        except (ImportError, ValueError, OSError):
            continue
        if spec is not None:
            return spec
    return None


def digest(module_name: str, path: str | None) -> dict | None:
    """``{"module", "file", "sha256"}`` of ``module_name`` whose source is ``path``: ``file``
    relative to the folder the module is imported from (``impls/offsets_planner/triton_planner.py``,
    so that no machine's path lands in a results file), ``sha256`` the file's bytes'. None when
    ``path`` is None or cannot be read, or the import would run cached bytecode of other code
    (:func:`runs_its_source`)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            source = handle.read()
    except OSError:
        return None
    if not runs_its_source(path, source):
        return None  # the import would run cached bytecode of other code
    sha = hashlib.sha256(source).hexdigest()
    parts = module_name.split(".")
    tail = (*parts, "__init__.py") if os.path.basename(path) == "__init__.py" else \
        (*parts[:-1], parts[-1] + ".py")
    return {"module": module_name, "file": "/".join(tail), "sha256": sha}
