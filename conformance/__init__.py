"""The conformance harness: JSON cases in, every planner run, every output byte compared.

Modules, one job each: :mod:`~conformance.corpus.arrays` (array specs and the portable PRNG),
:mod:`~conformance.corpus.generators` (req_to_token and LUT generators), :mod:`~conformance.corpus.loader` (load and
schema-check case files), :mod:`~conformance.engine.inputs` (build a step's tensors, poison, overrides),
:mod:`~conformance.engine.diff` (readable field diffs), :mod:`~conformance.engine.runner` (run one case on one
planner), :mod:`~conformance.plugin.hooks` (the pytest front end) and :mod:`~conformance.cli`
(``python -m conformance``).
"""
