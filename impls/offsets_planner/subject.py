"""The offsets planner as a subject of the harness: its cases are the JSON case files of
``cases/offsets-planner/`` (format: that folder's README and ``schema.json``), run by the corpus
engine (``conformance/engine/``: poisoned runs, isolation, the section-6 judge).

The harness reads this module by attribute (``conformance/corpus/subjects.py``).
"""

from __future__ import annotations

NAME = "offsets-planner"
"""The subject's name: ``--subject offsets-planner``; a case file that names no subject is its."""
ENGINE = "corpus"
"""Multi-step JSON cases judged by the corpus engine."""
SPEC = "docs/spec/offsets-planner.md"
