"""Unit tying for differentiable logic gate networks (ICML 2026): reference implementation (icml26).

Public API: the 16 relaxed gates, a pure-torch DLGN with GroupSum, its discretisation to a netlist with
bit-parallel evaluation, constant propagation, dead-logic elimination and area counts (2-input gates, k-LUTs),
the two-stage unit tying (Gauss-Newton screening + finite-difference refinement), the saliency baselines and
the binarised real-data loaders.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import gate_preference, magnitude_order, random_order, taylor_order
from .data import load_digits_bits, load_fashion_bits, thermometer
from .gates import COEFFICIENTS, NAMES, TRUTH_TABLES
from .method import (
    Calibration,
    TyingResult,
    area_target,
    candidate_gates,
    gauss_newton_order,
    gauss_newton_scores,
    refine_overshoot,
    tie_accuracy,
    ties_for_area,
    unit_tying,
)
from .netlist import Netlist, Simplified, evaluate, evaluate_simplified, lut_count, majority_values, simplify
from .network import LogicNetwork, hard_accuracy, train_network

try:
    __version__ = version("icml26-logic-tying")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "COEFFICIENTS",
    "NAMES",
    "TRUTH_TABLES",
    "Calibration",
    "LogicNetwork",
    "Netlist",
    "Simplified",
    "TyingResult",
    "area_target",
    "candidate_gates",
    "evaluate",
    "evaluate_simplified",
    "gate_preference",
    "gauss_newton_order",
    "gauss_newton_scores",
    "hard_accuracy",
    "load_digits_bits",
    "load_fashion_bits",
    "lut_count",
    "magnitude_order",
    "majority_values",
    "random_order",
    "refine_overshoot",
    "simplify",
    "taylor_order",
    "thermometer",
    "tie_accuracy",
    "ties_for_area",
    "train_network",
    "unit_tying",
]
