"""A General Framework for Dynamic Consistent Submodular Maximization: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import LazyRepair, RecomputeGreedy, SwapStreaming, brute_force_opt
from .constraints import Cardinality, PartitionMatroid
from .data import adversarial_stream, digits_facility_location, partition_by_class, random_set_system, random_stream
from .method import DELETE, INSERT, DynamicAlgorithm, DynamicConsistent, greedy
from .oracles import Coverage, FacilityLocation, GraphCut, Oracle, SetFunction, check_submodular

try:
    __version__ = version("icml26-dynamic-submodular")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "DELETE",
    "INSERT",
    "Cardinality",
    "Coverage",
    "DynamicAlgorithm",
    "DynamicConsistent",
    "FacilityLocation",
    "GraphCut",
    "LazyRepair",
    "Oracle",
    "PartitionMatroid",
    "RecomputeGreedy",
    "SetFunction",
    "SwapStreaming",
    "adversarial_stream",
    "brute_force_opt",
    "check_submodular",
    "digits_facility_location",
    "greedy",
    "partition_by_class",
    "random_set_system",
    "random_stream",
]
