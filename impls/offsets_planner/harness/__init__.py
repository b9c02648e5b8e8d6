"""The offsets planner's own harness-side tools: they use the harness (``conformance``), which no
other module of this package does (``tests/test_layout.py``).

* :mod:`.section6`, :mod:`.hazards`, :mod:`.element_rules`: its judging facts over the corpus
  engine's case format (the rows of its spec section 6, which of them a case's values reach, which
  rule decides each output element), reached by the engine through
  :mod:`conformance.corpus.corpus_subject`;
* :mod:`impls.offsets_planner.harness.sweeps`: the design sweeps of this planner's kernels.
"""
