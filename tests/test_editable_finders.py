"""The meta path finders a ``.pth`` file puts on ``sys.meta_path`` at interpreter start, as
impls/editable_finders.py knows them: an entrant's own package installed with ``pip install -e``
(setuptools' editable finder of its project) is found and digested, and so is a module under
virtualenv's distutils patch finder; a finder that is not exactly what its tool writes, or that
is changed after the harness started, costs the digest (impls/source_file.py ``lookup`` refuses)
rather than giving a false one.

Each case runs in a fresh interpreter, so that this process's import state is untouched: the
finders are put there as at interpreter start (``site.addsitedir`` of a folder holding the
``.pth``) before impls.known_finders is imported, as the harness's process has them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.paths import REPO_ROOT
from impls.source_file import REFUSED_FINDER, REFUSED_IMPORT_SYSTEM

PLANNER = "def launch(**kwargs):\n    return None\n"


def _child(cwd: Path, script: str | tuple, *sites: Path):
    """The JSON a fresh interpreter prints last, run in ``cwd`` with this checkout first on its
    path and the ``.pth`` files of ``sites`` processed, then ``script`` (its parts, each
    dedented, one after the other)."""
    prelude = (f"import json, site, sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\n"
               f"for folder in {[str(s) for s in sites]!r}:\n    site.addsitedir(folder)\n")
    parts = (script,) if isinstance(script, str) else script
    code = prelude + "".join(textwrap.dedent(part) for part in parts)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd,
                         env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


# --- a real editable install: pip install -e of a setuptools project ------------------------


def _pip_install_editable(tmp_path: Path, dist: str, files: dict[str, str],
                          find: str = "") -> Path:
    """``pip install -e`` of the setuptools project ``dist`` 0.1 holding ``files`` (relative
    path: text), without network (no build isolation: this interpreter's setuptools builds it),
    under a prefix of its own. Returns the folder holding its ``.pth``."""
    project, prefix = tmp_path / dist, tmp_path / f"{dist}-prefix"
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        f'\n[project]\nname = "{dist}"\nversion = "0.1"\n{find}')
    out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                          "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                          "-e", str(project), "--prefix", str(prefix)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (pth,) = prefix.rglob("__editable__.*.pth")
    return pth.parent


def test_an_entrants_editable_installs_are_found_and_digested(tmp_path):
    """Two projects installed with ``pip install -e`` (setuptools' editable finders, last on
    sys.meta_path, one with a namespace package answered through ``_EditableNamespaceFinder``'s
    path entry): each module's file is the one the import loads, digested, no refusal."""
    kernel = _pip_install_editable(tmp_path, "toykernel", {"toykernel/__init__.py": "",
                                                           "toykernel/planner.py": PLANNER})
    spaced = _pip_install_editable(tmp_path, "toyns-kern", {
        "toyns/kern/__init__.py": "", "toyns/kern/planner.py": PLANNER},
        find='\n[tool.setuptools.packages.find]\ninclude = ["toyns*"]\n')
    got = _child(tmp_path, """
        from impls import editable_finders
        from impls.source_file import digest, lookup
        import toykernel.planner, toyns.kern.planner
        known = [finder.__module__ for _, finder, _, _ in editable_finders._EDITABLE]
        print(json.dumps([known, {name: [lookup(name), digest(name, lookup(name)[0]),
                                         sys.modules[name].__file__]
                                  for name in ("toykernel.planner", "toyns.kern.planner")}]))
    """, kernel, spaced)
    known, found = got
    assert {"__editable___toykernel_0_1_finder", "__editable___toyns_kern_0_1_finder"} <= set(known)
    for name, path in (("toykernel.planner", tmp_path / "toykernel" / "toykernel" / "planner.py"),
                       ("toyns.kern.planner",
                        tmp_path / "toyns-kern" / "toyns" / "kern" / "planner.py")):
        assert found[name] == [[str(path), None],
                               {"module": name, "file": name.replace(".", "/") + ".py",
                                "sha256": hashlib.sha256(PLANNER.encode()).hexdigest()},
                               str(path)]


# --- editable finder modules that are not setuptools' template ------------------------------

_EVIL = "__editable___evil_finder"


def _evil_finder(tmp_path: Path, change=None) -> Path:
    """A site folder whose ``.pth`` installs ``__editable___evil_finder``: setuptools' template
    for package ``toyevil`` (a folder not on sys.path, found only through it), its text changed
    by ``change`` (None: as setuptools writes it)."""
    from setuptools.command.editable_wheel import _finder_template

    package = tmp_path / "project" / "toyevil"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "planner.py").write_text(PLANNER)
    text = _finder_template("__editable__.evil.finder", {"toyevil": str(package)}, {})
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / f"{_EVIL}.py").write_text(text if change is None else change(text))
    (site_dir / "__editable__.evil.pth").write_text(f"import {_EVIL}; {_EVIL}.install()\n")
    return site_dir


def _changed_constant(text: str) -> str:
    old = 'parent, _, child = fullname.rpartition(".")'
    assert text.count(old) == 1
    return text.replace(old, 'parent, _, child = fullname.rpartition("/")')


def _extra_function(text: str) -> str:
    return text + "\n\ndef helper():\n    return None\n"


_LOOKUP = """
    from impls.source_file import lookup
    print(json.dumps(lookup("toyevil.planner")))
"""


def test_setuptools_template_unchanged_is_known(tmp_path):
    """The control of the attacks below: the same module as setuptools writes it is known, and
    the file it sends ``toyevil.planner`` to is found."""
    site_dir = _evil_finder(tmp_path)
    assert _child(tmp_path, _LOOKUP, site_dir) == [
        str(tmp_path / "project" / "toyevil" / "planner.py"), None]


@pytest.mark.parametrize("change", [_changed_constant, _extra_function],
                         ids=["find_spec-constant-changed", "extra-function"])
def test_an_editable_finder_module_other_than_the_template_is_refused(tmp_path, change):
    """Attack: a module named as setuptools names its editable finders whose ``find_spec`` has
    one constant changed, or that defines one function more than the template: not known, so
    the lookup through it is refused."""
    site_dir = _evil_finder(tmp_path, change)
    assert _child(tmp_path, _LOOKUP, site_dir) == [None, REFUSED_FINDER]


_STR_SUBCLASS = """
    class Folder(str):
        pass
    module = sys.modules[{evil!r}]
    module.MAPPING["toyevil"] = Folder(module.MAPPING["toyevil"])
"""


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_mapping_of_a_str_subclass_is_refused(tmp_path, when):
    """Attack: the template's ``MAPPING`` given a ``str`` subclass folder (its comparisons are
    its own), before the harness starts or after (as planner code could): refused."""
    site_dir = _evil_finder(tmp_path)
    forge = _STR_SUBCLASS.format(evil=_EVIL)
    script = (forge, _LOOKUP) if when == "before" else \
        ("from impls import source_file\n", forge, _LOOKUP)
    assert _child(tmp_path, script, site_dir) == [None, REFUSED_FINDER]


@pytest.mark.parametrize("make", [
    # a subclass answering otherwise
    "type('_EditableFinder', (real,), {'__module__': real.__module__,"
    " 'find_spec': classmethod(lambda cls, name, path=None, target=None: None)})",
    # the template's very attributes over a base of its own (whose methods come first for
    # anything the class does not define itself)
    "type('_EditableFinder', (type('Base', (), {'__slots__': ()}),),"
    " {k: v for k, v in vars(real).items() if k not in ('__dict__', '__weakref__')})",
], ids=["subclass", "other-base"])
def test_another_class_in_place_of_the_editable_finder_is_refused(tmp_path, make):
    """Attack: the module's ``_EditableFinder`` replaced, in the module and on sys.meta_path, by
    another class of its name and module: not the template."""
    site_dir = _evil_finder(tmp_path)
    script = f"""
        module = sys.modules[{_EVIL!r}]
        real = module._EditableFinder
        module._EditableFinder = other = {make}
        sys.meta_path[sys.meta_path.index(real)] = other
    """, _LOOKUP
    assert _child(tmp_path, script, site_dir) == [None, REFUSED_FINDER]


def test_the_template_code_run_in_other_globals_is_refused(tmp_path):
    """Attack: ``_EditableFinder.find_spec`` rebuilt from the template's very code object, but
    in globals of its own whose ``MAPPING`` sends ``toyevil`` to another folder (the import loads
    the hostile planner there, while the module's ``MAPPING`` still names the benign one): its
    function is not the module's, so it is not known."""
    site_dir = _evil_finder(tmp_path)
    elsewhere = tmp_path / "elsewhere" / "toyevil"
    elsewhere.mkdir(parents=True)
    (elsewhere / "__init__.py").write_text("")
    (elsewhere / "planner.py").write_text("def launch(**kwargs):\n    return 1\n")
    script = f"""
        import importlib, types
        module = sys.modules[{_EVIL!r}]
        function = vars(module._EditableFinder)["find_spec"].__func__
        fake = dict(vars(module), MAPPING={{"toyevil": {str(elsewhere)!r}}})
        module._EditableFinder.find_spec = classmethod(types.FunctionType(
            function.__code__, fake, function.__name__, function.__defaults__))
        from impls.source_file import lookup
        print(json.dumps([importlib.import_module("toyevil.planner").__file__,
                          lookup("toyevil.planner")]))
    """
    assert _child(tmp_path, script, site_dir) == [str(elsewhere / "planner.py"),
                                                  [None, REFUSED_FINDER]]


@pytest.mark.parametrize("rebind", [
    "module._EditableFinder.find_spec = classmethod(lambda cls, name, path=None, target=None:"
    " None)",
    "module.MAPPING = dict(module.MAPPING)",
    "module.PathFinder = type('PathFinder', (), {})",
])
def test_the_editable_finder_rebound_after_the_harness_started_is_refused(tmp_path, rebind):
    """Attack: planner code rebinds the known editable finder's method, or a global of its
    module, after impls.known_finders was imported: the import system no longer reads as then
    (``intact()`` is False), so every lookup is refused; before, the file was found."""
    site_dir = _evil_finder(tmp_path)
    script = f"""
        from impls.source_file import lookup
        before = lookup("toyevil.planner")
        module = sys.modules[{_EVIL!r}]
        {rebind}
        print(json.dumps([before, lookup("toyevil.planner")]))
    """
    before, after = _child(tmp_path, script, site_dir)
    assert before == [str(tmp_path / "project" / "toyevil" / "planner.py"), None]
    assert after == [None, REFUSED_IMPORT_SYSTEM]


# --- virtualenv's distutils patch finder ----------------------------------------------------

_VIRTUALENV_LIKE = '''\
import sys

_DISTUTILS_PATCH = "distutils.dist", "setuptools.dist"


class _Finder:
    fullname = None

    def find_spec(self, fullname, path, target=None):
        if fullname in _DISTUTILS_PATCH and self.fullname is None:
            return None
        return None


sys.meta_path.insert(0, _Finder())
'''
"""A ``_virtualenv.py`` of the shape of virtualenv's own (its finder first on sys.meta_path,
its ``find_spec`` guarded by ``fullname in _DISTUTILS_PATCH``), written for these tests."""


def _virtualenv_site(tmp_path: Path, text: str) -> Path:
    """A site folder whose ``_virtualenv.pth`` imports ``_virtualenv`` of ``text`` (as virtualenv
    lays them out in the environments it makes), beside a module ``toyvenv`` on sys.path."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "_virtualenv.py").write_text(text)
    (site_dir / "_virtualenv.pth").write_text("import _virtualenv\n")
    (site_dir / "toyvenv.py").write_text(PLANNER)
    return site_dir


_VENV_LOOKUPS = """
    from impls.source_file import lookup
    finders = [type(f).__name__ for f in sys.meta_path]
    print(json.dumps([finders[0], lookup("toyvenv"), lookup("setuptools.dist")]))
"""


def _virtualenv_known(tmp_path: Path, site_dir: Path, before: str = "") -> None:
    finder, found, patched = _child(tmp_path, (before, _VENV_LOOKUPS), site_dir)
    assert finder == "_Finder"
    assert found == [str(site_dir / "toyvenv.py"), None]  # passed over, not asked
    assert patched == [None, REFUSED_FINDER]  # a name it patches: its answer is its own


def test_a_finder_of_virtualenvs_shape_is_passed_over_but_for_the_names_it_patches(tmp_path):
    """virtualenv's ``_Finder`` first on sys.meta_path answers None for any name but
    ``distutils.dist`` and ``setuptools.dist``: a planner module is found past it, and a lookup
    of one of those names is refused."""
    _virtualenv_known(tmp_path, _virtualenv_site(tmp_path, _VIRTUALENV_LIKE))


def _installed_virtualenv_file() -> Path:
    spec = importlib.util.find_spec("virtualenv")
    if spec is None or spec.origin is None:
        pytest.skip("virtualenv is not installed here")
    return Path(spec.origin).parent / "create" / "via_global_ref" / "_virtualenv.py"


def test_the_installed_virtualenvs_own_finder_is_passed_over(tmp_path):
    """The same with the ``_virtualenv.py`` of the virtualenv installed here (its finder put on
    sys.meta_path as that file does below Python 3.10 and its releases before 21 always do)."""
    site_dir = _virtualenv_site(tmp_path, _installed_virtualenv_file().read_text())
    _virtualenv_known(tmp_path, site_dir, before="""
        import _virtualenv
        if not any(type(f) is _virtualenv._Finder for f in sys.meta_path):
            sys.meta_path.insert(0, _virtualenv._Finder())
    """)


@pytest.mark.parametrize("attack", [
    # an instance of a subclass in its place, overriding find_spec
    """
    import _virtualenv
    class _Finder(_virtualenv._Finder):
        def find_spec(self, fullname, path, target=None):
            return None
    sys.meta_path[0] = _Finder()
    """,
    # an instance state of its own: a find_spec, or a str subclass
    """
    sys.meta_path[0].find_spec = lambda fullname, path, target=None: None
    """,
    """
    class Name(str):
        pass
    sys.meta_path[0].fullname = Name("x")
    """,
    # the class's method replaced before the harness started
    """
    import _virtualenv
    _virtualenv._Finder.find_spec = lambda self, fullname, path, target=None: None
    """,
], ids=["subclass", "instance-find_spec", "instance-str-subclass", "method-replaced"])
def test_virtualenvs_finder_otherwise_than_its_file_makes_it_is_refused(tmp_path, attack):
    """Attack: virtualenv's finder of another class, with a state of its own or a method that
    is not its file's: the lookup of a planner module past it is refused."""
    site_dir = _virtualenv_site(tmp_path, _VIRTUALENV_LIKE)
    finder, found, _ = _child(tmp_path, (attack, _VENV_LOOKUPS), site_dir)
    assert finder == "_Finder" and found == [None, REFUSED_FINDER]


@pytest.mark.parametrize("forged", [
    _VIRTUALENV_LIKE.replace("if fullname in _DISTUTILS_PATCH and self.fullname is None:",
                             "if fullname.startswith('distutils') and self.fullname is None:"),
    _VIRTUALENV_LIKE.replace("        return None\n\n\nsys",
                             "        return self.other(fullname)\n\n"
                             "    other = staticmethod(lambda fullname: None)\n\n\nsys"),
], ids=["guard-changed", "answers-after-the-guard"])
def test_a_forged_virtualenv_module_whose_find_spec_differs_is_refused(tmp_path, forged):
    """Attack: a ``_virtualenv`` whose ``_Finder.find_spec`` guards otherwise, or answers for
    other names than the patched ones: not virtualenv's, so the lookup past it is refused."""
    assert forged != _VIRTUALENV_LIKE
    site_dir = _virtualenv_site(tmp_path, forged)
    finder, found, _ = _child(tmp_path, _VENV_LOOKUPS, site_dir)
    assert finder == "_Finder" and found == [None, REFUSED_FINDER]


def test_a_virtualenv_module_whose_file_changed_since_it_was_loaded_is_refused(tmp_path):
    """Attack: the ``_virtualenv`` module loaded from a forged file, whose file is then made
    virtualenv's shape before the harness starts: its loaded ``find_spec`` is not the file's
    code, so it is not known."""
    forged = _VIRTUALENV_LIKE.replace("            return None\n        return None",
                                      "            return None\n        return [None][0]")
    assert forged != _VIRTUALENV_LIKE
    site_dir = _virtualenv_site(tmp_path, forged)
    script = f"""
        import _virtualenv
        with open(_virtualenv.__file__, "w") as handle:
            handle.write({_VIRTUALENV_LIKE!r})
    """
    finder, found, _ = _child(tmp_path, (script, _VENV_LOOKUPS), site_dir)
    assert finder == "_Finder" and found == [None, REFUSED_FINDER]


def test_changes_names_each_key_added_rebound_or_removed(monkeypatch):
    import importlib._bootstrap_external as external

    from impls import import_snapshot

    join = external._path_join
    assert import_snapshot.changes() == [] and import_snapshot.intact()
    monkeypatch.setattr(external, "_added_by_a_test", 1, raising=False)
    monkeypatch.setattr(external, "_path_join", lambda *parts: join(*parts))
    assert not import_snapshot.intact()
    assert import_snapshot.changes() == ["importlib._bootstrap_external: added '_added_by_a_test'",
                                       "importlib._bootstrap_external: rebound _path_join"]
    monkeypatch.undo()
    assert import_snapshot.changes() == [] and import_snapshot.intact()


def test_a_warning_attributed_to_the_import_system_leaves_it_intact():
    """A warning attributed to ``importlib._bootstrap_external`` (a ``ResourceWarning`` of an
    unclosed file collected during an import: a fresh clone's test run hit it) adds
    ``__warningregistry__`` to its globals: the warnings machinery's key, which the import system
    never reads. The snapshot still reads intact; any other key added still is a change."""
    import importlib._bootstrap_external as external
    import warnings

    from impls import import_snapshot

    had = "__warningregistry__" in vars(external)
    saved = vars(external).get("__warningregistry__")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.warn_explicit("unclosed file", ResourceWarning, "<frozen>", 1,
                                   module="importlib._bootstrap_external",
                                   registry=vars(external).setdefault("__warningregistry__", {}))
        assert "__warningregistry__" in vars(external)
        assert import_snapshot.intact() and import_snapshot.changes() == []
        vars(external)[1] = "a key of another type"
        assert not import_snapshot.intact()
        assert import_snapshot.changes() == ["importlib._bootstrap_external: added 1"]
    finally:
        vars(external).pop(1, None)
        if had:
            vars(external)["__warningregistry__"] = saved
        else:
            vars(external).pop("__warningregistry__", None)
    assert import_snapshot.intact()
