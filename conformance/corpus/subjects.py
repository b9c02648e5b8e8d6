"""The subjects the harness judges: one package per kernel under ``impls/``, each with a
``subject.py`` module that says how its cases run, plus any ``--subject-module`` a run names.

A subject module defines ``NAME`` (its ``--subject`` value and its folder under ``cases/``),
``ENGINE`` and ``SPEC`` (its contract, a path from the repository root). ``ENGINE = "corpus"``: the
multi-step JSON cases of ``conformance/corpus/loader.py``; its package then also has the modules of
:data:`CORPUS_MODULES` (``conformance/corpus/corpus_subject.py`` says what each defines). ``ENGINE = "one-call"``
(``conformance/engine/one_call.py``): each case one launcher call, and the module also defines
:data:`ONE_CALL_ATTRIBUTES` (what each is; README, "Subjects", names a model).
Nothing here names a subject.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType

from conformance.paths import REPO_ROOT

ENGINES = ("corpus", "one-call")
REQUIRED = ("NAME", "ENGINE", "SPEC")
ONE_CALL_ATTRIBUTES = ("OUTPUTS", "ERROR", "PLANNERS", "get_planner", "planner_mode", "load_cases",
                       "build", "expected_error", "error_rule", "golden", "element_rules")
"""What a one-call subject module defines: output names; the documented error's class (with
``error_id``); {planner name: module}; ``get_planner(name)`` (RuntimeError when unavailable);
``planner_mode(name)``; ``load_cases(folder)`` (dicts with ``id``, ``description``, ``source``,
``_file``, ``_line``); ``build(case, device)`` (the launcher's kwargs; the harness fills the outputs; in its runs
the case carries ``_run``, ``a``, ``b`` or ``plain``, and ``_seed``, an int the values of an input
the contract leaves unread are drawn from);
``expected_error(case)`` ((id, message) or None; the engine adds ``case["_device"]``, the device the call runs on, for a message that names it); ``error_rule(case)`` (the rule deciding what the call raises: the wrong error of an error case, a raise on a valid one); ``golden(case)`` ({output:
values of its leading elements}); ``element_rules(case, kwargs)`` ({output: rule per element}).
Optional: ``error_element_rules(case, kwargs)`` ({output: rule per element} of an error case, whose
elements must all keep their poison; default the case's ``error_rule`` for every one) and
``error_written_values(case, kwargs)`` ({output: the one value per element that an element a
project rule decides may hold instead of its poison; called on the poisoned arguments before the
call})."""
CORPUS_MODULES = ("contract", "constants", "errors", "registry", "buffers", "validate",
                  "validate_cache", "python_planner", "harness.section6", "harness.hazards",
                  "harness.element_rules", "probe")
"""The modules of a corpus subject's package, by name."""
IMPLS = Path(__file__).resolve().parents[2] / "impls"


class SubjectError(ValueError):
    """A subject module that does not define what the harness needs, or an unknown name."""


def _module_exists(package: str, name: str) -> bool:
    if not package:
        return False
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except ImportError:
        return False


def check(module: ModuleType) -> ModuleType:
    """``module``, once it defines what its engine needs.

    Raises:
        SubjectError: a missing attribute or an unknown engine.
    """
    missing = [a for a in REQUIRED if not hasattr(module, a)]
    engine = getattr(module, "ENGINE", None)
    if not missing and engine not in ENGINES:
        raise SubjectError(f"{module.__name__}: ENGINE {engine!r} is not one of {ENGINES}")
    if engine == "one-call":
        missing += [a for a in ONE_CALL_ATTRIBUTES if not hasattr(module, a)]
    if engine == "corpus":
        package = module.__name__.rpartition(".")[0]
        missing += [f"module {package or '<its package>'}.{m}" for m in CORPUS_MODULES
                    if not _module_exists(package, m)]
    if missing:
        raise SubjectError(f"{module.__name__} is not a subject module: it lacks "
                           f"{', '.join(missing)} (conformance/corpus/subjects.py)")
    return module


def discover(root: Path = IMPLS, package: str = "impls", extra: list[str] = ()) -> dict[str, ModuleType]:
    """{NAME: subject module} of every ``<root>/<pkg>/subject.py`` (imported as
    ``<package>.<pkg>.subject``) and every module named in ``extra``, in name order.

    Raises:
        SubjectError: a module that is not a subject module, or two with one NAME.
    """
    names = [f"{package}.{p.parent.name}.subject" for p in sorted(root.glob("*/subject.py"))]
    found: dict[str, ModuleType] = {}
    for name in [*names, *extra]:
        try:
            module = check(importlib.import_module(name))
        except ImportError as exc:
            raise SubjectError(f"subject module {name}: {exc}") from None
        if module.NAME in found:
            raise SubjectError(f"two subjects named {module.NAME!r}: {found[module.NAME].__name__}"
                               f" and {name}")
        found[module.NAME] = module
    return dict(sorted(found.items()))


def case_folder(module: ModuleType, cases_root: Path) -> Path:
    """The folder of ``module``'s cases: its ``CASES_DIR`` when it defines one (a subject outside
    the repository), else ``<cases_root>/<NAME>``."""
    given = getattr(module, "CASES_DIR", None)
    return Path(given) if given is not None else cases_root / module.NAME


def spec_path(module: ModuleType) -> Path:
    """The subject's contract, ``SPEC`` from the repository root (or absolute)."""
    return REPO_ROOT / module.SPEC
