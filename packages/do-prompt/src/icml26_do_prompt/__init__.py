"""Do-Prompt: causal interventions meet variational prompt bottlenecks: reference implementation (icml26).

Prompt tuning of a CLIP-style model whose text tower is the real all-MiniLM-L6-v2: CoOp and MaPLe prompts,
and Do-Prompt around them: stochastic prompts with a variational bottleneck (KL to a prior) and do-style
interventions on the environment part of the prompt with a prediction-consistency loss.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import CoOp, MaPLe, ZeroShot
from .data import CLASS_NAMES, environments, few_shot, load_foregrounds, render
from .method import DoPrompt, consistency, gaussian_kl
from .towers import FrozenCLIP, ImageTower, TextTower
from .training import accuracy, build_clip, harmonic_mean, nuisance_probe, train_prompt

try:
    __version__ = version("icml26-do-prompt")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CLASS_NAMES",
    "CoOp",
    "DoPrompt",
    "FrozenCLIP",
    "ImageTower",
    "MaPLe",
    "TextTower",
    "ZeroShot",
    "accuracy",
    "build_clip",
    "consistency",
    "environments",
    "few_shot",
    "gaussian_kl",
    "harmonic_mean",
    "load_foregrounds",
    "nuisance_probe",
    "render",
    "train_prompt",
]
