"""Build script: the code packages, plus the files the harness reads at run time as package data.

The corpus stays at the repository root (``cases/``, one folder per subject, where case files are
added); a wheel carries it,
with the results schema and the contract, under ``conformance/data/`` by mapping a data package onto
each folder. ``conformance/paths.py`` finds them there in an installed wheel, and at the root in a
checkout or an editable install. Everything else about the project is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent

DATA_PACKAGES = {
    # every subject's folder: the offsets planner's case files, schema and known-divergence
    # manifests (JSON), the entries planner's cases (JSON Lines) and each folder's README
    "conformance.data.cases": ("cases", ["**/*.json", "**/*.jsonl", "**/*.md"]),
    # the results file's schema (conformance/reporting/results_format.py) and its guide
    "conformance.data.reports": ("reports", ["results.schema.json", "README.md"]),
    # the contract the corpus checks (spec sections cited by cases' source.ref)
    "conformance.data.spec": ("docs/spec", ["*.md"]),
}
DATA_PACKAGES = {name: entry for name, entry in DATA_PACKAGES.items() if (HERE / entry[0]).is_dir()}
"""Only the folders this checkout has (a checkout without ``docs/spec/`` still builds)."""

setup(
    packages=find_packages(include=["impls*", "conformance*"]) + list(DATA_PACKAGES),
    package_dir={name: folder for name, (folder, _) in DATA_PACKAGES.items()},
    package_data={
        # the report's Jinja2 templates (conformance/reporting/report_render.py, compare_render.py)
        "conformance.reporting": ["templates/*"],
        **{name: globs for name, (_, globs) in DATA_PACKAGES.items()},
    },
)
