"""The case files: reading and checking them (:mod:`~conformance.corpus.loader`,
:mod:`~conformance.corpus.checks`), their limits (:mod:`~conformance.corpus.limits`), array specs
and the portable PRNG (:mod:`~conformance.corpus.arrays`), table and LUT generators
(:mod:`~conformance.corpus.generators`), the out-of-contract rows of spec section 6
(:mod:`~conformance.corpus.hazards`) and JSON formatting (:mod:`~conformance.corpus.jsonfmt`)."""
