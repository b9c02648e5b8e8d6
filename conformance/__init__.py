"""The conformance harness: JSON cases in, every planner run, every output byte compared.

Folders by role, bottom to top; each imports only itself and the folders before it
(``tests/test_layout.py`` checks it):

* :mod:`conformance.corpus` -- case files: loading and schema, load-time checks, array specs,
  KV-table and LUT generators, JSON formatting, the kernel subject a case pins (its outputs, defined
  regions, buffer lengths and generators: ``subject.py``), case entries and pseudo-planner names
  (``entries.py``);
* :mod:`conformance.engine` -- a step's inputs with poison and guard zones (``inputs.py``), the one
  step builder (``steps.py``), observe a case as plain data (``observe.py``) and judge it
  (``judge.py``), the runner that is the two (``runner.py``), goldens from the pure-Python planner
  (``reference.py``), readable diffs, the rerun command;
* :mod:`conformance.robustness` -- differential fuzzing, its goldens from a child process the
  planner under test never reaches (``golden_process.py``), found cases written without ever
  replacing a file (``found_cases.py``), random plans, shrinking, the stream check; crash
  isolation: one worker per planner (``isolation.py``, its process ``worker_process.py``), the
  child (``isolation_worker.py``, its shepherd ``shepherd.py``) and its namespaces (``sandbox.py``),
  the parent builds, observes and judges while the child only calls (``isolated_case.py``,
  ``shared_tensors.py``, ``shared_receiver.py``, ``worker_socket.py``), compute-sanitizer and its
  memcheck parser (``sanitizer.py``), guards for planners that run in-process (``in_process.py``,
  ``torch_state.py``, ``torch_settings.py``, ``process_state.py``);
* :mod:`conformance.reporting` -- the results format as data, the HTML / Markdown / text report,
  run-to-run compare, benchmark figures, stale results (``freshness.py``), untrusted text in
  Markdown (``markdown.py``);
* :mod:`conformance.plugin` -- the pytest front end (``pytest conformance/``), the pytest outcome
  to status table (``outcomes.py``), the results writer, per-case JUnit XML labels (``junit.py``),
  GPU pinning under pytest-xdist, the isolation and sanitizer options (``isolation_options.py``);
* :mod:`conformance.bench` -- the benchmark suite (a subject's own sweeps are in its
  ``impls/<subject>/harness/``).

Leaves any folder may use: :mod:`conformance.paths` (every path constant but the corpus
subject's, which :mod:`conformance.corpus.corpus_subject` gives) and
:mod:`conformance.fingerprint` (where a run happened). Commands on top: :mod:`conformance.cli`
(``python -m conformance``) and :mod:`conformance.record`.
"""
