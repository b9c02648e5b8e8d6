"""Which subject the ``upstream-entries`` command judges upstream's launcher for, and what of a
release's wheel is laid out for a subject. Nothing here names a subject.

A subject module that can be judged so defines ``UPSTREAM_ENTRY``: a module (or namespace) of
facts about upstream's launcher that need no harness (the subject's ``upstream.py``, say):

* the layout (:data:`TREE_ATTRIBUTES`, read by :mod:`conformance.upstream.entries_tree`):
  ``TREE_NAME`` (the tree's default folder ``CACHE/sglang/RELEASE-TREE_NAME``), ``LAUNCHER`` (the
  function), ``START`` (its module's path in the wheel), ``EXTRA_STARTS`` (laid out too when the
  wheel has them), ``CODE_ROOTS`` (where the Python files it imports may live),
  ``REAL_PACKAGE_ROOT`` (the packages whose own ``__init__`` files are laid out), ``DATA_ROOTS``
  (the non-Python files laid out), ``STAND_IN_MODULE`` / ``STAND_IN_NAMES`` / ``STAND_IN_NOTE`` /
  ``STAND_IN_SOURCE`` (the one module replaced, the names it gives, why, and its text);
* the build and the judge (:data:`ENTRY_ATTRIBUTES`): ``JIT_LOADER`` (the launcher module's function
  that builds one variant), ``BUILD_VARIANTS`` (the arguments of each build), ``HAZARD_PINS`` (the
  pins of the cases that each run in a process of their own), ``INPUT_NAMES`` (the tensors a
  launcher must never modify) and ``random_batch(seed, poison)`` ((kwargs on the CPU, the
  scratch, {output: the reference planner's values from ``poison``}, a one-line description)).

A subject judged only through ``upstream-launchers`` defines ``UPSTREAM_TREE`` (the layout facts
alone) instead; a subject with ``UPSTREAM_ENTRY`` and no ``UPSTREAM_TREE`` is laid out by its
``UPSTREAM_ENTRY``.
"""

from __future__ import annotations

from types import ModuleType

from conformance.corpus.subjects import SubjectError, discover

ATTRIBUTE = "UPSTREAM_ENTRY"
TREE_ATTRIBUTE = "UPSTREAM_TREE"
TREE_ATTRIBUTES = ("TREE_NAME", "LAUNCHER", "START", "EXTRA_STARTS", "CODE_ROOTS",
                   "REAL_PACKAGE_ROOT", "DATA_ROOTS", "STAND_IN_MODULE", "STAND_IN_NAMES",
                   "STAND_IN_NOTE", "STAND_IN_SOURCE")
ENTRY_ATTRIBUTES = TREE_ATTRIBUTES + ("JIT_LOADER", "BUILD_VARIANTS", "HAZARD_PINS", "INPUT_NAMES",
                                      "random_batch")


def _lacking(facts, names: tuple[str, ...]) -> list[str]:
    return [n for n in names if not hasattr(facts, n)]


def entry_subjects() -> dict[str, ModuleType]:
    """{NAME: subject module} of every subject that defines ``UPSTREAM_ENTRY``."""
    return {name: m for name, m in discover().items() if hasattr(m, ATTRIBUTE)}


def entry_subject(subject: str | ModuleType | None = None) -> ModuleType:
    """The subject module ``subject`` names (a ``--subject`` value), ``subject`` itself when it is
    a module, or, for None, the one subject that defines ``UPSTREAM_ENTRY``.

    Raises:
        SubjectError: an unknown name, none or several such subjects for None, or a named one
        whose ``UPSTREAM_ENTRY`` lacks an attribute of :data:`ENTRY_ATTRIBUTES`.
    """
    if isinstance(subject, ModuleType):
        return subject
    found = entry_subjects()
    if subject is None:
        if len(found) != 1:
            raise SubjectError(f"{len(found)} subjects define {ATTRIBUTE} ({', '.join(found) or 'none'}):"
                               " name one with --subject")
        module = next(iter(found.values()))
    else:
        module = discover().get(subject)
        if module is None or not hasattr(module, ATTRIBUTE):
            raise SubjectError(f"--subject {subject}: not a subject that defines {ATTRIBUTE}; known: "
                               f"{', '.join(found) or 'none'}")
    missing = _lacking(getattr(module, ATTRIBUTE), ENTRY_ATTRIBUTES)
    if missing:
        raise SubjectError(f"{module.__name__}.{ATTRIBUTE} lacks {', '.join(missing)} "
                           "(conformance/upstream/entry_subject.py)")
    return module


def entry_facts(subject: str | ModuleType | None = None):
    """The ``UPSTREAM_ENTRY`` of :func:`entry_subject`'s answer."""
    return getattr(entry_subject(subject), ATTRIBUTE)


def tree_facts(subject: str | ModuleType | None = None):
    """What of a release's wheel is laid out for ``subject`` (a name, a module, or None for the one
    subject that defines ``UPSTREAM_ENTRY``): its ``UPSTREAM_TREE``, else its ``UPSTREAM_ENTRY``.

    Raises:
        SubjectError: an unknown subject, one that defines neither, or facts lacking an
        attribute of :data:`TREE_ATTRIBUTES`.
    """
    if subject is None:
        module = entry_subject()
    elif isinstance(subject, ModuleType):
        module = subject
    else:
        module = discover().get(subject)
        if module is None:
            raise SubjectError(f"--subject {subject}: no such subject")
    facts = getattr(module, TREE_ATTRIBUTE, None) or getattr(module, ATTRIBUTE, None)
    if facts is None:
        raise SubjectError(f"{module.__name__} defines neither {TREE_ATTRIBUTE} nor {ATTRIBUTE}: "
                           "nothing of a release is laid out for it")
    missing = _lacking(facts, TREE_ATTRIBUTES)
    if missing:
        raise SubjectError(f"{module.__name__}'s upstream tree lacks {', '.join(missing)}")
    return facts
