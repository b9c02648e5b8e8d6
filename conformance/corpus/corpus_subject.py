"""The subject the corpus engine runs: the subject module of ``impls/<package>/subject.py`` whose
``ENGINE`` is ``"corpus"`` (multi-step JSON cases, poisoned runs, isolation, hazards, fuzzing,
the bench), and the modules of its package by the role the engine gives each.

Which one: the only corpus subject that :func:`conformance.corpus.subjects.discover` finds, or,
where a checkout holds several, the one whose ``NAME`` the environment variable
``CONFORMANCE_CORPUS_SUBJECT`` gives. The corpus engine runs one corpus subject per process; the
one-call engine (``conformance/engine/one_call.py``) runs any number.

A corpus subject's package defines, by module name (:data:`ROLES`):

* ``contract``: the argument table: ``ARGUMENTS``, ``BY_NAME``, ``ARGUMENT_NAMES``,
  ``INPUT_NAMES``, ``REQUEST_INPUT_NAMES``, ``TABLE_INPUT_NAMES``, ``SCALAR_NAMES``,
  ``OUTPUT_NAMES``, ``SCALAR_OUTPUT_NAMES``, the names of the table, the LUT, the window, the
  capacity and the enable flag, ``Launcher``, ``DEVICE_REFERENCE``, ``output_lengths`` and
  ``golden_lengths(bs)`` ({output: the leading elements a golden defines});
* ``constants``: ``SCRATCH_MIN_LEN``, ``PLAN_BS_BLOCK_SIZE``;
* ``errors``: ``CATALOG`` (the documented errors) and ``identify(exc)``;
* ``registry``: ``planners``, ``builtin_names``, ``get_planner``, ``chosen_planners``,
  ``availability``, ``default_device``, ``source_digest``, ``UnknownPlanner``, ``PROBE_COMMAND``,
  ``bind`` (a planner's bound form);
* ``buffers`` (``PlanBuffers``), ``validate`` (the shared validator), ``validate_cache``
  (``STABLE_NAMES``), ``python_planner`` (the reference: ``launch``, ``plan_values``) and
  ``probe`` (run as ``python -m <package>.probe NAME``);
* its judging facts over this engine's case format, harness-side (``harness/``): ``section6``
  (``ROWS``, ``BY_KEY``, ``Row``, ``out_of_contract``, ``flat_read_outside_table``), ``hazards``
  (``findings``, ``hazard_tag_fault``, ``out_of_contract``, ``HAZARD_TAG``, ``HazardTagWarning``;
  ``tag_fault`` and ``TagWarning``: the check of the other tags whose truth a case's data decides)
  and ``element_rules`` (``case_rules``, ``reached_rules``, ``StepRules``, ``ZERO_D``: which rule
  decides each output element of a case; ``contract_clause(output, index, bs)``: the spec's words
  for an element the contract decides, quoted in a failure).

Nothing here names a subject.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

from conformance.corpus.subjects import CORPUS_MODULES, SubjectError, case_folder, discover
from conformance.paths import CASES_ROOT, DIVERGENCES_DIRNAME, INSTALLED, PACKAGED_DATA, REPO_ROOT

ENV = "CONFORMANCE_CORPUS_SUBJECT"
"""The environment variable that picks the corpus subject where a checkout holds several."""
ROLES = CORPUS_MODULES[:-1]
"""The modules of a corpus subject's package the engine imports here (the probe runs in a child)."""


def _choose() -> ModuleType:
    corpus = {name: m for name, m in discover().items() if m.ENGINE == "corpus"}
    wanted = os.environ.get(ENV)
    if wanted:
        if wanted not in corpus:
            raise SubjectError(f"${ENV}={wanted!r} is not a corpus subject; known: {', '.join(corpus)}")
        return corpus[wanted]
    if len(corpus) != 1:
        raise SubjectError(f"the corpus engine runs one subject; found {sorted(corpus) or 'none'}: "
                           f"name one with ${ENV}")
    return next(iter(corpus.values()))


SUBJECT: ModuleType = _choose()
"""The corpus subject's module (``impls/<package>/subject.py``)."""
NAME: str = SUBJECT.NAME
"""Its name: the ``subject`` of a case file that names none, and its folder under ``cases/``."""
PACKAGE: str = SUBJECT.__name__.rsplit(".", 1)[0]
"""Its package (``impls.<package>``)."""

(contract, constants, errors, registry, buffers, validate, validate_cache, python_planner, section6,
 hazards, element_rules) = (importlib.import_module(f"{PACKAGE}.{role}") for role in ROLES)
PROBE_MODULE = f"{PACKAGE}.probe"
"""The module that probes an external planner in a child process."""

CASES_DIR: Path = case_folder(SUBJECT, CASES_ROOT)
"""Its corpus (``cases/<NAME>/``): what ``pytest conformance/`` runs when no ``--cases`` is
given; a ``--cases DIR`` replaces it with another folder of such case files."""
CASE_SCHEMA_PATH = CASES_DIR / "schema.json"
"""JSON Schema of its case files (that folder's README describes them)."""
DIVERGENCES_SCHEMA_PATH = CASES_DIR / DIVERGENCES_DIRNAME / "schema.json"
"""JSON Schema of a known-divergence manifest (``divergences/README.md`` of its corpus)."""
SPEC_PATH = (PACKAGED_DATA / "spec" / Path(SUBJECT.SPEC).name if INSTALLED
             else REPO_ROOT / SUBJECT.SPEC)
"""The contract the corpus checks (cases' ``source.ref`` cite its sections)."""
FOUND_CASES_DIR = Path("cases", "found") if INSTALLED else CASES_DIR / "found"
"""Where ``python -m conformance fuzz`` writes the divergences it found, for review: inside the
corpus in a checkout (``found/``, run by default), else ``cases/found`` under the current
directory (run them with ``--extra-cases cases``)."""
