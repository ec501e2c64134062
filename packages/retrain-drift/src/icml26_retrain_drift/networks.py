"""The trained version: a small flax score network retrained recursively on a 2-D ring of Gaussians.

Same forward process as the grid simulator (``dX = -X dt + sqrt(2) dB``, X_t = e^-t X_0 + sigma_t Z with
sigma_t^2 = 1 - e^-2t). The network predicts the noise Z (denoising score matching, s = -Z_hat / sigma_t);
sampling runs the reverse SDE ``dY = [Y + 2 s(Y, t)] ds + sqrt(2) dB`` from N(0, I) at T down to t_min by
Euler-Maruyama. Each generation fine-tunes the previous model ([INF] warm start) on ``alpha * n`` fresh ring
samples plus ``(1 - alpha) * n`` samples of the current model; drift is the MMD^2 to fresh target samples.
Batches of independent pipelines (seeds x alphas) are trained together with ``jax.vmap``.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from icml26_shared import check_int, check_positive, fail

from .data import ring_sample


class ScoreNet(nn.Module):
    """MLP noise predictor Z_hat(x, t): ``depth`` SiLU layers of ``width`` on [x, Fourier features of log t]."""

    width: int = 128
    depth: int = 2
    features: int = 8

    @nn.compact
    def __call__(self, x: jax.Array, t: jax.Array) -> jax.Array:
        """x: (b, d), t: (b,) -> (b, d)."""
        freqs = jnp.arange(1, self.features + 1)
        phase = jnp.log(t)[:, None] * freqs[None, :] * 0.5
        h = jnp.concatenate([x, jnp.sin(phase), jnp.cos(phase)], axis=-1)
        for _ in range(self.depth):
            h = nn.silu(nn.Dense(self.width)(h))
        return nn.Dense(x.shape[-1])(h)


class TrainConfig(NamedTuple):
    """Diffusion and optimisation settings of the trained simulator ([INF] sizes chosen for a laptop CPU)."""

    T: float = 5.0
    t_min: float = 1e-3
    width: int = 128
    batch: int = 256
    lr: float = 2e-3
    sample_steps: int = 100


def _sigma(t: jax.Array) -> jax.Array:
    return jnp.sqrt(1.0 - jnp.exp(-2.0 * t))


def dsm_loss(params, model: ScoreNet, x0: jax.Array, key: jax.Array, cfg: TrainConfig) -> jax.Array:
    """Denoising score matching: E |Z_hat(e^-t x0 + sigma_t Z, t) - Z|^2, log t ~ U[log t_min, log T]."""
    k_t, k_z = jax.random.split(key)
    log_t = jax.random.uniform(k_t, (x0.shape[0],), minval=jnp.log(cfg.t_min), maxval=jnp.log(cfg.T))
    t = jnp.exp(log_t)
    z = jax.random.normal(k_z, x0.shape)
    xt = jnp.exp(-t)[:, None] * x0 + _sigma(t)[:, None] * z
    return jnp.mean((model.apply(params, xt, t) - z) ** 2)


def train(params, data: jax.Array, key: jax.Array, steps: int, cfg: TrainConfig):
    """``steps`` Adam steps of DSM on minibatches of ``data`` (n, d); returns (params, final loss)."""
    model = ScoreNet(width=cfg.width)
    opt = optax.adam(cfg.lr)

    def step(carry, k):
        p, state = carry
        k_b, k_l = jax.random.split(k)
        batch = data[jax.random.randint(k_b, (cfg.batch,), 0, data.shape[0])]
        loss, grads = jax.value_and_grad(dsm_loss)(p, model, batch, k_l, cfg)
        updates, state = opt.update(grads, state, p)
        return (optax.apply_updates(p, updates), state), loss

    (params, _), losses = jax.lax.scan(step, (params, opt.init(params)), jax.random.split(key, steps))
    return params, losses[-1]


def sample(params, key: jax.Array, n: int, cfg: TrainConfig) -> jax.Array:
    """n samples of the learned reverse SDE (Euler-Maruyama on a geometric time grid T -> t_min) -> (n, 2)."""
    model = ScoreNet(width=cfg.width)
    ts = jnp.geomspace(cfg.T, cfg.t_min, cfg.sample_steps + 1)
    k0, key = jax.random.split(key)

    def step(y, inputs):
        t, t_next, k = inputs
        delta = t - t_next
        score = -model.apply(params, y, jnp.full((n,), t)) / _sigma(t)
        y = y + (y + 2.0 * score) * delta + jnp.sqrt(2.0 * delta) * jax.random.normal(k, y.shape)
        return y, None

    keys = jax.random.split(key, cfg.sample_steps)
    y, _ = jax.lax.scan(step, jax.random.normal(k0, (n, 2)), (ts[:-1], ts[1:], keys))
    return y


def mmd2(a: jax.Array, b: jax.Array, bandwidth: float = 0.5) -> jax.Array:
    """Biased (V-statistic) squared MMD between samples a (n, d) and b (m, d), Gaussian kernel."""

    def k(u, v):
        d2 = ((u[:, None, :] - v[None, :, :]) ** 2).sum(-1)
        return jnp.exp(-d2 / (2.0 * bandwidth**2)).mean()

    return k(a, a) + k(b, b) - 2.0 * k(a, b)


class TrainedRun(NamedTuple):
    """Drift of trained pipelines: mmd2 (B, N+1) of generations 0..N (0 = the target's own sampling floor),
    losses (B, N) final DSM losses, samples (B, n, 2) of the last generation."""

    mmd2: np.ndarray
    losses: np.ndarray
    samples: np.ndarray


def retrain_trained(
    seeds,
    alphas,
    generations: int,
    n: int = 2000,
    steps: int = 300,
    first_rounds: int = 4,
    cfg: TrainConfig | None = None,
) -> TrainedRun:
    """Recursive retraining of one score network per (seed, alpha) pipeline, all pipelines in one vmap.

    ``seeds``: sub-seeds (B,), ``alphas``: fresh fractions (B,) in [0, 1]. Generation 0 trains on target data
    for ``first_rounds * steps`` steps; generation i >= 1 fine-tunes on the alpha-mixture for ``steps`` steps.
    """
    cfg = cfg or TrainConfig()
    seeds = [check_int("seeds", s, 0) for s in seeds]
    alphas = np.asarray(alphas, dtype=float)
    if alphas.shape != (len(seeds),) or (alphas < 0).any() or (alphas > 1).any():
        raise fail("alphas", alphas, f"{len(seeds)} fresh-data fractions in [0, 1], one per seed")
    generations = check_int("generations", generations, 1)
    n = check_int("n", n, 16)
    check_positive("T", cfg.T)
    rngs = [np.random.default_rng(s) for s in seeds]
    fresh = lambda: jnp.asarray(np.stack([ring_sample(r, n) for r in rngs]))  # noqa: E731 - (B, n, 2)
    keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
    model = ScoreNet(width=cfg.width)
    init = jax.jit(jax.vmap(lambda k: model.init(k, jnp.zeros((1, 2)), jnp.ones((1,)))))
    steps = check_int("steps", steps, 1)
    first_rounds = check_int("first_rounds", first_rounds, 1)
    train_b = jax.jit(jax.vmap(partial(train, steps=steps, cfg=cfg)))  # one compiled program for all rounds
    sample_b = jax.jit(jax.vmap(partial(sample, n=n, cfg=cfg)))
    mmd_b = jax.jit(jax.vmap(mmd2))
    n_fresh = jnp.asarray(np.round(alphas * n).astype(int))
    keep_fresh = jnp.arange(n)[None, :, None] < n_fresh[:, None, None]  # first alpha*n rows are fresh

    keys, k_init = _split(keys)
    params = init(k_init)
    data = fresh()
    mmd, losses = [np.asarray(mmd_b(fresh(), data))], []
    for i in range(generations):
        for _ in range(first_rounds if i == 0 else 1):
            keys, k_train = _split(keys)
            params, loss = train_b(params, data, k_train)
        keys, k_sample = _split(keys)
        synthetic = sample_b(params, k_sample)
        mmd.append(np.asarray(mmd_b(synthetic, fresh())))
        losses.append(np.asarray(loss))
        data = jnp.where(keep_fresh, fresh(), synthetic)  # q_{i+1} = alpha p_data + (1 - alpha) p_hat_{i+1}
    return TrainedRun(np.stack(mmd, axis=1), np.stack(losses, axis=1), np.asarray(synthetic))


@partial(jax.jit, static_argnums=1)
def _split(keys: jax.Array, num: int = 2) -> tuple[jax.Array, ...]:
    """Split a batch of keys (B, 2) into ``num`` batches."""
    out = jax.vmap(lambda k: jax.random.split(k, num))(keys)
    return tuple(out[:, j] for j in range(num))
