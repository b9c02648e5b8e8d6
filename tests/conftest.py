"""Hypothesis profiles for the harness's own property tests.

``ci`` (the default) keeps each property test within CI time on one core; ``deep`` is the long
search: ``pytest tests/ --hypothesis-profile=deep`` (10,000 examples per property test that does
not fix its own count).
"""

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=250, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")
