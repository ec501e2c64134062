"""Near-Optimal Dynamic Matching via Coarsening with Application to Heart Transplantation (icml26).

The public API: simulator (data), coarsened LP policy (method) and baselines.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import GreedyPolicy, StatusQuoPolicy, omniscient_optimum, simulate
from .data import (
    Donors,
    DonorTypes,
    Patients,
    SimulatorParams,
    benefit,
    learn_donor_types,
    sample_departures,
    sample_donors,
    sample_patients,
)
from .method import (
    CoarsenedPolicy,
    Coarsening,
    coarsen,
    lower_bound,
    magician_gamma,
    magician_thresholds,
    representative,
    solve_fluid_lp,
)

try:
    __version__ = version("icml26-online-matching")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CoarsenedPolicy",
    "Coarsening",
    "DonorTypes",
    "Donors",
    "GreedyPolicy",
    "Patients",
    "SimulatorParams",
    "StatusQuoPolicy",
    "benefit",
    "coarsen",
    "learn_donor_types",
    "lower_bound",
    "magician_gamma",
    "magician_thresholds",
    "omniscient_optimum",
    "representative",
    "sample_departures",
    "sample_donors",
    "sample_patients",
    "simulate",
    "solve_fluid_lp",
]
