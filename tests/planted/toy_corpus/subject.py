"""A second corpus subject outside ``impls/`` (``--subject-module tests.planted.toy_corpus.subject``),
which the corpus engine (one corpus subject per process) cannot run."""

NAME = "toy-corpus"
ENGINE = "corpus"
SPEC = "docs/spec/offsets-planner.md"
