"""ReCAP: a CAPTCHA-capable native GUI agent trained on reasoning-action data and self-correction (icml26).

A sandboxed dynamic CAPTCHA system (seven types) and general GUI tasks rendered as screenshots; a data
engine of scripted solvers with privileged state, curation and self-correction samples from a weaker
policy's failures; a screenshot-to-action agent with a reflection head trained by SFT and then
self-corrective training; multi-attempt evaluation (success@k, recovery rate); the modular-pipeline
baseline; and an LMM hook through ``icml26_shared.chat``. Nothing talks to a live website.
"""

from importlib.metadata import PackageNotFoundError, version

from .actions import ACTION_KINDS, Action, parse_action
from .baselines import ModularPipeline, TypeClassifier
from .data import Sample, Trajectory, collect, curate, encode_context, mixture, self_correction_samples, sft_samples
from .env import CaptchaEnv, Observation, Step
from .evaluation import Episode, recovery_rate, run_episodes, success_at
from .lmm import ChatPolicy
from .method import AgentPolicy, ReCAPAgent, train
from .tasks import CAPTCHA_TYPES, ERRORS, GENERAL_TASKS, MULTI_STEP_TYPES, TASKS

try:
    __version__ = version("icml26-recap")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "ACTION_KINDS",
    "CAPTCHA_TYPES",
    "ERRORS",
    "GENERAL_TASKS",
    "MULTI_STEP_TYPES",
    "TASKS",
    "Action",
    "AgentPolicy",
    "CaptchaEnv",
    "ChatPolicy",
    "Episode",
    "ModularPipeline",
    "Observation",
    "ReCAPAgent",
    "Sample",
    "Step",
    "Trajectory",
    "TypeClassifier",
    "collect",
    "curate",
    "encode_context",
    "mixture",
    "parse_action",
    "recovery_rate",
    "run_episodes",
    "self_correction_samples",
    "sft_samples",
    "success_at",
    "train",
]
