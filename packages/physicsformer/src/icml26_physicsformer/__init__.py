"""PhysicsFormer (ICML 2026): physics-informed forecasting at weather stations.

Public API: the model (dynamic core + Transformer residual), the physics losses and station operators, the
baselines (persistence, DLinear, PatchTST, the Transformer alone), the metrics (MAE per variable and lead,
WEATHER-5K's extreme hit rate, textbook SEDI), the data loaders (Beijing stations, WEATHER-5K files, synthetic
stations), WEATHER-5K's benchmark pipeline (official splits, fixed z-score, per-station windows) and the training
helpers.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import DLinear, PatchTST, Persistence, RevIN, TransformerOnly, moving_average
from .data import (
    BEIJING_STATIONS,
    VARIABLES,
    WEATHER5K_MEAN,
    WEATHER5K_STD,
    StationData,
    fill_gaps,
    load_beijing,
    load_beijing_station,
    load_weather5k_percentiles,
    load_weather5k_station,
    synthetic_stations,
    wind_components,
    window_starts,
)
from .method import DynamicCore, PhysicsFormer, ResidualTransformer
from .metrics import extreme_hit_rate, mae_by_lead, percentile_thresholds, roughness, sedi
from .physics import (
    PressureWindRelation,
    energy_smoothness_loss,
    gradient_operator,
    laplacian_operator,
    pressure_wind_loss,
)
from .training import PhysicsTerms, Standardiser, Windows, objective, predict, train
from .weather5k import (
    WEATHER5K_SPLITS,
    Weather5KSplit,
    decoder_input,
    time_marks,
    weather5k_root,
    weather5k_standardiser,
)

try:
    __version__ = version("icml26-physicsformer")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "BEIJING_STATIONS",
    "VARIABLES",
    "WEATHER5K_MEAN",
    "WEATHER5K_SPLITS",
    "WEATHER5K_STD",
    "DLinear",
    "DynamicCore",
    "PatchTST",
    "Persistence",
    "PhysicsFormer",
    "PhysicsTerms",
    "PressureWindRelation",
    "ResidualTransformer",
    "RevIN",
    "Standardiser",
    "StationData",
    "TransformerOnly",
    "Weather5KSplit",
    "Windows",
    "decoder_input",
    "energy_smoothness_loss",
    "extreme_hit_rate",
    "fill_gaps",
    "gradient_operator",
    "laplacian_operator",
    "load_beijing",
    "load_beijing_station",
    "load_weather5k_percentiles",
    "load_weather5k_station",
    "mae_by_lead",
    "moving_average",
    "objective",
    "percentile_thresholds",
    "predict",
    "pressure_wind_loss",
    "roughness",
    "sedi",
    "synthetic_stations",
    "time_marks",
    "train",
    "weather5k_root",
    "weather5k_standardiser",
    "wind_components",
    "window_starts",
]
