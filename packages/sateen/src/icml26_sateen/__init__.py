"""SaTeen: structural-alignment test-time adaptation: reference implementation (icml26)."""

from importlib.metadata import PackageNotFoundError, version

from .baselines import EATA, SAR, DeYO, NoAdapt, Tent, fisher_information
from .data import CORRUPTIONS, DATASETS, continual_stream, corrupt, corruption_suite, load_dataset
from .method import ReferenceSubspace, SaTeen, collect_params, configure_model, cross_entropy, entropy
from .networks import SmallCNN, accuracy, train_source
from .views import DISRUPTIONS, disrupt, occlude, patch_shuffle, pixel_shuffle, random_swap

try:
    __version__ = version("icml26-sateen")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "CORRUPTIONS",
    "DATASETS",
    "DISRUPTIONS",
    "EATA",
    "SAR",
    "DeYO",
    "NoAdapt",
    "ReferenceSubspace",
    "SaTeen",
    "SmallCNN",
    "Tent",
    "accuracy",
    "collect_params",
    "configure_model",
    "continual_stream",
    "corrupt",
    "corruption_suite",
    "cross_entropy",
    "disrupt",
    "entropy",
    "fisher_information",
    "load_dataset",
    "occlude",
    "patch_shuffle",
    "pixel_shuffle",
    "random_swap",
    "train_source",
]
