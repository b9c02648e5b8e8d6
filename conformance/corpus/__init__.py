"""The case files: reading and checking them (:mod:`~conformance.corpus.loader`,
:mod:`~conformance.corpus.checks`, :mod:`~conformance.corpus.size_checks`,
:mod:`~conformance.corpus.override_checks`), their limits (:mod:`~conformance.corpus.limits`),
array specs and the portable PRNG (:mod:`~conformance.corpus.arrays`), table and LUT generators
(:mod:`~conformance.corpus.generators`), the kinds of rule (:mod:`~conformance.corpus.rule_kinds`),
the corpus subject and its judging facts (:mod:`~conformance.corpus.corpus_subject`: the rows of
its spec section 6, its hazards, which rule decides each element) and JSON formatting
(:mod:`~conformance.corpus.jsonfmt`)."""
