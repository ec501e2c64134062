"""Repo-wide pytest setup: a fast hypothesis profile for CI (loaded when CI is set)."""

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a package whose tests do not use hypothesis
    pass
else:
    settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("dev", max_examples=50, deadline=None)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")
