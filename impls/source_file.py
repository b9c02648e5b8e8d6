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
module, a file it ``exec``\\ s, a package ``__init__`` that changes its ``__path__`` at run
time) runs code the digest does not name, as it always could. Two ways for the import to run
other code than that file's are refused (the module then has no source file here: no digest
rather than a false one): a spec whose loader is not the standard one reading that very file (a
finder's loader could run anything while naming the file as its origin), and cached bytecode
(``__pycache__``) that the import would run instead of compiling the file, whose code is not the
file's (a ``.pyc`` planted with the file's mtime and size, or an unchecked hash-based one).

A finder is code, and can answer the lookup otherwise than the import (it sees its caller, or
keeps state that makes it caller-sensitive): :mod:`impls.known_finders` asks only finders of
known types, in a known state, while the import system reads as when it was imported, and
refuses otherwise; :func:`find_source` then gives None (no digest rather than a false one).
"""

from __future__ import annotations

import _imp
import ast
import builtins
import hashlib
import importlib.machinery
import importlib.util
import io
import marshal
import os
import pathlib
import sys

from impls.import_snapshot import intact
from impls.known_finders import Refused, find_spec, is_rewriting_hook, rewriting_module

# --- references taken when this module is imported (before any planner code runs here) --------

_SourceFileLoader = importlib.machinery.SourceFileLoader
_open = io.open
_sha256 = hashlib.sha256
_compile = builtins.compile
_loads = marshal.loads
_stat = os.stat
_cache_from_source = importlib.util.cache_from_source
_source_hash = importlib.util.source_hash
_MAGIC = importlib.util.MAGIC_NUMBER
_SOURCE_SUFFIXES = tuple(importlib.machinery.SOURCE_SUFFIXES)


def find_source(module_name: str) -> str | None:
    """The path of the source file (``.py``) the import of ``module_name`` would load (a
    package's ``__init__.py``), or None when no finder finds it, a level is not a package, or it
    has no source file (a namespace package, an extension module); None too (no digest rather
    than a false one) when the lookup is refused (:func:`lookup` says why). Nothing is
    imported."""
    return lookup(module_name)[0]


PLANNER_PATH_ENV = "CONFORMANCE_PLANNER_PATH"
"""Folders (``os.pathsep``-separated) that hold external planners' modules: given to the
processes that import a planner (the probe, the isolation workers: :func:`child_pythonpath`),
searched for its source without importing (:mod:`impls.planner_path`), never put on the judge's
own ``sys.path``."""


def planner_folders() -> list[str]:
    """The folders of ``$CONFORMANCE_PLANNER_PATH``, each made absolute (against the working
    directory), empty entries dropped."""
    value = os.environ.get(PLANNER_PATH_ENV, "")
    return [os.path.abspath(entry) for entry in value.split(os.pathsep) if entry]


def child_pythonpath(inherited: str | None) -> str:
    """The ``PYTHONPATH`` of a child that must import a planner module as this process would (the
    probe, an isolation worker: both start with ``-P``): this process's ``sys.path``, its empty
    entry (the working directory) as the working directory's path, then ``inherited`` (the
    environment's own ``PYTHONPATH``, may be None or empty).

    A relative entry other than the empty one is left out: the interpreter makes the entries it
    starts with absolute (``site.removeduppaths``), so a relative one was added after start: by
    a ``.pth`` file (setuptools' editable install appends the placeholder of its namespace path
    hook, ``__editable__.<dist>-<version>.finder.__path_hook__``, which its hook answers by that
    exact string) or at run time. Here its finder was cached when this process met it; a child
    given it on ``PYTHONPATH`` makes it absolute against its own working directory and searches
    that folder with a fresh finder, ahead of every meta-path finder: a folder a planner's code
    can create, holding a module the digest never read. The child's own ``.pth`` files add the
    placeholder again as they did here. The planner folders (:func:`planner_folders`) come last:
    the child finds a planner there as :func:`impls.planner_path.find_planner_source` does."""
    entries = [os.getcwd() if entry == "" else entry for entry in sys.path
               if isinstance(entry, str) and (entry == "" or os.path.isabs(entry))]
    return os.pathsep.join(p for p in [*entries, inherited or "", *planner_folders()] if p)


REFUSED_FINDER = "a finder of an unknown type or state stands before the answer"
REFUSED_IMPORT_SYSTEM = "the import system was rebound since the harness started"
REFUSED_LOADER = "its finder names a loader of its own, not the standard one reading the file"
REFUSED_BYTECODE = "the import would run cached bytecode that is not the file's code"
REFUSED_NO_SOURCE = ("the import would load no source file (bytecode alone, or an extension "
                     "module): the code that runs cannot be read")


def lookup(module_name: str) -> tuple[str | None, str | None]:
    """``(path, None)``: the source file the import of ``module_name`` would load
    (:func:`find_source`); ``(None, None)``: there is none (not found, not a package, no source
    file, unreadable); ``(None, why)``: the lookup is refused, ``why`` one of the ``REFUSED_*``
    reasons (module docstring): a file may be there, but which one the import runs cannot be
    told. Nothing is imported."""
    origin, refused = origin_of(module_name)
    if origin is None:
        return None, refused
    return _runs_its_file(origin)


def _runs_its_file(origin: str) -> tuple[str | None, str | None]:
    """``(origin, None)`` when importing ``origin`` runs its own code, ``(None,
    REFUSED_BYTECODE)`` when cached bytecode of other code would run, ``(None, None)`` when it
    cannot be read."""
    try:
        with _open(origin, "rb") as handle:
            if not runs_its_source(origin, handle.read()):
                return None, REFUSED_BYTECODE
    except OSError:
        return None, None
    return origin, None


def origin_of(module_name: str) -> tuple[str | None, str | None]:
    """:func:`lookup` without its bytecode check (which compiles the file): ``(path, None)``, the
    source file the import's finder names with the standard loader; ``(None, None)`` or
    ``(None, why)`` as :func:`lookup`. A cheap first look, for callers that only keep some
    modules (:mod:`impls.source_imports`) and :func:`lookup` those."""
    try:
        if not intact():
            return None, REFUSED_IMPORT_SYSTEM
        spec = _find(module_name)
    except Refused:
        return None, REFUSED_FINDER
    if spec is None:
        return None, None
    origin = spec.origin if spec.has_location else None
    if type(origin) is not str:
        return None, None  # built in, frozen, a namespace package: no file
    if not origin.endswith(_SOURCE_SUFFIXES):
        return None, REFUSED_NO_SOURCE
    loader = spec.loader
    if type(loader) is not _SourceFileLoader or type(loader.path) is not str \
            or loader.path != origin:
        return None, REFUSED_LOADER  # what a loader of the finder's own runs is its choice
    return origin, None


def location_of(module_name: str) -> str | None:
    """The file the import of ``module_name`` would load, of any kind (source, bytecode,
    extension), found as :func:`lookup` finds it, or None (not found, no file, refused)."""
    try:
        if not intact():
            return None
        spec = _find(module_name)
    except Refused:
        return None
    origin = spec.origin if spec is not None and spec.has_location else None
    return origin if type(origin) is str else None


def _find(module_name: str):
    """The spec of ``module_name``'s last level, level by level (None: a level is not found or
    not a package). Raises :class:`Refused`."""
    search, spec = None, None
    parts = module_name.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = find_spec(name, search)
        if spec is None:
            return None
        if depth < len(parts):
            search = spec.submodule_search_locations
            if not search:
                return None
            search = list(search)
    return spec


def runs_its_source(path: str, source: bytes) -> bool:
    """Whether importing ``path`` (whose bytes are ``source``) runs the code of ``source``: False
    when a cached bytecode file the import would load instead of compiling ``path`` (for any
    optimization level) holds other code. The import's own checks are repeated here: the magic
    number, then a hash-based file's source hash where the import checks it, else the source's
    mtime and size as the file records them."""
    for level in ("", 1, 2):
        try:
            with _open(_cache_from_source(path, optimization=level), "rb") as handle:
                data = handle.read()
            stat = _stat(path)
        except (OSError, NotImplementedError, ValueError):
            continue
        if len(data) < 16 or data[:4] != _MAGIC:
            continue  # the import recompiles it
        flags = int.from_bytes(data[4:8], "little")
        if flags & ~0b11:
            continue  # the import refuses it
        if flags & 0b1:  # hash-based: checked when its flag says so, or always / never
            mode = _imp.check_hash_based_pycs
            if mode == "always" or (flags & 0b10 and mode != "never"):
                if data[8:16] != _source_hash(source):
                    continue
        elif (int.from_bytes(data[8:12], "little") != int(stat.st_mtime) & 0xFFFFFFFF
              or int.from_bytes(data[12:16], "little") != stat.st_size & 0xFFFFFFFF):
            continue
        try:
            if _loads(data[16:]) != _compile(source, path, "exec", dont_inherit=True,
                                             optimize=level or 0):
                return False
        except Exception:  # noqa: BLE001 - unreadable bytecode, or a source that does not compile
            return False
    return _rewritten_cache_runs_its_source(path, source)


def _rewritten_cache_runs_its_source(path: str, source: bytes) -> bool:
    """False when pytest's assertion-rewriting finder of this process would run its cached
    rewritten bytecode of ``path`` (``__pycache__/NAME.cpython-311-pytest-X.pyc``, trusted on the
    source hash in its header, which anyone can compute) and that bytecode is not the file's code
    with its asserts rewritten."""
    rewrite = rewriting_module()
    configs = [finder.config for finder in sys.meta_path if is_rewriting_hook(finder)]
    if rewrite is None or not configs:
        return True
    try:
        fn = pathlib.Path(path)
        data = (rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)).read_bytes()
    except (OSError, AttributeError, ValueError):
        return True
    if (len(data) < 16 or data[:4] != _MAGIC
            or data[4:8] != b"\x03\x00\x00\x00"
            or data[8:16] != _source_hash(source)[:8]):
        return True  # it rewrites the file afresh
    try:
        cached = _loads(data[16:])
        for config in configs:
            tree = ast.parse(source, filename=path)
            rewrite.rewrite_asserts(tree, source, path, config)
            if cached != _compile(tree, path, "exec", dont_inherit=True):
                return False
    except Exception:  # noqa: BLE001 - unreadable bytecode, or a source that does not compile
        return False
    return True


def digest(module_name: str, path: str | None) -> dict | None:
    """``{"module", "file", "sha256"}`` of ``module_name`` whose source is ``path``: ``file``
    relative to the folder the module is imported from (``impls/offsets_planner/triton_planner.py``,
    so that no machine's path lands in a results file), ``sha256`` the file's bytes'. None when
    ``path`` is None or cannot be read, or the import would run cached bytecode of other code
    (:func:`runs_its_source`)."""
    if path is None:
        return None
    try:
        with _open(path, "rb") as handle:
            source = handle.read()
    except OSError:
        return None
    if not runs_its_source(path, source):
        return None  # the import would run cached bytecode of other code
    sha = _sha256(source).hexdigest()
    parts = module_name.split(".")
    tail = (*parts, "__init__.py") if os.path.basename(path) == "__init__.py" else \
        (*parts[:-1], parts[-1] + ".py")
    return {"module": module_name, "file": "/".join(tail), "sha256": sha}
