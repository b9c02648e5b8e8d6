"""Reading an import finder as the interpreter runs it, past any override, for
:mod:`impls.known_finders`, :mod:`impls.import_snapshot`, :mod:`impls.editable_finders` and
:mod:`impls.virtualenv_finder`:
its module's globals and its class's dict (:func:`namespace`), its instance's own state and
whether that is plain data (:func:`plain`, :func:`plain_state`), the class of a finder on
``sys.meta_path`` (:func:`finder_class`), and the code it was compiled from (its file's text:
:func:`read_text`; the shape of its ``def find_spec``: :func:`find_spec_def`, :func:`shape`;
the code objects nested in its module's: :func:`code_objects`).

A rebound ``__class__``, a metaclass's ``__dict__``, a ``dict``, ``set`` or ``str`` subclass
can make an object read otherwise than the interpreter uses it: it is read here through the
descriptors and exact types bound when this module is imported (before any planner code runs
in the harness's process).
"""

from __future__ import annotations

import io
import sys
import types

_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_CLASS_DICT = type.__dict__["__dict__"]
_INSTANCE_DICT = object.__getattribute__
_MODULE = types.ModuleType
_CODE = types.CodeType
_SCALARS = (str, int, float, bool, type(None), bytes)


def namespace(owner):
    """A module's globals or a class's dict as the interpreter uses them (read past a rebound
    module ``__class__`` or a metaclass's ``__dict__``, as :mod:`conformance.engine.namespaces`)."""
    return _MODULE_DICT.__get__(owner) if isinstance(owner, _MODULE) else \
        _CLASS_DICT.__get__(owner)


def plain_module(name: str):
    """``sys.modules[name]`` when it is a plain module, else None."""
    module = sys.modules.get(name)
    return module if type(module) is _MODULE else None


def plain(value, classes: tuple = (), depth: int = 3) -> bool:
    """Whether ``value`` is data no method of which is the value's own: a str, int, float,
    bool, None or bytes, one of ``classes`` itself, or an exact tuple, list, set, frozenset or
    dict of such (nested ``depth`` deep)."""
    kind = type(value)
    if any(kind is scalar for scalar in _SCALARS) or any(value is c for c in classes):
        return True
    if depth and (kind is tuple or kind is list or kind is set or kind is frozenset):
        return all(plain(item, classes, depth - 1) for item in value)
    if depth and kind is dict:
        return all(plain(k, classes, depth - 1) and plain(v, classes, depth - 1)
                   for k, v in value.items())
    return False


def plain_state(obj, names: frozenset, classes: tuple = ()) -> bool:
    """Whether ``obj``'s instance dict is an exact dict whose keys are among ``names`` and whose
    values are plain data (:func:`plain`, ``classes`` allowed as values too)."""
    state = _INSTANCE_DICT(obj, "__dict__")
    return type(state) is dict and all(type(key) is str and key in names
                                       and plain(value, classes) for key, value in state.items())


def finder_class(module_name: str, class_name: str):
    """The class ``class_name`` of module ``module_name`` when an instance of exactly it is on
    ``sys.meta_path`` now (None otherwise)."""
    module = plain_module(module_name)
    cls = None if module is None else namespace(module).get(class_name)
    if cls is None or not any(type(finder) is cls for finder in list(sys.meta_path)):
        return None
    return cls


# --- a finder's code: its file's text and what its find_spec does ---------------------------

def read_text(filename) -> str | None:
    """The text of file ``filename`` (None: not a str, unreadable, not UTF-8)."""
    try:
        with io.open(filename, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, ValueError, TypeError):
        return None


def find_spec_def(text: str, class_name: str | None = None):
    """The one ``def find_spec`` of ``text`` (in class ``class_name``, the only class of that
    name), or None."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if class_name is not None:
        classes = [node for node in _statements(tree)
                   if isinstance(node, ast.ClassDef) and node.name == class_name]
        tree = classes[0] if len(classes) == 1 else None
    defs = [] if tree is None else [node for node in _statements(tree)
                                    if isinstance(node, ast.FunctionDef)
                                    and node.name == "find_spec"]
    return defs[0] if len(defs) == 1 else None


def _statements(tree) -> list:
    """``tree`` and every statement nested in it, in no order: the nodes of ``ast.walk(tree)``
    that a class or function definition can be (a statement, held only by the statement lists
    of a module, a statement, an ``except`` clause or a ``case``: an expression holds none), at
    a fraction of the walk's cost."""
    import ast

    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                todo += [item for item in value if isinstance(item, blocks)]
    return found


def shape(function, blank_ifs: bool = False) -> str:
    """``ast.dump`` of function definition ``function`` without its decorators, annotations
    and docstring (nor, ``blank_ifs``, what its top-level ``if`` statements do): what its code
    does, whatever the comments, spacing and type hints (``function`` is changed)."""
    import ast

    for arg in ast.walk(function.args):
        if isinstance(arg, ast.arg):
            arg.annotation = None
    function.returns, function.decorator_list = None, []
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    for node in body if blank_ifs else ():
        if isinstance(node, ast.If):
            node.body = [ast.Expr(ast.Constant(...))]
    function.body = body
    return ast.dump(function)


def code_objects(code, found: list) -> list:
    """Every code object nested in ``code`` (functions, classes, comprehensions)."""
    for const in code.co_consts:
        if type(const) is _CODE:
            found.append(const)
            code_objects(const, found)
    return found
