"""Anchor of the case corpus: ``conformance/plugin/hooks.py`` collects every subject's cases from
``cases/`` here.

Nothing to edit: add a case by adding a file to its subject's folder under ``cases/`` (see
cases/README.md).
"""
