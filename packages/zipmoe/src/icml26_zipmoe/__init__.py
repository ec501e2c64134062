"""ZipMoE: lossless on-device MoE serving: reference implementation (icml26).

The codec (bit-field split of bf16, chunked exponent compression), the compression-aware cache planner
(conditional Poisson model), the hierarchical cache, the cache-affinity scheduler, the real load pipeline,
the discrete-event simulator, and the baselines (no cache, LRU, LFU, raw zstd). Torch is imported lazily.
"""

from importlib.metadata import PackageNotFoundError, version

from .cache import HierarchicalCache
from .codec import (
    ChunkCorruptError,
    CompressedTensor,
    compress_bf16,
    decompress_bf16,
    entropy_bits,
    merge_planes,
    split_planes,
)
from .planning import CachePlan, CostModel, cps_inclusion, cps_weights, plan_cache, rank_popularity, scale_to_k
from .scheduler import Device, LoadTask, affinity_order, makespan, optimal_order

try:
    __version__ = version("icml26-zipmoe")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CachePlan",
    "ChunkCorruptError",
    "CompressedTensor",
    "CostModel",
    "Device",
    "HierarchicalCache",
    "LoadTask",
    "affinity_order",
    "compress_bf16",
    "cps_inclusion",
    "cps_weights",
    "decompress_bf16",
    "entropy_bits",
    "makespan",
    "merge_planes",
    "optimal_order",
    "plan_cache",
    "rank_popularity",
    "scale_to_k",
    "split_planes",
]
