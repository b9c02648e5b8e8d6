"""Anchor of the JSON corpus: ``conformance/plugin/hooks.py`` collects the cases from ``cases/`` here.

Nothing to edit: add a case by adding a JSON file under ``cases/`` (see cases/README.md).
"""
