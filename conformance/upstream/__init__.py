"""Upstream's published releases, judged unchanged: fetch a release's wheel, load its offsets
launcher from the wheel's own bytes (checked against the wheel's RECORD), run the corpus on it,
and compare releases (``python -m conformance upstream RELEASE [RELEASE ...]``)."""
