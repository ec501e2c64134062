"""The paper's method: a top-k SAE on the TTS backbone's residual stream, emotion-feature selection by
sentence-level activation rates, and feature-level induction / suppression spliced back error-free.

Conventions follow SAELens' ``TopKSAE`` and OpenAI's top-k SAE (Gao et al. 2024): pre-encoder bias
``b_dec`` subtracted before encoding, decoder rows of unit norm (renormalised after every step, with the
gradient component along each row removed), AuxK loss on dead latents, explained variance and a
dead-feature count as the quality measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from icml26_shared import check_closed_interval, check_int, check_number, check_positive, fail
from torch import nn

INTERVENTIONS = ("add", "clamp", "scale")


class TopKSAE(nn.Module):
    """z = ReLU(TopK_k((h - b_dec) W_enc + b_enc)),  h_hat = z W_dec + b_dec  (spec §3, step 2).

    ``W_enc`` (d_in, d_sae), ``W_dec`` (d_sae, d_in): the SAELens state-dict layout (``saelens_state_dict``).
    """

    def __init__(self, d_in: int, d_sae: int, k: int, generator: torch.Generator | None = None) -> None:
        super().__init__()
        check_int("d_in", d_in, 1)
        check_int("d_sae", d_sae, 1)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= d_sae:
            raise fail("k", k, f"an integer in [1, d_sae={d_sae}]")
        self.d_in, self.d_sae, self.k = d_in, d_sae, k
        W_dec = F.normalize(torch.randn(d_sae, d_in, generator=generator), dim=1)
        self.W_dec = nn.Parameter(W_dec)
        self.W_enc = nn.Parameter(W_dec.T.clone())  # tied initialisation (Gao et al. 2024)
        self.b_enc = nn.Parameter(torch.zeros(d_sae))
        self.b_dec = nn.Parameter(torch.zeros(d_in))

    def check_input(self, h: torch.Tensor) -> torch.Tensor:
        if not isinstance(h, torch.Tensor) or h.shape[-1] != self.d_in:
            shape = tuple(h.shape) if isinstance(h, torch.Tensor) else type(h).__name__
            raise fail("h", shape, f"hidden states with last dimension d_in={self.d_in}")
        if not torch.isfinite(h).all():
            raise fail("h", tuple(h.shape), "finite hidden states (found NaN or inf)")
        return h

    def pre_activations(self, h: torch.Tensor) -> torch.Tensor:
        return (self.check_input(h) - self.b_dec) @ self.W_enc + self.b_enc

    def encode(self, h: torch.Tensor) -> torch.Tensor:
        """(..., d_in) -> (..., d_sae) with at most k non-zero entries, all > 0."""
        pre = self.pre_activations(h)
        values, indices = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, indices, values.relu())

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return z @ self.W_dec + self.b_dec

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.encode(h)
        return self.decode(z), z

    @torch.no_grad()
    def normalise_decoder(self) -> None:
        """Project the decoder rows back onto the unit sphere."""
        self.W_dec.data = F.normalize(self.W_dec.data, dim=1)

    @torch.no_grad()
    def remove_parallel_gradient(self) -> None:
        """Drop the gradient component along each decoder row (it would only change its norm)."""
        if self.W_dec.grad is not None:
            parallel = (self.W_dec.grad * self.W_dec.data).sum(1, keepdim=True)
            self.W_dec.grad -= parallel * self.W_dec.data

    def saelens_state_dict(self) -> dict[str, torch.Tensor]:
        """``{"W_enc", "W_dec", "b_enc", "b_dec"}`` as SAELens' ``TopKSAE.load_state_dict`` expects them."""
        return {name: getattr(self, name).detach().clone() for name in ("W_enc", "W_dec", "b_enc", "b_dec")}


@dataclass(frozen=True)
class SAEQuality:
    """Reconstruction quality on held-out states: explained variance, normalised MSE, dead features
    (never active on the evaluation states), mean L0."""

    explained_variance: float
    normalised_mse: float
    dead_features: int
    l0: float


def explained_variance(h: torch.Tensor, h_hat: torch.Tensor) -> float:
    """1 - sum ||h - h_hat||^2 / sum ||h - mean(h)||^2 over rows."""
    return float(1 - (h - h_hat).square().sum() / (h - h.mean(0)).square().sum())


@torch.no_grad()
def sae_quality(sae: TopKSAE, h: torch.Tensor) -> SAEQuality:
    h_hat, z = sae(h)
    ev = explained_variance(h, h_hat)
    return SAEQuality(ev, 1 - ev, int(((z > 0).sum(0) == 0).sum()), float((z > 0).sum(1).float().mean()))


def train_sae(
    sae: TopKSAE,
    h: torch.Tensor,
    steps: int,
    batch: int,
    lr: float,
    generator: torch.Generator,
    aux_alpha: float = 1 / 32,
    dead_after: int = 2000,
) -> list[float]:
    """Adam on L = ||h - h_hat||^2 + aux_alpha * L_aux (Gao et al. 2024, eq. 2 and App. A.2).

    ``b_dec`` starts at the mean of ``h``. A latent is dead when it has not fired for ``dead_after``
    training rows; AuxK reconstructs the residual (h - h_hat, detached) from the top ``k_aux = d_in // 2``
    dead latents, scaled by min(n_dead / k_aux, 1) (SAELens' convention). Returns the MSE per step.

    Sets ``torch.set_flush_denormal(True)``: Adam's second moments of rarely firing latents decay into the
    denormal range, which made training ~10x slower on x86 CPUs here (the effect on the numbers is nil).
    """
    torch.set_flush_denormal(True)
    sae.check_input(h)
    check_int("steps", steps, 1)
    check_int("batch", batch, 1)
    check_positive("lr", lr)
    with torch.no_grad():
        sae.b_dec.copy_(h.mean(0))
    optimiser = torch.optim.Adam(sae.parameters(), lr=lr)
    since_fired = torch.zeros(sae.d_sae)
    k_aux = sae.d_in // 2
    losses = []
    for _ in range(steps):
        x = h[torch.randint(len(h), (batch,), generator=generator)]
        pre = sae.pre_activations(x)
        values, indices = pre.topk(sae.k, dim=-1)
        z = torch.zeros_like(pre).scatter(-1, indices, values.relu())
        x_hat = sae.decode(z)
        mse = (x - x_hat).square().sum(-1).mean()
        fired = (z > 0).any(0)
        since_fired = torch.where(fired, 0.0, since_fired + batch)
        dead = since_fired >= dead_after
        loss = mse
        if dead.any():
            aux_values, aux_indices = pre.masked_fill(~dead, -torch.inf).topk(min(k_aux, int(dead.sum())), dim=-1)
            z_aux = torch.zeros_like(pre).scatter(-1, aux_indices, aux_values.relu())
            residual = (x - x_hat).detach()
            aux = (z_aux @ sae.W_dec - residual).square().sum(-1).mean()
            loss = mse + aux_alpha * min(int(dead.sum()) / k_aux, 1.0) * aux
        optimiser.zero_grad()
        loss.backward()
        sae.remove_parallel_gradient()
        optimiser.step()
        sae.normalise_decoder()
        losses.append(mse.item())
    return losses


def activation_rates(z: torch.Tensor, mask: torch.Tensor, rule: str = "frames") -> torch.Tensor:
    """Sentence-level activation rate a_j(s) (spec §3, step 3) of (S, T, d_sae) codes of S sentences.

    ``rule="frames"``: the fraction of the sentence's positions where z_j > 0; ``rule="any"``: 1 if z_j
    fires anywhere in the sentence. Only positions where ``mask`` (S, T) is true count.
    """
    if rule not in ("frames", "any"):
        raise fail("rule", rule, "'frames' or 'any'")
    mask = torch.as_tensor(mask)
    if z.ndim != 3 or mask.shape != z.shape[:2] or not mask.any(1).all():
        raise fail("mask", tuple(mask.shape), f"a {tuple(z.shape[:2])} mask with a true position in every sentence")
    active = (z > 0).float() * mask[..., None]
    if rule == "any":
        return active.amax(1)
    return active.sum(1) / mask.sum(1, keepdim=True)


def emotion_scores(rates_emotion: torch.Tensor, rates_neutral: torch.Tensor) -> torch.Tensor:
    """Delta_j(e) = mean_{s in E_e} a_j(s) - mean_{s in neutral} a_j(s)  (spec §3, step 3)."""
    for name, rates in (("rates_emotion", rates_emotion), ("rates_neutral", rates_neutral)):
        if rates.ndim != 2 or len(rates) == 0:
            raise fail(name, tuple(rates.shape), "a non-empty (sentences, d_sae) array of activation rates")
    if rates_emotion.shape[1] != rates_neutral.shape[1]:
        raise fail("rates_neutral", tuple(rates_neutral.shape), f"d_sae={rates_emotion.shape[1]} columns")
    return rates_emotion.mean(0) - rates_neutral.mean(0)


def select_features(scores: torch.Tensor, m: int) -> torch.Tensor:
    """F_e: the ``m`` features with the largest Delta_j(e), best first; equal scores in index order.

    A stable sort on -Delta breaks ties by index, so the selection depends on the data only (``topk``
    returns tied indices in an order that differs between torch builds and devices).
    """
    if not isinstance(scores, torch.Tensor) or scores.ndim != 1 or not torch.isfinite(scores).all():
        raise fail("scores", scores, "a 1-d tensor of finite scores Delta_j(e)")
    check_int("m", m, 1, len(scores))
    return torch.sort(-scores, stable=True).indices[:m]


def check_features(features: torch.Tensor, d_sae: int) -> torch.Tensor:
    features = torch.as_tensor(features, dtype=torch.long)
    if features.ndim != 1 or len(features) == 0 or ((features < 0) | (features >= d_sae)).any():
        raise fail("features", features.tolist(), f"a non-empty list of feature indices in [0, {d_sae})")
    if len(set(features.tolist())) != len(features):
        raise fail("features", features.tolist(), "distinct feature indices")
    return features


def feature_intervention(
    sae: TopKSAE, features: torch.Tensor, mode: str, strength: float, values: torch.Tensor | None = None
):
    """A residual-stream hook editing the SAE features ``features`` (spec §3, step 4):

    * ``add``   (induction):   z'_j = z_j + strength * c_j
    * ``clamp`` (induction):   z'_j = strength * c_j
    * ``scale`` (suppression): z'_j = (1 - strength) * z_j   (strength = beta in [0, 1]; 1 zeroes them)

    where c_j = ``values[j]`` (the mean activation of j where it fires on the target emotion). The edit is
    spliced back with the error-preserving delta h' = h + (z' - z) W_dec, so the SAE's reconstruction error
    stays in h and an intervention that changes nothing is an exact no-op (no SAE error is injected).
    """
    if mode not in INTERVENTIONS:
        raise fail("mode", mode, f"one of {INTERVENTIONS}")
    features = check_features(features, sae.d_sae)
    strength = check_number("strength", strength)
    if mode == "scale":
        check_closed_interval("strength", strength, 0.0, 1.0)
    elif values is None or values.shape != (sae.d_sae,) or not torch.isfinite(values).all():
        raise fail("values", None if values is None else tuple(values.shape), f"finite c_j, shape ({sae.d_sae},)")

    def hook(h: torch.Tensor) -> torch.Tensor:
        z = sae.encode(h)[..., features]
        if mode == "add":
            z_new = z + strength * values[features]
        elif mode == "clamp":
            z_new = (strength * values[features]).expand_as(z)
        else:
            z_new = (1 - strength) * z
        return h + (z_new - z) @ sae.W_dec[features]

    return hook


def mean_active_values(z: torch.Tensor) -> torch.Tensor:
    """c_j: mean of z_j over rows where it fires (0 where it never does); (N, d_sae) -> (d_sae,)."""
    fired = (z > 0).float()
    return (z * fired).sum(0) / fired.sum(0).clamp(min=1)
