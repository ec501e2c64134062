"""Do-Prompt: a variational prompt bottleneck with do-style prompt interventions, plugged into a prompt host.

The abstract (the only public text) fixes the two parts; the equations below are the spec's reconstruction
[INF], every choice configurable:

* prompts are stochastic latent variables, ``q(p_j) = N(mu_j, diag sigma_j^2)``, ``sigma = softplus(rho)``
  (eq. 1), sampled by reparameterisation ``p = mu + sigma * eps`` (eq. 2); the host's prompt parameters are ``mu``;
* the bottleneck is ``KL(q(p) || N(mu0, sigma0^2 I))`` in closed form, summed over tokens and dimensions (eq. 3),
  ``mu0`` the host's initial prompts ("a photo of a" for the shallow context);
* the prompt splits into invariant and environment parts, ``p = [p_c ; p_e]``, ``p_e`` the last ``m_env``
  context tokens of every depth (eq. 4); the intervention ``do(p_e := p~_e)`` draws ``p~_e`` from the prior
  (``"prior"``), from another posterior sample (``"resample"``) or as ``p_e + delta``, ``||delta|| = r``
  (``"noise"``);
* the consistency term is ``KL(softmax(z(x; p)/tau) || softmax(z(x; p_c, p~_e)/tau))`` (eq. 5);
* the objective is ``L = CE(y, z(x; p)) + beta * KL + lambda * L_do`` (eq. 6), ``beta`` warmed up linearly;
  at test time the prompts are the posterior means ``mu``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from icml26_shared import check_choice, check_closed_interval, check_int, check_positive, fail
from torch import nn

INTERVENTIONS = ("prior", "resample", "noise")


def gaussian_kl(mu: torch.Tensor, log_sigma: torch.Tensor, mu0: torch.Tensor, sigma0: float) -> torch.Tensor:
    """eq. (3): KL(N(mu, sigma^2) || N(mu0, sigma0^2)) summed over all entries, from ``log_sigma``.

    ``0.5 (r + ((mu - mu0) / sigma0)^2 - 1 - log r)`` with ``log r = 2 (log sigma - log sigma0)`` taken in log
    space: finite wherever ``log_sigma`` is, also where ``sigma`` itself underflows to 0 (``log r = -inf``)."""
    log_ratio = 2 * (log_sigma - math.log(sigma0))
    return 0.5 * (log_ratio.exp() + ((mu - mu0) / sigma0) ** 2 - 1 - log_ratio).sum()


def consistency(logits: torch.Tensor, logits_do: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    """eq. (5): KL(softmax(z/tau) || softmax(z_do/tau)), averaged over the batch."""
    check_positive("tau", tau)
    return F.kl_div(
        F.log_softmax(logits_do / tau, -1), F.log_softmax(logits / tau, -1), log_target=True, reduction="batchmean"
    )


def inverse_softplus(x: float) -> float:
    return x + math.log(-math.expm1(-x))


class DoPrompt(nn.Module):
    """Compress-and-intervene around a prompt ``host`` (CoOp or MaPLe; plug-and-play).

    ``beta`` (bottleneck weight), ``lam`` (consistency weight), ``tau`` (consistency temperature),
    ``sigma0`` (prior scale), ``m_env`` (environment tokens per depth), ``intervention`` and ``radius`` (for
    ``"noise"``). ``variational=False`` keeps deterministic prompts (the do-only ablation); ``lam=0`` is the
    bottleneck-only ablation.
    """

    def __init__(
        self,
        host: nn.Module,
        beta: float = 1e-3,
        lam: float = 1.0,
        tau: float = 1.0,
        sigma0: float = 0.05,
        m_env: int = 2,
        intervention: str = "prior",
        radius: float = 0.05,
        variational: bool = True,
        sigma_init: float = 0.025,
        warmup: float = 0.2,
    ):
        super().__init__()
        self.host = host
        self.beta = check_closed_interval("beta", beta, 0.0, math.inf)
        self.lam = check_closed_interval("lam", lam, 0.0, math.inf)
        self.tau = check_positive("tau", tau)
        self.sigma0 = check_positive("sigma0", sigma0)
        self.m_env = check_int("m_env", m_env, 0, host.n_ctx)
        self.intervention = check_choice("intervention", intervention, INTERVENTIONS)
        self.radius = check_positive("radius", radius)
        self.warmup = check_closed_interval("warmup", warmup, 0.0, 1.0)
        if self.lam > 0 and self.m_env == 0:
            raise fail("m_env", m_env, "at least 1 environment token when lam > 0")
        if not variational and self.beta > 0:
            raise fail("beta", beta, "0 for deterministic prompts (variational=False)")
        self.variational = variational
        self.register_buffer("mu0", host.prompt_tokens().detach().clone())
        if variational:
            check_positive("sigma_init", sigma_init)
            self.rho = nn.Parameter(torch.full_like(self.mu0, inverse_softplus(sigma_init)))

    @property
    def n_ctx(self) -> int:
        return self.host.n_ctx

    def mu(self) -> torch.Tensor:
        """Posterior means (J, n_ctx, width): the host's prompts."""
        return self.host.prompt_tokens()

    def _rho(self) -> torch.Tensor:
        if not torch.isfinite(self.rho).all():
            raise fail("rho", tuple(self.rho.shape), "finite values (found NaN or inf)")
        return self.rho

    def sigma(self) -> torch.Tensor:
        """eq. (1): posterior scales softplus(rho)."""
        return F.softplus(self._rho())

    def log_sigma(self) -> torch.Tensor:
        """log softplus(rho) without forming sigma, which underflows to 0 for rho below about -100 (float32)
        or -745 (float64). For rho < -30, softplus(rho) = e^rho (1 - e^rho / 2 + ...), so log sigma = rho
        up to 5e-14; the clamp keeps the unused branch's gradient finite."""
        rho = self._rho()
        return torch.where(rho < -30, rho, F.softplus(rho.clamp(min=-30)).log())

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """eq. (2): p = mu + sigma * eps (deterministic prompts return mu)."""
        if not self.variational:
            return self.mu()
        eps = torch.randn(self.mu0.shape, generator=generator, dtype=self.mu0.dtype)
        return self.mu() + self.sigma() * eps

    def kl(self) -> torch.Tensor:
        """eq. (3): the variational prompt bottleneck."""
        if not self.variational:
            return torch.zeros(())
        return gaussian_kl(self.mu(), self.log_sigma(), self.mu0, self.sigma0)

    def intervene(self, prompts: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """eq. (4): do(p_e := p~_e) on the last m_env context tokens of every depth; p_c is untouched."""
        e = slice(self.n_ctx - self.m_env, self.n_ctx)
        p_e = prompts[:, e]
        if self.intervention == "prior":
            new = self.mu0[:, e] + self.sigma0 * torch.randn(p_e.shape, generator=generator, dtype=p_e.dtype)
        elif self.intervention == "resample":
            noise = torch.randn(p_e.shape, generator=generator, dtype=p_e.dtype)
            new = self.mu()[:, e] + (self.sigma()[:, e] if self.variational else self.sigma0) * noise
        else:
            delta = torch.randn(p_e.shape, generator=generator, dtype=p_e.dtype)
            new = p_e + self.radius * delta / delta.norm(dim=-1, keepdim=True)
        return torch.cat([prompts[:, : e.start], new], 1)

    def logits(self, clip, tokens: torch.Tensor, class_names) -> torch.Tensor:
        """Test time: logits (B, C) under the posterior means."""
        return self.host.logits(clip, tokens, class_names)

    def loss(self, clip, tokens, y, class_names, generator=None, progress: float = 1.0):
        """eq. (6): CE + beta * KL + lambda * L_do, ``beta`` ramped over the first ``warmup`` of training.

        A term whose weight is 0 (beta = 0, the start of the warm-up, lambda = 0) is left out rather than
        multiplied by 0, so an infinite KL (a collapsed posterior, sigma -> 0) cannot make the loss 0 x inf =
        NaN; the parts still report the unweighted KL."""
        p = self.sample(generator)
        sets = [p, self.intervene(p, generator)] if self.lam > 0 else [p]
        z = self.host.prompt_logits(clip, tokens, class_names, torch.stack(sets))  # one text-tower pass
        ce = F.cross_entropy(z[0], y)
        kl = self.kl()
        l_do = consistency(z[0], z[1], self.tau) if self.lam > 0 else torch.zeros(())
        ramp = min(1.0, progress / self.warmup) if self.warmup > 0 else 1.0
        total = ce
        if self.beta * ramp > 0:
            total = total + self.beta * ramp * kl
        if self.lam > 0:
            total = total + self.lam * l_do
        return total, {"ce": ce.item(), "kl": kl.item(), "do": l_do.item()}
