"""The generative model on the synthetic target: an MLP generator g(z) trained by kernel MMD, in JAX.

One compiled program trains every (seed, latent) run at once (``jax.vmap`` over runs, ``lax.scan`` over
steps), so the three latents get the same architecture, budget and optimiser. Latents are drawn inside the
loop: a categorical draw over an exact ``LatentTable`` for photonic latents, N(0, I) for the Gaussian one.

[INF] ours: the spec suggests an MMD-trained generator for stability on CPU; the paper trains GANs. The
MMD uses a mixture of RBF kernels k(x, y) = sum_sigma exp(-|x - y|^2 / (2 sigma^2)) (Li et al. 2015).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from icml26_shared import check_array, check_int, check_positive, fail

BANDWIDTHS = (0.1, 0.3, 1.0, 3.0)  # sigma of the RBF mixture, in units of the standardised data
# XLA options that cut CPU compile time ~3x at some run-time cost: for compile-bound runs (the smoke config)
FAST_COMPILE_OPTIONS = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


def run_compiled(fn, *args, fast_compile: bool = False):
    """``jax.jit(fn)(*args)``, compiled with ``FAST_COMPILE_OPTIONS`` on CPU when ``fast_compile``.

    The options change how XLA optimises and emits the program, not what it computes (the smoke config's
    training programs are compiled far more than they are run, so compile time is what it pays for).
    """
    lowered = jax.jit(fn).lower(*args)
    fast = fast_compile and jax.default_backend() == "cpu"
    return lowered.compile(FAST_COMPILE_OPTIONS if fast else None)(*args)


class MLPGenerator(nn.Module):
    """g(z) = z + f(z) with f an MLP with ReLU hidden layers (2 x 64 in the miniature), R^m -> R^m.

    [INF] ours: the residual form makes the identity, the map under which the theory's quantum latent already
    matches boson-sampling data, reachable by gradient descent; f is randomly initialised for every latent.
    """

    out_dim: int
    hidden: Sequence[int] = (64, 64)

    @nn.compact
    def __call__(self, z: jnp.ndarray) -> jnp.ndarray:
        h = z
        for width in self.hidden:
            h = nn.relu(nn.Dense(width)(h))
        return z + nn.Dense(self.out_dim)(h)


def mmd2(x: jnp.ndarray, y: jnp.ndarray, bandwidths: Sequence[float] = BANDWIDTHS) -> jnp.ndarray:
    """Unbiased MMD^2 between samples x (n, d) and y (k, d) under the RBF mixture (Gretton et al. 2012, eq. 3)."""

    def gram(a, b):
        d2 = jnp.sum(a**2, 1)[:, None] + jnp.sum(b**2, 1)[None, :] - 2.0 * a @ b.T
        return sum(jnp.exp(-jnp.maximum(d2, 0.0) / (2.0 * s**2)) for s in bandwidths)

    n, k = x.shape[0], y.shape[0]
    kxx, kyy, kxy = gram(x, x), gram(y, y), gram(x, y)
    off_x = (kxx.sum() - jnp.trace(kxx)) / (n * (n - 1))
    off_y = (kyy.sum() - jnp.trace(kyy)) / (k * (k - 1))
    return off_x + off_y - 2.0 * kxy.mean()


def draw_latents(key, z_table, logp, is_gauss, batch: int) -> jnp.ndarray:
    """A batch of latents: rows of ``z_table`` drawn with log-probabilities ``logp``, or N(0, I) if ``is_gauss``."""
    k_table, k_normal = jax.random.split(key)
    discrete = z_table[jax.random.categorical(k_table, logp, shape=(batch,))]
    gaussian = jax.random.normal(k_normal, discrete.shape)
    return jnp.where(is_gauss, gaussian, discrete)


def train_generators(
    z_tables: np.ndarray,
    logps: np.ndarray,
    is_gauss: np.ndarray,
    data: np.ndarray,
    seeds: np.ndarray,
    steps: int,
    batch: int = 256,
    lr: float = 1e-3,
    hidden: Sequence[int] = (64, 64),
    fast_compile: bool = False,
):
    """Train R generators at once; run r maps latents (``z_tables[r]``, ``logps[r]``) to ``data[r]`` (N, d).

    Returns the stacked flax parameters (leading axis R) and the per-step MMD^2 training loss (R, steps).
    ``fast_compile`` compiles with ``FAST_COMPILE_OPTIONS`` (see ``run_compiled``).
    """
    z_tables = check_array("z_tables", z_tables, ndim=3)
    data = check_array("data", data, ndim=3)
    check_int("steps", steps, 1)
    check_int("batch", batch, 2)
    check_positive("lr", lr)
    if not (len(z_tables) == len(logps) == len(is_gauss) == len(data) == len(seeds)):
        raise fail("seeds", seeds, "one entry per run, like z_tables, logps, is_gauss and data")
    model = MLPGenerator(out_dim=data.shape[-1], hidden=tuple(hidden))
    optimiser = optax.adam(lr)

    def one_run(seed, z_table, logp, gauss, x_all):
        key = jax.random.key(seed, impl="rbg")
        key, k_init = jax.random.split(key)
        params = model.init(k_init, z_table[:1])
        state = optimiser.init(params)

        def loss_fn(p, z, x):
            return mmd2(model.apply(p, z), x)

        def step(carry, k):
            p, s = carry
            k_z, k_x = jax.random.split(k)
            z = draw_latents(k_z, z_table, logp, gauss, batch)
            x = x_all[jax.random.randint(k_x, (batch,), 0, x_all.shape[0])]
            loss, grads = jax.value_and_grad(loss_fn)(p, z, x)
            updates, s = optimiser.update(grads, s, p)
            return (optax.apply_updates(p, updates), s), loss

        (params, _), losses = jax.lax.scan(step, (params, state), jax.random.split(key, steps))
        return params, losses

    return run_compiled(
        jax.vmap(one_run),
        jnp.asarray(seeds, dtype=jnp.uint32),
        jnp.asarray(z_tables, dtype=jnp.float32),
        jnp.asarray(logps, dtype=jnp.float32),
        jnp.asarray(is_gauss, dtype=bool),
        jnp.asarray(data, dtype=jnp.float32),
        fast_compile=fast_compile,
    )


def generate(params, z: np.ndarray, out_dim: int, hidden: Sequence[int] = (64, 64)) -> np.ndarray:
    """Samples g(z) of one trained run (unstacked ``params``) for latents ``z`` (n, d_z) -> (n, out_dim)."""
    return np.asarray(MLPGenerator(out_dim=out_dim, hidden=tuple(hidden)).apply(params, jnp.asarray(z, jnp.float32)))


def evaluate_mmd(
    params,
    z: np.ndarray,
    x_test: np.ndarray,
    out_dim: int,
    hidden: Sequence[int] = (64, 64),
    fast_compile: bool = False,
) -> np.ndarray:
    """Test MMD^2 of every trained run, (R,): stacked ``params`` (leading axis R), latents ``z`` (R, n, d_z),
    test data ``x_test`` (R, k, out_dim). One compiled program; the runs are evaluated one after another."""
    model = MLPGenerator(out_dim=out_dim, hidden=tuple(hidden))

    def all_runs(p, z, x):
        return jax.lax.map(lambda args: mmd2(model.apply(args[0], args[1]), args[2]), (p, z, x))

    z, x_test = jnp.asarray(z, jnp.float32), jnp.asarray(x_test, jnp.float32)
    return np.asarray(run_compiled(all_runs, params, z, x_test, fast_compile=fast_compile))
