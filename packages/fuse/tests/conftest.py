import torch
from hypothesis import settings

settings.register_profile("ci", max_examples=15, deadline=None)
settings.load_profile("ci")
torch.set_num_threads(1)
