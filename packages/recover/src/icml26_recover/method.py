"""RECOVER: detecting fine-tuning data from the suspect model alone, by inversion robustness.

The paper's observation: a model fine-tuned on an image x has learned x's denoising trajectory across noise
levels, so after DDIM-inverting x to an intermediate step t* and perturbing the inverted latent, the suspect
model still reconstructs x; an image it never saw drifts away. Per image (our reconstruction, [INF] where
marked in the README; no official code or equations were public):

1. x_{t*} = DDIM-Inv_theta(x, t*, K)                                  (inversion with the suspect model)
2. x'_{t*} = sqrt(1 - sigma^2) x_{t*} + sigma z,  z ~ N(0, I)          (eq. P: variance-preserving perturbation)
3. x_hat_sigma = DDIM_theta(x'_{t*}, t* -> 0, K)                      (deterministic reconstruction)
4. RS(x) = mean over sigma in S and R repeats of s(x, x_hat_sigma)    (eq. RS: robustness score)

with s = -MSE or SSIM. A set of suspect images is then tested against reference images known to be unused
(one-sided Mann-Whitney U: RS of the suspect set larger), which bounds the false-positive rate by alpha.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icml26_shared import check_array, check_choice, check_int, check_open_interval, derive, fail

from .diffusion import check_images, ddim_invert, ddim_reconstruct

SIMILARITIES = ("neg_mse", "ssim")
SIGMAS = (0.0, 0.1, 0.2, 0.3)  # [INF] perturbation strengths of the quick config
SSIM_WINDOW = 3  # [INF] the largest odd window that fits 8x8 digits with room to slide


def perturb(x_t: torch.Tensor, sigma: float, z: torch.Tensor) -> torch.Tensor:
    """eq. P: x' = sqrt(1 - sigma^2) x + sigma z; keeps unit variance when x is (close to) standard normal."""
    if not 0.0 <= sigma < 1.0:
        raise fail("sigma", sigma, "a perturbation strength in [0, 1)")
    return (1.0 - sigma**2) ** 0.5 * x_t + sigma * z


def image_generators(seed: int, image_ids, n: int) -> list[torch.Generator]:
    """One noise generator per image, seeded by ``(seed, image id)``: an image's noise, hence its score, does
    not depend on the batch it is scored in (issue 16.6). ``image_ids`` (n,) non-negative ints, or None for
    ``0..n-1``."""
    ids = np.arange(n) if image_ids is None else np.asarray(image_ids)
    if ids.shape != (n,) or not np.issubdtype(ids.dtype, np.integer) or (ids < 0).any():
        raise fail("image_ids", image_ids, f"{n} non-negative integer ids, one per image")
    return [torch.Generator().manual_seed(derive(seed, "image", int(i))) for i in ids]


def image_noise(generators: list[torch.Generator], shape: tuple[int, ...]) -> torch.Tensor:
    """The next standard normal draw (len(generators), *shape), row i from image i's own generator."""
    return torch.stack([torch.randn(shape, generator=g) for g in generators])


def similarity(x: torch.Tensor, x_hat: torch.Tensor, metric: str = "neg_mse") -> np.ndarray:
    """s(x, x_hat) per image, larger = more similar: ``neg_mse`` = -mean (x - x_hat)^2, or ``ssim``.

    SSIM is scikit-image's ``structural_similarity`` (window 3, data range 2 for [-1, 1] pixels), per image and
    averaged over channels.
    """
    check_choice("metric", metric, SIMILARITIES)
    if x.shape != x_hat.shape:
        raise fail("x_hat", tuple(x_hat.shape), f"the shape of x, {tuple(x.shape)}")
    x, x_hat = x.detach().cpu(), x_hat.detach().cpu()
    if metric == "neg_mse":
        return -(x - x_hat).pow(2).flatten(1).mean(1).numpy()
    from skimage.metrics import structural_similarity

    a, b = x.numpy(), x_hat.clamp(-1, 1).numpy()
    win = min(SSIM_WINDOW, *a.shape[2:]) | 1
    return np.array(
        [
            np.mean([structural_similarity(a[i, c], b[i, c], win_size=win, data_range=2.0) for c in range(a.shape[1])])
            for i in range(len(a))
        ]
    )


@dataclass(frozen=True)
class Robustness:
    """RECOVER's output for a batch of images: ``score`` (B,) = RS(x), ``curve`` (B, len(sigmas)) = mean s per sigma."""

    score: np.ndarray
    curve: np.ndarray
    sigmas: tuple[float, ...]


def check_recover_args(depth: int, num_steps: int, sigmas, repeats: int, T: int) -> tuple[float, ...]:
    """Validate RECOVER's hyper-parameters; returns the sigmas as floats."""
    check_int("depth", depth, 1, T - 1)
    check_int("num_steps", num_steps, 1, depth)
    check_int("repeats", repeats, 1)
    values = check_array("sigmas", np.asarray(sigmas, dtype=float), ndim=1)
    if (values < 0).any() or (values >= 1).any():
        raise fail("sigmas", tuple(values), "perturbation strengths in [0, 1)")
    return tuple(float(s) for s in values)


def inversion_robustness(
    model,
    scheduler,
    images,
    depth: int = 600,
    num_steps: int = 10,
    sigmas=SIGMAS,
    repeats: int = 4,
    metric: str = "neg_mse",
    seed: int = 0,
    image_ids=None,
) -> Robustness:
    """RS(x) of every image (B, C, H, W) in [-1, 1] under the suspect ``model`` (eq. RS); see the module doc.

    ``depth`` = t* (a DDPM timestep in [1, T-1]), ``num_steps`` = K DDIM steps each way, ``sigmas`` = S, ``repeats`` =
    R perturbation draws per sigma (sigma = 0 is deterministic and drawn once). Image i's draws come from
    ``(seed, image_ids[i])`` (default ids ``0..B-1``), so its score is the same alone or in any batch.
    """
    x = check_images("images", images, model)
    T = scheduler.config.num_train_timesteps
    sigmas = check_recover_args(depth, num_steps, sigmas, repeats, T)
    check_choice("metric", metric, SIMILARITIES)
    generators = image_generators(seed, image_ids, len(x))
    x_t = ddim_invert(model, scheduler, x, depth, num_steps)  # step 1
    curve = np.zeros((len(x), len(sigmas)))
    for j, sigma in enumerate(sigmas):
        draws = 1 if sigma == 0 else repeats
        for _ in range(draws):
            z = image_noise(generators, tuple(x_t.shape[1:])).to(x_t.device)
            x_hat = ddim_reconstruct(model, scheduler, perturb(x_t, sigma, z), depth, num_steps)  # steps 2-3
            curve[:, j] += similarity(x, x_hat, metric) / draws
    return Robustness(score=curve.mean(1), curve=curve, sigmas=sigmas)  # step 4, eq. RS


@dataclass(frozen=True)
class SetTest:
    """Set-level verdict: one-sided Mann-Whitney U p-value of 'suspect scores > reference scores'."""

    p_value: float
    statistic: float
    alpha: float

    @property
    def used(self) -> bool:
        """True when the suspect set is declared used for fine-tuning (p < alpha)."""
        return self.p_value < self.alpha


def set_level_test(suspect_scores, reference_scores, alpha: float = 0.01) -> SetTest:
    """Test whether a suspect set was used: its scores vs scores of images known to be unused.

    Under H0 (the suspect images are as unused as the references, exchangeable scores) the test rejects with
    probability <= alpha: the false-positive control. Needs >= 2 images on each side.
    """
    from scipy.stats import mannwhitneyu

    suspect = check_array("suspect_scores", suspect_scores, ndim=1)
    reference = check_array("reference_scores", reference_scores, ndim=1)
    if len(suspect) < 2:
        raise fail("suspect_scores", suspect, "at least 2 scores")
    if len(reference) < 2:
        raise fail("reference_scores", reference, "at least 2 scores")
    check_open_interval("alpha", alpha, 0.0, 1.0)
    result = mannwhitneyu(suspect, reference, alternative="greater")
    return SetTest(p_value=float(result.pvalue), statistic=float(result.statistic), alpha=float(alpha))


def auc(member_scores, nonmember_scores) -> float:
    """Area under the ROC curve of 'member' (fine-tuning image) vs 'non-member', higher score = member."""
    from sklearn.metrics import roc_auc_score

    members = check_array("member_scores", member_scores, ndim=1)
    others = check_array("nonmember_scores", nonmember_scores, ndim=1)
    labels = np.r_[np.ones(len(members)), np.zeros(len(others))]
    return float(roc_auc_score(labels, np.r_[members, others]))
