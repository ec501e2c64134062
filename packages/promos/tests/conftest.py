"""One torch thread: the graphs in these tests are tiny, and CI runs many packages' tests side by side
(two threads only add spin-waiting: about 40% of the suite's CPU time on a loaded machine)."""

import torch

torch.set_num_threads(1)
