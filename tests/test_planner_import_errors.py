"""An external planner whose module fails to import is named with where it failed
(``impls/offsets_planner/external_planner.py``, ``_raised_at``): the file and line of the innermost
frame outside the import machinery, so that a typo on line 2 of the user's module reads as such."""

from __future__ import annotations

import pytest

from impls.offsets_planner.registry import UnknownPlanner, get_planner


def _refused(tmp_path, monkeypatch, module: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UnknownPlanner) as excinfo:
        get_planner(f"{module}:launch")
    return str(excinfo.value)


def test_a_name_error_at_import_names_the_file_and_line(tmp_path, monkeypatch):
    said = _refused(tmp_path, monkeypatch, "nu_import_name_error",
                    {"nu_import_name_error.py": "import os\nx = undefined_name\n"})
    assert said == ("cannot import 'nu_import_name_error' for planner "
                    "'nu_import_name_error:launch': NameError: name 'undefined_name' is not "
                    f"defined (raised at {tmp_path / 'nu_import_name_error.py'}:2)")


def test_a_missing_library_names_the_users_import_line(tmp_path, monkeypatch):
    said = _refused(tmp_path, monkeypatch, "nu_import_needs_lib",
                    {"nu_import_needs_lib.py": "\n\nimport nu_no_such_library_here\n"})
    assert said == ("cannot import 'nu_import_needs_lib' for planner 'nu_import_needs_lib:launch': "
                    "ModuleNotFoundError: No module named 'nu_no_such_library_here' "
                    f"(raised at {tmp_path / 'nu_import_needs_lib.py'}:3)")


def test_a_module_not_found_keeps_its_hint_and_names_no_frame(tmp_path, monkeypatch):
    said = _refused(tmp_path, monkeypatch, "nu_import_absent", {})
    assert said == ("cannot import 'nu_import_absent' for planner 'nu_import_absent:launch': "
                    "ModuleNotFoundError: No module named 'nu_import_absent' (is the folder that "
                    "holds 'nu_import_absent' in CONFORMANCE_PLANNER_PATH, or the package "
                    "installed?)")


def test_a_syntax_error_is_not_located_twice(tmp_path, monkeypatch):
    said = _refused(tmp_path, monkeypatch, "nu_import_syntax",
                    {"nu_import_syntax.py": "def launch(:\n    pass\n"})
    assert said.startswith("cannot import 'nu_import_syntax' for planner "
                           "'nu_import_syntax:launch': SyntaxError: ")
    assert "nu_import_syntax.py, line 1)" in said and "raised at" not in said
