"""One torch thread (the CI machine runs many packages' tests side by side); tests import ``reference``."""

import sys
from pathlib import Path

import torch

torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).parent))
