import os

from hypothesis import settings

settings.register_profile("ci", max_examples=15, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
