import os

import torch
from hypothesis import settings

# derandomize: the same examples on every run, so CI cannot flake on a new draw
settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# one thread: the timings in the README and a loaded CI machine (idle threads spin and cost CPU time)
torch.set_num_threads(1)
