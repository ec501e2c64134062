"""FreMIA: a plug-in high-frequency filter for membership inference attacks on diffusion models (icml26).

The unified paradigm ``score = D(F(target), F(prediction))`` (``membership_score``), FreMIA's filter F
(``high_frequency_filter``), the attacks it plugs into (naive, SecMI, PIA), the attack metrics and the
small DDPM the quick reproduction attacks.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import ATTACKS, attack_scores, ddim_step, naive_pair, pia_pair, secmi_pair
from .data import member_split
from .denoiser import MLPDenoiser, UNetDenoiser, alphas_cumprod, train_denoiser
from .method import (
    MASKS,
    TAU,
    S,
    distance,
    frequency_mask,
    high_frequency_energy,
    high_frequency_filter,
    membership_score,
)
from .metrics import attack_success_rate, auc, evaluate, membership_advantage, tpr_at_fpr

try:
    __version__ = version("icml26-fremia")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "ATTACKS",
    "MASKS",
    "TAU",
    "MLPDenoiser",
    "S",
    "UNetDenoiser",
    "alphas_cumprod",
    "attack_scores",
    "attack_success_rate",
    "auc",
    "ddim_step",
    "distance",
    "evaluate",
    "frequency_mask",
    "high_frequency_energy",
    "high_frequency_filter",
    "member_split",
    "membership_advantage",
    "membership_score",
    "naive_pair",
    "pia_pair",
    "secmi_pair",
    "tpr_at_fpr",
    "train_denoiser",
]
