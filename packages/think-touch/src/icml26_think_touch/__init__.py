"""Think-Touch: low-cost full fine-tuning by learning what to update (ICML 2026), reference implementation.

think = a selection strategy predicts the potential of each parameter group and picks k of G
(``Exp3M`` bandit, ``GreedyOracle``, baselines ``RandomK``/``Cyclic``); touch = ``ThinkTouch`` steps AdamW
on the selected groups only, holding optimizer state only for them.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import Cyclic, Excluding, FullFineTuning, LoRALinear, RandomK, apply_lora
from .method import (
    STRATEGIES,
    ThinkTouch,
    check_groups,
    group_sq_norms,
    groups_by_module,
    make_strategy,
    optimizer_state_bytes,
)
from .networks import ResidualMLP
from .quadratic import block_coordinate_descent, block_quadratic
from .selection import Exp3M, GreedyOracle, RunningMax, Strategy, dep_round, exp3m_gamma, regret_bound

try:
    __version__ = version("icml26-think-touch")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "STRATEGIES",
    "Cyclic",
    "Excluding",
    "Exp3M",
    "FullFineTuning",
    "GreedyOracle",
    "LoRALinear",
    "RandomK",
    "ResidualMLP",
    "RunningMax",
    "Strategy",
    "ThinkTouch",
    "apply_lora",
    "block_coordinate_descent",
    "block_quadratic",
    "check_groups",
    "dep_round",
    "exp3m_gamma",
    "group_sq_norms",
    "groups_by_module",
    "make_strategy",
    "optimizer_state_bytes",
    "regret_bound",
]
