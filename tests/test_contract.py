"""The launcher contract is one table (impls/offsets_planner/contract.py): every built-in planner's signature is
pinned against it, and no module under impls/ or conformance/ spells the 13 argument names out
again (spec section 3)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from conformance.paths import REPO_ROOT
from impls.offsets_planner.contract import ARGUMENT_NAMES, ARGUMENTS, VALIDATED_TENSORS
from impls.offsets_planner.registry import builtin_names, builtin_module

def _scanned() -> list[Path]:
    """Every module of impls/ and conformance/ but the offsets planner's table and the packages of
    other subjects (a folder of impls/ with a contract.py of its own: its arguments are its own
    table's, some spelled like these)."""
    files = sorted([*(REPO_ROOT / "impls").rglob("*.py"), *(REPO_ROOT / "conformance").rglob("*.py")])
    others = [d for d in (REPO_ROOT / "impls").iterdir()
              if (d / "contract.py").is_file() and d.name != "offsets_planner"]
    return [p for p in files if p.relative_to(REPO_ROOT).as_posix() != "impls/offsets_planner/contract.py"
            and not any(d in p.parents for d in others)]


def _spelled_names(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every string constant equal to a launcher argument name and every call
    keyword named like one. Parameters are not looked at: a planner's ``launch`` (or bound plan's)
    keyword-only signature spells the 13 names on purpose, because users copy it."""
    names = set(ARGUMENT_NAMES)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names:
            found.append((node.lineno, repr(node.value)))
        elif isinstance(node, ast.keyword) and node.arg in names:
            found.append((node.value.lineno, f"{node.arg}="))
    return sorted(found)


def test_the_table_has_spec_section_3s_arguments():
    assert len(ARGUMENTS) == 13 and len(set(ARGUMENT_NAMES)) == 13
    assert [a.role for a in ARGUMENTS].count("output") == 6
    assert [name for name, _ in VALIDATED_TENSORS][4] == "lut_tensor" and len(VALIDATED_TENSORS) == 11


@pytest.mark.parametrize("name", builtin_names())
def test_builtin_launch_signature_is_the_table(name):
    launch = builtin_module(name).launch
    signature = inspect.signature(launch)
    params = list(signature.parameters.values())
    assert [p.name for p in params] == list(ARGUMENT_NAMES)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
    assert all(p.default is inspect.Parameter.empty for p in params)
    assert signature.return_annotation in (None, "None")


def test_no_module_spells_the_argument_names_out_again():
    offenders = []
    for path in _scanned():
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, what in _spelled_names(tree):
            offenders.append(f"{path.relative_to(REPO_ROOT)}:{line}: {what}")
    assert offenders == [], "\n".join(offenders)


def test_the_scan_sees_a_spelled_name():
    """The scanner itself: a string constant and a call keyword are both found."""
    tree = ast.parse('f(prefix_lens=1)\nx = "req_to_token"\ny = "req_to_token_set"\n')
    assert _spelled_names(tree) == [(1, "prefix_lens="), (2, "'req_to_token'")]
