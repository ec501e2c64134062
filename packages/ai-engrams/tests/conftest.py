import os

import torch
from hypothesis import settings

settings.register_profile("ci", max_examples=15, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
torch.set_num_threads(1)  # small models: one thread is as fast, and robust on a shared machine
