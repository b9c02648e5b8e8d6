"""The conformance harness: JSON cases in, every planner run, every output byte compared.

Modules, one job each: :mod:`~conformance.arrays` (array specs and the portable PRNG),
:mod:`~conformance.tables` (req_to_token and LUT generators), :mod:`~conformance.cases` (load and
schema-check case files), :mod:`~conformance.inputs` (build a step's tensors, poison, overrides),
:mod:`~conformance.diff` (readable field diffs), :mod:`~conformance.runner` (run one case on one
planner), :mod:`~conformance.plugin` (the pytest front end) and :mod:`~conformance.cli`
(``python -m conformance``).
"""
