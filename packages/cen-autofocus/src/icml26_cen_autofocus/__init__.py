"""CEN (ICML 2026): spike-camera autofocus by spectral-centroid migration.

Public API: the CEN pipeline (spike blocks, bounded spectral centroid, structure-consistent response
selection, weighted near-maximum peak), the classic focus-measure baselines, the spike-camera focus-sweep
simulator and the scenes (scikit-image photographs, generated textures).
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import FOCUS_MEASURES, GRADIENT_MEASURES, argmax_peak, focus_curve, tfp_reconstruction
from .data import PHOTOGRAPHS, SCENES, TEXTURES, scene
from .method import (
    BOUNDS,
    DELTA,
    CENResult,
    NoFocusSignal,
    ResponseStructure,
    accumulate_spikes,
    bounded_spectral_centroid,
    cen_autofocus,
    consistent_response,
    near_max_centroid,
    power_spectrum,
    radial_frequency,
    response_structure,
    select_response,
    to_lens_position,
)
from .simulator import (
    DRIFTS,
    SweepSpec,
    block_counts,
    defocus_sigma,
    illumination_drift,
    integrate_and_fire,
    render_sweep,
    simulate_sweep,
)

try:
    __version__ = version("icml26-cen-autofocus")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "BOUNDS",
    "DELTA",
    "DRIFTS",
    "FOCUS_MEASURES",
    "GRADIENT_MEASURES",
    "PHOTOGRAPHS",
    "SCENES",
    "TEXTURES",
    "CENResult",
    "NoFocusSignal",
    "ResponseStructure",
    "SweepSpec",
    "accumulate_spikes",
    "argmax_peak",
    "block_counts",
    "bounded_spectral_centroid",
    "cen_autofocus",
    "consistent_response",
    "defocus_sigma",
    "focus_curve",
    "illumination_drift",
    "integrate_and_fire",
    "near_max_centroid",
    "power_spectrum",
    "radial_frequency",
    "render_sweep",
    "response_structure",
    "scene",
    "select_response",
    "simulate_sweep",
    "tfp_reconstruction",
    "to_lens_position",
]
