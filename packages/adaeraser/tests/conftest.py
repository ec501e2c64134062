"""One torch thread: the models are tiny, and the CI machine runs many packages' tests side by side."""

import torch

torch.set_num_threads(1)
