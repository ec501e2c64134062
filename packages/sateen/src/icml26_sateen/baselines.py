"""The test-time adaptation methods SaTeen is compared with: no adaptation, Tent, EATA, SAR, DeYO.

Each adapter wraps a model, adapts the affine parameters of its normalisation layers with SGD
(momentum 0.9) and, called on a batch, adapts once and returns the logits computed before the update,
as in the official code of each method (and SaTeen's repository, which ships them). ``reset()`` returns an
adapter to its source state (model, optimizer and the method's own running state), as the official ones do.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from icml26_shared import check_int, check_number, check_positive, fail
from torch import nn

from .method import SourceState, check_batch, collect_params, configure_model, entropy
from .views import PATCH_LEN, disrupt


class NoAdapt:
    """The source model, frozen, in eval mode."""

    def __init__(self, model: nn.Module):
        self.model = model.eval()
        self.reliable_fraction = 0.0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self.model(check_batch(x))

    def reset(self) -> None:
        """Nothing adapts: the model is always the source model."""


class _EntropyAdapter:
    """Shared set-up: configured model, SGD on the norm affine parameters, reliable-sample counters."""

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        lr: float,
        momentum: float = 0.9,
        generator: torch.Generator | None = None,
    ):
        self.num_classes = check_int("num_classes", num_classes, 2)
        self.model = configure_model(model)
        self.optimizer = torch.optim.SGD(collect_params(model), lr=check_positive("lr", lr), momentum=momentum)
        self.generator = generator
        self.source = SourceState(self.model, self.optimizer, generator)
        self.seen = 0
        self.selected = 0

    def reset(self) -> None:
        """Back to the source state: model, optimizer, generator, counters and the method's running state."""
        self.source.restore(self.model, self.optimizer, self.generator)
        self.seen = self.selected = 0
        self._reset_running_state()

    def _reset_running_state(self) -> None:
        """What a method keeps across batches besides model and optimizer (nothing for Tent)."""

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.model(check_batch(x))
        if logits.ndim != 2 or logits.shape[1] != self.num_classes:
            raise fail("model(x)", tuple(logits.shape), f"logits (b, {self.num_classes})")
        return logits

    def _step(self, loss: torch.Tensor | None, n: int, selected: int) -> None:
        self.seen += n
        self.selected += selected
        if loss is not None:
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @property
    def reliable_fraction(self) -> float:
        return self.selected / max(self.seen, 1)


class Tent(_EntropyAdapter):
    """Tent (Wang et al., ICLR 2021): minimise the mean prediction entropy of every test batch."""

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            logits = self._forward(x)
            self._step(entropy(logits).mean(), len(x), len(x))
        return logits.detach()


def fisher_information(model: nn.Module, batches: list[torch.Tensor], params: list[nn.Parameter]) -> list[torch.Tensor]:
    """EATA's diagonal Fisher on clean data: squared gradients of the pseudo-label cross-entropy, per batch,
    averaged over batches (as the official code accumulates them)."""
    if not batches:
        raise fail("batches", batches, "at least one clean batch for the Fisher information")
    fisher = [torch.zeros_like(p) for p in params]
    for x in batches:
        logits = model(check_batch(x))
        loss = F.cross_entropy(logits, logits.argmax(1))
        grads = torch.autograd.grad(loss, params)
        for f, g in zip(fisher, grads, strict=True):
            f += g.detach() ** 2
    return [f / len(batches) for f in fisher]


class EATA(_EntropyAdapter):
    """EATA (Niu et al., ICML 2022): entropy filter E0 = 0.4 ln C, redundancy filter |cos(p, p_ema)| < d_margin,
    re-weighting exp(E0 - H), and the anti-forgetting Fisher regulariser alpha sum F (theta - theta_0)^2."""

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        lr: float,
        clean_batches: list[torch.Tensor],
        fisher_alpha: float = 2000.0,
        e_margin: float | None = None,
        d_margin: float = 0.05,
    ):
        super().__init__(model, num_classes, lr)
        self.e_margin = 0.4 * math.log(num_classes) if e_margin is None else check_positive("e_margin", e_margin)
        self.d_margin = check_positive("d_margin", d_margin)
        if check_number("fisher_alpha", fisher_alpha) < 0:
            raise fail("fisher_alpha", fisher_alpha, "a weight >= 0")
        self.fisher_alpha = float(fisher_alpha)
        self.params = collect_params(self.model)
        with torch.enable_grad():
            self.fisher = fisher_information(self.model, clean_batches, self.params)
        self.anchor = [p.detach().clone() for p in self.params]
        self.model_probs: torch.Tensor | None = None  # moving average of the selected predictions

    def _reset_running_state(self) -> None:
        self.model_probs = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            logits = self._forward(x)
            ent = entropy(logits)
            keep = ent < self.e_margin  # eq. (3): reliable samples
            probs = logits.softmax(1)
            if self.model_probs is not None:  # eq. (5): drop samples redundant with the running prediction
                cos = F.cosine_similarity(self.model_probs.unsqueeze(0), probs, dim=1)
                keep = keep & (cos.abs() < self.d_margin)
            selected = probs[keep].detach()
            if len(selected):
                mean = selected.mean(0)
                self.model_probs = mean if self.model_probs is None else 0.9 * self.model_probs + 0.1 * mean
            loss = None
            if keep.any():
                coeff = torch.exp(self.e_margin - ent[keep].detach())  # eq. (6): 1 / exp(H - E0)
                loss = (ent[keep] * coeff).mean()
                ewc = sum(
                    (f * (p - a) ** 2).sum() for f, p, a in zip(self.fisher, self.params, self.anchor, strict=True)
                )
                loss = loss + self.fisher_alpha * ewc  # eq. (8)
            self._step(loss, len(x), int(keep.sum()))
        return logits.detach()


class SAR(_EntropyAdapter):
    """SAR (Niu et al., ICLR 2023): reliable entropy (H < 0.4 ln C) minimised with a sharpness-aware (SAM,
    rho = 0.05) step, and model recovery (reset to the source) when the moving entropy falls below 0.2."""

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        lr: float,
        margin: float | None = None,
        rho: float = 0.05,
        reset_constant: float = 0.2,
    ):
        super().__init__(model, num_classes, lr)
        self.margin = 0.4 * math.log(num_classes) if margin is None else check_positive("margin", margin)
        self.rho = check_positive("rho", rho)
        self.reset_constant = check_positive("reset_constant", reset_constant)
        self.params = collect_params(self.model)
        self.ema: float | None = None
        self.resets = 0  # model recoveries since construction or the last reset()

    def _recover(self) -> None:
        """SAR's model recovery: model and optimizer back to the source, the moving entropy forgotten."""
        self.source.restore(self.model, self.optimizer)
        self.ema = None
        self.resets += 1

    def _reset_running_state(self) -> None:
        self.ema = None
        self.resets = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            logits = self._forward(x)
            reliable = entropy(logits) < self.margin  # eq. (2)
            self.seen += len(x)
            self.selected += int(reliable.sum())
            if not reliable.any():
                return logits.detach()
            self.optimizer.zero_grad()
            entropy(logits)[reliable].mean().backward()
            grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in self.params]
            scale = self.rho / (torch.stack([g.norm() for g in grads]).norm() + 1e-12)
            perturbation = [g * scale for g in grads]  # eq. (4): epsilon-hat, first-order ascent step
            with torch.no_grad():
                for p, e in zip(self.params, perturbation, strict=True):
                    p.add_(e)
            self.optimizer.zero_grad()
            ent2 = entropy(self.model(x))[reliable]
            reliable2 = ent2 < self.margin
            if reliable2.any():
                loss2 = ent2[reliable2].mean()
                self.ema = loss2.item() if self.ema is None else 0.9 * self.ema + 0.1 * loss2.item()
                loss2.backward()
            with torch.no_grad():
                for p, e in zip(self.params, perturbation, strict=True):
                    p.sub_(e)
            if reliable2.any():
                self.optimizer.step()  # update with the gradient at theta + epsilon-hat
            self.optimizer.zero_grad()
        if self.ema is not None and self.ema < self.reset_constant:
            self._recover()  # model recovery
        return logits.detach()


class DeYO(_EntropyAdapter):
    """DeYO (Lee et al., ICLR 2024): entropy filter H < 0.5 ln C, pseudo-label probability difference
    PLPD = p(x)[y^] - p(x')[y^] > 0.2 with a patch-shuffled x', weight exp(E0 - H) + exp(PLPD)."""

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        lr: float,
        margin: float | None = None,
        margin_e0: float | None = None,
        plpd_threshold: float = 0.2,
        kind: str = "patch",
        patch_len: int = PATCH_LEN,
        generator: torch.Generator | None = None,
    ):
        generator = generator if generator is not None else torch.Generator().manual_seed(0)
        super().__init__(model, num_classes, lr, generator=generator)
        log_c = math.log(num_classes)
        self.margin = 0.5 * log_c if margin is None else check_positive("margin", margin)
        self.margin_e0 = 0.2 * log_c if margin_e0 is None else check_positive("margin_e0", margin_e0)
        self.plpd_threshold = check_number("plpd_threshold", plpd_threshold)
        self.kind, self.patch_len = kind, patch_len

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            logits = self._forward(x)
            ent = entropy(logits)
            keep = ent < self.margin  # eq. (8), entropy part
            loss, selected = None, 0
            if keep.any():
                with torch.no_grad():
                    logits_prime = self.model(disrupt(x[keep], self.kind, self.patch_len, self.generator))
                probs = logits[keep].softmax(1)
                label = probs.argmax(1, keepdim=True)
                plpd = (probs.gather(1, label) - logits_prime.softmax(1).gather(1, label)).squeeze(1).detach()
                keep2 = plpd > self.plpd_threshold  # eq. (8), PLPD part
                selected = int(keep2.sum())
                if selected:
                    e = ent[keep][keep2]
                    coeff = torch.exp(self.margin_e0 - e.detach()) + torch.exp(plpd[keep2])  # eq. (10)
                    loss = (e * coeff).mean()
            self._step(loss, len(x), selected)
        return logits.detach()
