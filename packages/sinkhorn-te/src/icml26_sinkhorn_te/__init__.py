"""Sinkhorn Treatment Effects: A Causal Optimal Transport Measure: reference implementation (icml26).

The Sinkhorn treatment effect S_eps(P_1, P_0) between counterfactual outcome laws: log-domain Sinkhorn
and the Sinkhorn divergence with its potentials, IPW counterfactual laws, the one-step (debiased)
estimator with a Wald interval, the test at a fixed eps and the test aggregated over an eps grid.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import ate_test, gaussian_kernel, mmd_test, plugin_ste
from .data import sample_counterfactuals, simulate
from .sinkhorn import (
    Divergence,
    HessianKernel,
    Potentials,
    extend_potential,
    ot_eps,
    sinkhorn_divergence,
    sinkhorn_log,
    sinkhorn_symmetric,
    squared_distances,
)
from .treatment_effect import (
    CounterfactualLaws,
    OneStep,
    TestResult,
    aggregated_sinkhorn_test,
    cross_statistics,
    ipw_counterfactual_laws,
    one_step_ste,
    sinkhorn_test,
)

try:
    __version__ = version("icml26-sinkhorn-te")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CounterfactualLaws",
    "Divergence",
    "HessianKernel",
    "OneStep",
    "Potentials",
    "TestResult",
    "aggregated_sinkhorn_test",
    "ate_test",
    "cross_statistics",
    "extend_potential",
    "gaussian_kernel",
    "ipw_counterfactual_laws",
    "mmd_test",
    "one_step_ste",
    "ot_eps",
    "plugin_ste",
    "sample_counterfactuals",
    "simulate",
    "sinkhorn_divergence",
    "sinkhorn_log",
    "sinkhorn_symmetric",
    "sinkhorn_test",
    "squared_distances",
]
