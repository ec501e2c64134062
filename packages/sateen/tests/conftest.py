"""One torch thread per test process: the models are tiny and the CI machine has 2 shared cores."""

import torch

torch.set_num_threads(1)
