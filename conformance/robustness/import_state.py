"""The environment variables and the import system of a process, read and set back for
:data:`conformance.robustness.torch_state.SETTINGS` (tests/test_hostile18.py): a planner right in
every byte that left either changed was green, yet its caller's process runs otherwise.

* ``os.environ`` (:func:`environ`): a variable set, changed or removed during a call (``PATH``,
  ``LD_PRELOAD``, ``CUDA_VISIBLE_DEVICES``, ``TORCH_*``) is read by every process the caller
  starts and by every library that reads it later. Variables a planner's module *adds* while it
  is first imported are no change: a library sets its own on import (this project's Triton
  planner sets ``TRITON_INTERPRET`` on a machine without CUDA, its Numba planner
  ``NUMBA_ENABLE_CUDASIM``: :mod:`impls.kernel_modes`); the isolation worker takes them into the
  case's starting state (:func:`with_import_additions`). One changed or removed then is a change.
  Since tests/test_hostile20_import.py the worker imports those libraries first and judges what
  the planner module's own import adds (:mod:`conformance.robustness.first_import`).
  Only Python's mapping is read: a variable set from C (``setenv`` through ``ctypes``, or by a
  library: torch's CUDA initialisation sets ``CUDA_MODULE_LOADING``) is not seen.
* ``sys.path``, ``sys.meta_path`` and ``sys.path_hooks`` (:func:`import_lists`): an entry put
  ahead of one that was there (a folder first on ``sys.path``, a finder first on
  ``sys.meta_path``: the caller's next import of a module not yet loaded runs the planner's file),
  or an entry removed, is a change; one appended after every old entry is not (``setuptools``
  and other libraries append their folders when first imported: appended, they shadow nothing).
  ``sys.path`` entries are compared by value when they are ``str`` (a copy of the list is the same
  path), other entries by identity.
* ``sys.path_importer_cache`` (:func:`finder_cache`): a finder of a folder replaced, or one added,
  that is not what the import system itself puts there (``None``, a ``zipimporter``, or a
  ``FileFinder`` whose loaders are the standard library's): the caller's next import from that
  folder goes through the planner's finder, whatever ``sys.path`` says. A cached finder removed
  is no change (``importlib.invalidate_caches`` drops some; the import system makes them again).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import os
import sys
import zipimport

_STANDARD_LOADERS = frozenset({importlib.machinery.SourceFileLoader,
                               importlib.machinery.SourcelessFileLoader,
                               importlib.machinery.ExtensionFileLoader})
"""The loader classes the import system's own ``FileFinder`` path hook is made with
(``importlib._bootstrap_external._get_supported_file_loaders``)."""


def environ() -> tuple[object, dict[str, str]]:
    """(the ``os.environ`` object, its variables now)."""
    return os.environ, dict(os.environ)


def environ_changed(before, after) -> list[str]:
    """``LD_PRELOAD set``, ``PATH changed``, ``HOME removed`` (and ``os.environ replaced``) for
    each difference between two :func:`environ` values (values are not printed: they can hold a
    secret of the caller, or the planner's text)."""
    out = ["os.environ replaced"] if before[0] is not after[0] else []
    was, now = before[1], after[1]
    for name in sorted(set(was) | set(now), key=str):
        if name not in now:
            out.append(f"{name} removed")
        elif name not in was:
            out.append(f"{name} set")
        elif was[name] != now[name]:
            out.append(f"{name} changed")
    return out


def set_environ(value) -> None:
    """Put ``os.environ`` (the object, then every variable) back to a :func:`environ` value."""
    os.environ = value[0]
    for name in [n for n in os.environ if n not in value[1]]:
        del os.environ[name]
    for name, text in value[1].items():
        if os.environ.get(name) != text:
            os.environ[name] = text


def with_import_additions(before, imported_from, imported_to):
    """``before`` (an :func:`environ` value read at a case's start) with the variables that a
    module's first import added (present in ``imported_to``, absent from ``imported_from``: the
    values read around the import) taken in: no change of the case."""
    added = {n: v for n, v in imported_to[1].items() if n not in imported_from[1]}
    return before[0], {**before[1], **added}


_LIBC = ctypes.CDLL(None)
C_ENVIRON = "environment variables (set from C, unseen by os.environ)"
LIBRARY_VARIABLES = frozenset({"CUDA_MODULE_LOADING"})
"""Set from C by torch's CUDA initialisation (``setenv``), on the first CUDA op of a process."""


def c_environ() -> tuple[str, dict[str, bytes | None]]:
    """(:data:`C_ENVIRON`, {name: value}) of each variable of the C library's ``environ`` whose
    value ``os.environ`` does not hold (None: one ``os.environ`` holds and C does not), but
    :data:`LIBRARY_VARIABLES`; shaped as an :func:`environ` value (its lister names them)."""
    entries = ctypes.POINTER(ctypes.c_char_p).in_dll(_LIBC, "environ")
    c: dict[bytes, bytes] = {}
    i = 0
    while entries[i] is not None:
        name, _, value = entries[i].partition(b"=")
        c.setdefault(name, value)
        i += 1
    python = dict(os.environb)
    differ = {n: v for n, v in c.items() if python.get(n) != v}
    differ.update({n: None for n in python if n not in c})
    return C_ENVIRON, {os.fsdecode(n): v for n, v in differ.items()
                       if os.fsdecode(n) not in LIBRARY_VARIABLES}


def set_c_environ(value) -> None:
    """Make C's environment agree with ``os.environ`` again for every variable that now disagrees
    and did not in ``value``."""
    for name in set(c_environ()[1]) - set(value[1]):
        raw = os.fsencode(name)
        if raw in os.environb:
            _LIBC.setenv(raw, os.environb[raw], 1)
        else:
            _LIBC.unsetenv(raw)


LISTS = ("sys.path", "sys.meta_path", "sys.path_hooks")


def _key(entry) -> object:
    """How an entry is compared: a ``str`` by value, anything else by identity."""
    return entry if type(entry) is str else ("<object>", id(entry))


def import_lists() -> tuple[tuple[object, tuple], ...]:
    """(the list object, its entries) of each of :data:`LISTS`, in that order."""
    return tuple((lst, tuple(lst)) for lst in (sys.path, sys.meta_path, sys.path_hooks))


def _describe(entry) -> str:
    if type(entry) is str:
        return repr(entry)
    kind = type(entry) if not isinstance(entry, type) else entry
    return f"<{type.__dict__['__name__'].__get__(kind)}>"


def import_lists_changed(before, after) -> list[str]:
    """What differs between two :func:`import_lists` values: ``sys.path: '/tmp/x' put ahead of
    '/usr/lib/python3.12'`` for a new entry before an old one, ``sys.meta_path: <Finder> removed``
    for an old one gone (or reordered); entries appended after every old one are no change."""
    out = []
    for name, (_, was), (_, now) in zip(LISTS, before, after):
        old = [_key(e) for e in was]
        keys = [_key(e) for e in now]
        olds, news = set(old), set(keys)
        kept = [k for k in keys if k in olds]
        if kept != old:
            gone = [e for e in was if _key(e) not in news]
            out.append(f"{name}: {_describe(gone[0])} removed" if gone
                       else f"{name}: its entries reordered")
            continue
        last_old = max((i for i, k in enumerate(keys) if k in olds), default=-1)
        ahead = [e for e, k in zip(now[:last_old], keys[:last_old]) if k not in olds]
        if ahead:
            first_old = next(e for e, k in zip(now, keys) if k in olds)
            out.append(f"{name}: {_describe(ahead[0])} put ahead of {_describe(first_old)}")
    return out


def set_import_lists(value) -> None:
    """Put each list of :data:`LISTS` back (the object, then its entries)."""
    sys.path, sys.meta_path, sys.path_hooks = (lst for lst, _ in value)
    for (lst, entries) in value:
        lst[:] = entries


def finder_cache() -> tuple[object, dict]:
    """(the ``sys.path_importer_cache`` object, a copy of it)."""
    return sys.path_importer_cache, dict(sys.path_importer_cache)


def _standard_finder(finder, cached_types: set) -> bool:
    """Whether ``finder`` is what the import system caches itself: ``None``, a ``zipimporter``,
    a ``FileFinder`` (exactly) whose loaders are the standard library's, or an object of another
    exact type of ``cached_types`` (what the cache held at the case's start: the finders a path
    hook of the process makes, as setuptools' editable installs' namespace finder)."""
    if finder is None or type(finder) is zipimport.zipimporter:
        return True
    if type(finder) is importlib.machinery.FileFinder:
        loaders = getattr(finder, "_loaders", ())
        return all(type(pair) is tuple and len(pair) == 2 and pair[1] in _STANDARD_LOADERS
                   for pair in loaders)  # (suffix, loader class) pairs
    return type(finder) in cached_types


def finder_cache_changed(before, after) -> list[str]:
    """``sys.path_importer_cache replaced``, or ``finder of '/usr/lib/python3.12' replaced`` for
    each folder whose cached finder is another object where either is not a standard one (both
    ways: :func:`conformance.robustness.torch_state.restore` compares the values the other way
    round)."""
    if before[0] is not after[0]:
        return ["sys.path_importer_cache replaced"]
    was, now = before[1], after[1]
    # the types of the finders both hold (a path hook's of the process), never a replaced one's
    cached = {type(f) for p, f in was.items() if now.get(p, _GONE) is f}
    cached.discard(importlib.machinery.FileFinder)
    return [f"finder of {_describe(path)} {'replaced' if path in was else 'added'}"
            for path, finder in now.items()
            if (path not in was or was[path] is not finder)
            and not (_standard_finder(finder, cached)
                     and _standard_finder(was.get(path), cached))]


_GONE = object()


def set_finder_cache(value) -> None:
    """Put ``sys.path_importer_cache`` back, without the finders it did not hold."""
    sys.path_importer_cache = value[0]
    for path in [p for p in value[0] if p not in value[1]]:
        del value[0][path]
    value[0].update(value[1])


ENVIRON = "environment variables (os.environ)"
"""The setting of :func:`environ`, which the isolation worker reads around a planner's import."""
SETTINGS = {
    ENVIRON: (environ, set_environ),
    C_ENVIRON: (c_environ, set_c_environ),
    "import system (sys.path, sys.meta_path, sys.path_hooks)": (import_lists, set_import_lists),
    "import finders (sys.path_importer_cache)": (finder_cache, set_finder_cache),
}
"""Name -> (getter, setter): :data:`conformance.robustness.torch_state.SETTINGS` adds them."""
NAMED_CHANGES = {ENVIRON: ("changed:", environ_changed),
                 C_ENVIRON: ("changed:", environ_changed),
                 "import system (sys.path, sys.meta_path, sys.path_hooks)": (
                     "changed:", import_lists_changed),
                 "import finders (sys.path_importer_cache)": ("changed:", finder_cache_changed)}
"""The settings above, compared by their listers (the planner's objects: never ``==``)."""
