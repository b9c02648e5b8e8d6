"""The conformance harness: JSON cases in, every planner run, every output byte compared.

Folders by role, each importing only from itself and the folders before it in this list (plus the
leaf modules :mod:`~conformance.paths` and :mod:`~conformance.fingerprint`):

* ``corpus/``: case files: :mod:`~conformance.corpus.arrays` (array specs and the portable PRNG),
  :mod:`~conformance.corpus.generators` (req_to_token and LUT generators),
  :mod:`~conformance.corpus.loader` (load and schema-check case files),
  :mod:`~conformance.corpus.checks` (load-time checks), :mod:`~conformance.corpus.subject` (the
  kernel a case pins: outputs, defined regions, buffer lengths, generators),
  :mod:`~conformance.corpus.entries` (case entries and pseudo-planner names),
  :mod:`~conformance.corpus.jsonfmt`;
* ``engine/``: :mod:`~conformance.engine.inputs` (tensors with garbage tails, guard zones, poison,
  overrides), :mod:`~conformance.engine.steps` (the one step builder),
  :mod:`~conformance.engine.observe` (run a case, record what happened as JSON-able data),
  :mod:`~conformance.engine.judge` (the verdict from an observation),
  :mod:`~conformance.engine.runner` (``run_case`` = judge of observe),
  :mod:`~conformance.engine.reference` (goldens and plans from the pure-Python planner),
  :mod:`~conformance.engine.diff` (readable field diffs), :mod:`~conformance.engine.rerun` (the
  rerun command);
* ``robustness/`` (fuzz, random plans, shrinking, the stream check; crash isolation:
  :mod:`~conformance.robustness.isolation` (one worker per planner),
  :mod:`~conformance.robustness.isolation_worker` (the child),
  :mod:`~conformance.robustness.isolated_case` (observe in the child, judge in the parent),
  :mod:`~conformance.robustness.sanitizer` (compute-sanitizer and its memcheck parser),
  :mod:`~conformance.robustness.in_process` and :mod:`~conformance.robustness.torch_state` (guards
  for planners not isolated)), ``reporting/`` (results format, HTML / Markdown / text, compare),
  ``plugin/`` (the pytest front end: :mod:`~conformance.plugin.hooks`, the results writer,
  :mod:`~conformance.plugin.outcomes`, :mod:`~conformance.plugin.isolation_options`), ``bench/``
  (the benchmark suite);
* commands at the top: :mod:`~conformance.cli` (``python -m conformance``),
  :mod:`~conformance.record`.
"""
