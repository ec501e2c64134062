"""SaTeen: structural-alignment test-time adaptation (the paper's contribution).

Per test batch x (online, one SGD step per batch, model kept across batches and domains):

1. logits z = f(x) (with gradient) and z' = f(x') of a structure-disrupted view x' (no gradient);
2. intra-sample alignment, score  l1 = H(z) - lambda_1 CE(z', z)  (maximise the cross-entropy discrepancy
   between the sample and its disrupted counterpart: "stable dominant features");
3. reliable filter l1 < margin (margin = 0.2 ln C) and re-weighting coeff = exp(margin - l1);
4. inter-sample alignment: the reconstruction error ||(I - U U^T) z|| of every sample in the subspace U spanned
   by an incremental PCA over the logits of the reliable samples seen so far ("stale intrinsic manifold");
5. loss = mean_reliable(coeff l1) + lambda_2 mean_all(coeff ||(I - U U^T) z||), one step on the affine
   parameters of the normalisation layers.

The paper's equations are not public; the numbering below follows the official code (sateen.py), step by step.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
from icml26_shared import check_int, check_number, check_positive, fail
from sklearn.decomposition import IncrementalPCA
from torch import nn

from .views import DISRUPTIONS, PATCH_LEN, disrupt

NORM_LAYERS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)
PROB_EPS = 1e-8  # probabilities + 1e-8, renormalised (official CrossEntropy)
CE_CLAMP = math.log(1000)  # official clamp of the intra-sample cross-entropy (a constant, also for C != 1000)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Shannon entropy H(softmax(z)) per row of ``logits`` (b, C) -> (b,)."""
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1)


def cross_entropy(logits: torch.Tensor, logits_prime: torch.Tensor) -> torch.Tensor:
    """CE(q, p) = sum_c q_c (-log p_c) with p = softmax(z), q = softmax(z') (each + 1e-8, renormalised).

    The intra-sample discrepancy between a sample and its structure-disrupted view (b, C) -> (b,);
    the gradient flows through z only (z' comes from a no-grad forward pass).
    """
    if logits.shape != logits_prime.shape or logits.ndim != 2:
        raise fail("logits_prime", tuple(logits_prime.shape), f"the shape of logits {tuple(logits.shape)} = (b, C)")
    p = logits.softmax(1) + PROB_EPS
    q = logits_prime.softmax(1) + PROB_EPS
    p = p / p.sum(1, keepdim=True)
    q = q / q.sum(1, keepdim=True)
    return (q * -p.log()).sum(1)


def configure_model(model: nn.Module) -> nn.Module:
    """Train mode, everything frozen except the affine parameters of normalisation layers; BatchNorm layers
    use the statistics of the test batch (no running statistics), as Tent/SAR/DeYO/SaTeen do."""
    if not any(isinstance(m, NORM_LAYERS) for m in model.modules()):
        raise fail(
            "model", type(model).__name__, f"a model with normalisation layers {[c.__name__ for c in NORM_LAYERS]}"
        )
    model.train()
    model.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d | nn.BatchNorm2d):
            m.track_running_stats = False
            m.running_mean = None
            m.running_var = None
        if isinstance(m, NORM_LAYERS):
            m.requires_grad_(True)
    return model


def collect_params(model: nn.Module) -> list[nn.Parameter]:
    """The affine scale and shift of every normalisation layer (what every method here adapts)."""
    params = [p for m in model.modules() if isinstance(m, NORM_LAYERS) for p in (m.weight, m.bias) if p is not None]
    if not params:
        raise fail("model", type(model).__name__, "normalisation layers with affine parameters to adapt")
    return params


def check_batch(x: torch.Tensor) -> torch.Tensor:
    """A non-empty 4-D image batch (b, c, h, w)."""
    if not isinstance(x, torch.Tensor) or x.ndim != 4 or x.shape[0] == 0:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise fail("x", shape, "a non-empty 4-D image batch (b, c, h, w)")
    return x


class SourceState:
    """The source state of an adapter, taken at construction: model and optimizer state dicts and the state of
    its random generator (if any). ``restore`` returns them to it: every adapter's ``reset()`` (issue 16.12)."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, generator: torch.Generator | None = None):
        self.model = copy.deepcopy(model.state_dict())
        self.optimizer = copy.deepcopy(optimizer.state_dict())
        self.generator = None if generator is None else generator.get_state()

    def restore(self, model: nn.Module, optimizer: torch.optim.Optimizer, generator: torch.Generator | None = None):
        model.load_state_dict(self.model)
        optimizer.load_state_dict(copy.deepcopy(self.optimizer))
        if generator is not None:
            generator.set_state(self.generator)


class ReferenceSubspace:
    """The reference subspace of inter-sample alignment: an incremental PCA over reliable logits.

    Reliable logits are buffered and, once ``flush_size = max(batch_size, k)`` of them are waiting, fed to
    ``IncrementalPCA.partial_fit``: scikit-learn refuses a partial fit on fewer than ``k`` samples, so with the
    official k = 64 and IPCA batch 32 the first fit waits for 64 reliable logits and every fit has k
    components. The official code tried at 32 and swallowed scikit-learn's exception, which makes its PCA
    state depend on the scikit-learn version (issue 20); here errors propagate. ``basis`` is the orthonormal
    U (C, k) = QR(components^T), cached until the next fit.
    """

    def __init__(self, num_classes: int, k: int, batch_size: int = 32):
        self.num_classes = check_int("num_classes", num_classes, 2)
        self.k = check_int("k", k, 1, num_classes - 1)  # k >= C spans everything: the error would vanish
        self.batch_size = check_int("batch_size", batch_size, 1)
        self.flush_size = max(self.batch_size, self.k)  # partial_fit needs >= k samples per call
        self.ipca = IncrementalPCA(n_components=k, batch_size=batch_size)
        self.buffer: list[np.ndarray] = []
        self._basis: torch.Tensor | None = None

    @property
    def fitted(self) -> bool:
        return hasattr(self.ipca, "components_")

    def add(self, logits: torch.Tensor) -> None:
        """Buffer reliable logits (r, C); fit when at least ``flush_size`` are waiting."""
        if logits.ndim != 2 or logits.shape[1] != self.num_classes:
            raise fail("logits", tuple(logits.shape), f"(r, {self.num_classes}) logits")
        if len(logits):
            self.buffer.append(logits.detach().cpu().double().numpy())
        if sum(len(b) for b in self.buffer) >= self.flush_size:
            self.ipca.partial_fit(np.concatenate(self.buffer))
            self.buffer.clear()
            self._basis = None

    def basis(self, like: torch.Tensor) -> torch.Tensor:
        """Orthonormal basis U (C, k) of the fitted subspace, in the dtype/device of ``like``."""
        if not self.fitted:
            raise RuntimeError("ReferenceSubspace.basis: no partial_fit yet (fewer than flush_size reliable logits)")
        if self._basis is None:
            components = torch.from_numpy(self.ipca.components_.copy())  # (k, C)
            self._basis = torch.linalg.qr(components.T, mode="reduced")[0]
        return self._basis.to(like.device, like.dtype)

    def reconstruction_error(self, logits: torch.Tensor) -> torch.Tensor:
        """||(I - U U^T) z||_2 per row of ``logits`` (b, C) -> (b,), uncentred as in the official code."""
        U = self.basis(logits)
        residual = logits - (logits @ U) @ U.T  # (I - U U^T) z
        return residual.norm(dim=1)


class SaTeen:
    """Structural-alignment test-time adaptation of ``model`` (adapted in place; see the module docstring).

    ``adapter(x)`` adapts on the batch and returns the logits computed before the update (online
    protocol). Defaults are the official ones for ResNet-50-GN on ImageNet-C: lambda_1 = 0.4,
    lambda_2 = 0.05, margin = 0.2 ln C, k = 64, IPCA batch 32 (the first fit waits for k = 64 reliable
    logits, see ``ReferenceSubspace``), 100 warm-up steps, SGD momentum 0.9, cross-entropy clamped at
    log(1000). ``reset()`` returns the model, the optimizer, the subspace and the disruption generator to the
    state at construction.
    """

    def __init__(
        self,
        model: nn.Module,
        num_classes: int,
        lr: float = 0.00025,
        lambda_1: float = 0.4,
        lambda_2: float = 0.05,
        margin: float | None = None,
        k: int = 64,
        ipca_batch: int = 32,
        warmup: int = 100,
        kind: str = "patch",
        patch_len: int = PATCH_LEN,
        momentum: float = 0.9,
        ce_clamp: float = CE_CLAMP,
        generator: torch.Generator | None = None,
    ):
        self.num_classes = check_int("num_classes", num_classes, 2)
        self.ce_clamp = check_positive("ce_clamp", ce_clamp)
        for name, value in (("lambda_1", lambda_1), ("lambda_2", lambda_2)):
            if check_number(name, value) < 0:
                raise fail(name, value, "a weight >= 0")
        self.lambda_1, self.lambda_2 = float(lambda_1), float(lambda_2)
        self.margin = 0.2 * math.log(num_classes) if margin is None else check_positive("margin", margin)
        self.subspace = ReferenceSubspace(num_classes, k, ipca_batch)
        self.warmup = check_int("warmup", warmup, 0)
        if kind not in DISRUPTIONS:
            raise fail("kind", kind, f"one of {list(DISRUPTIONS)}")
        self.kind = kind
        self.patch_len = check_int("patch_len", patch_len, 1)
        self.generator = generator if generator is not None else torch.Generator().manual_seed(0)
        self.model = configure_model(model)
        self.optimizer = torch.optim.SGD(collect_params(model), lr=check_positive("lr", lr), momentum=momentum)
        self.source = SourceState(self.model, self.optimizer, self.generator)
        self.steps = 0  # adaptation steps with at least one reliable sample (official st["steps"])
        self.seen = 0
        self.selected = 0  # reliable samples so far (for the reliable fraction)

    def reset(self) -> None:
        """Back to the source state: model, optimizer, disruption generator, an empty subspace, zero counters."""
        self.source.restore(self.model, self.optimizer, self.generator)
        self.subspace = ReferenceSubspace(self.num_classes, self.subspace.k, self.subspace.batch_size)
        self.steps = self.seen = self.selected = 0

    def loss(self, x: torch.Tensor, logits: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor]:
        """SaTeen's loss on batch ``x`` with logits ``logits`` (graph attached); ``(loss or None, reliable mask)``."""
        with torch.no_grad():
            logits_prime = self.model(disrupt(x, self.kind, self.patch_len, self.generator))  # step 1: f(x')
        discrepancy = cross_entropy(logits, logits_prime).clamp_max(self.ce_clamp)
        l1 = entropy(logits) - self.lambda_1 * discrepancy  # step 2: intra-sample alignment score
        reliable = l1 < self.margin  # step 3: reliable-sample filter
        if not reliable.any():
            return None, reliable
        coeff = torch.exp(self.margin - l1.detach())  # step 3: re-weighting 1 / exp(l1 - margin)
        loss = (l1 * coeff)[reliable].mean()
        self.steps += 1
        self.subspace.add(logits.detach()[reliable])  # step 4: grow the reference subspace (IPCA)
        if self.lambda_2 > 0 and self.steps >= self.warmup and self.subspace.fitted:
            loss = loss + self.lambda_2 * (self.subspace.reconstruction_error(logits) * coeff).mean()  # step 5
        return loss, reliable

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        x = check_batch(x)
        with torch.enable_grad():
            logits = self.model(x)
            if logits.ndim != 2 or logits.shape[1] != self.num_classes:
                raise fail("model(x)", tuple(logits.shape), f"logits (b, {self.num_classes})")
            loss, reliable = self.loss(x, logits)
            self.seen += len(x)
            self.selected += int(reliable.sum())
            if loss is not None:  # step 6: one SGD step only if a sample was reliable
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return logits.detach()

    @property
    def reliable_fraction(self) -> float:
        return self.selected / max(self.seen, 1)
