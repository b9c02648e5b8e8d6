"""The conformance harness: JSON cases in, every planner run, every output byte compared.

Folders by role, bottom to top; each imports only itself and the folders before it
(``tests/test_layout.py`` checks it):

* :mod:`conformance.corpus` -- case files: loading and schema, load-time checks, array specs,
  KV-table and LUT generators, JSON formatting;
* :mod:`conformance.engine` -- a step's inputs with poison and guard zones, the runner and its judge,
  readable diffs;
* :mod:`conformance.robustness` -- differential fuzzing, random plans, shrinking, the isolation
  worker, the stream check;
* :mod:`conformance.reporting` -- the results format as data, the HTML / Markdown / text report,
  run-to-run compare, benchmark figures;
* :mod:`conformance.plugin` -- the pytest front end (``pytest conformance/``), the results writer,
  GPU pinning under pytest-xdist;
* :mod:`conformance.bench` -- the benchmark suite and its sweep scripts.

Leaves any folder may use: :mod:`conformance.paths` (every path constant) and
:mod:`conformance.fingerprint` (where a run happened). Commands on top: :mod:`conformance.cli`
(``python -m conformance``) and :mod:`conformance.record`.
"""
