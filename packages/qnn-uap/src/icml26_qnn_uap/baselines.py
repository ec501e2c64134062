"""Baselines: the plain truncated basis expansion fitted by least squares, and a ReLU feed-forward network with
the same parameter count as SAQNN (the classical model the paper's complexity comparison is about, Sec. 3.3)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from icml26_shared import check_array, check_int, check_positive, check_same_length, fail

from .bases import basis_values, check_frequencies, check_inputs
from .training import FAST_COMPILE, adam_schedule


def lstsq_expansion(freqs, basis: str, x_train, y_train, x_test) -> np.ndarray:
    """Fit ``y ~ Re(sum_r c_r <0|U_r(x)|0>)`` with complex c by least squares; predict on ``x_test`` (M,).

    The same basis terms as SAQNN, free coefficients, no circuit constraints: the best a linear method with
    these n terms can do on the training set (an oracle for SAQNN's expressivity at equal n).
    """
    y_train = check_array("y_train", y_train, ndim=1, dtype=float)
    freqs = check_frequencies(freqs, np.asarray(x_train).shape[-1], basis)
    check_same_length(x_train=np.asarray(x_train), y_train=y_train)

    def features(x):
        values = np.asarray(basis_values(check_inputs(x, freqs.shape[1], basis), freqs, basis))  # complex128
        return np.concatenate([values.real, -values.imag], axis=1)  # Re(c B) = Re c Re B - Im c Im B

    coef, *_ = np.linalg.lstsq(features(x_train), y_train, rcond=None)
    return features(x_test) @ coef


def mlp_width(num_params: int, d: int) -> int:
    """Hidden width h of a one-hidden-layer ReLU network whose (d + 2) h + 1 parameters are closest to num_params."""
    num_params = check_int("num_params", num_params, 1)
    d = check_int("d", d, 1)
    return max(1, round((num_params - 1) / (d + 2)))


def mlp_num_parameters(width: int, d: int) -> int:
    """Parameters of ``x -> w2 . relu(W1 x + b1) + b2``: d h + h + h + 1."""
    return (d + 2) * width + 1


def mlp_apply(params: dict, x):
    """The ReLU network's output (N,) for inputs x (N, d)."""
    import jax.numpy as jnp

    hidden = jnp.maximum(x @ params["W1"] + params["b1"], 0.0)
    return hidden @ params["w2"] + params["b2"]


def mlp_init(key, d: int, width: int, padded_width: int | None = None) -> dict:
    """He-normal weights, zero biases (ours, [INF]); columns past ``width`` (up to ``padded_width``) are zero."""
    import jax
    import jax.numpy as jnp

    padded_width = width if padded_width is None else padded_width
    mask = jnp.arange(padded_width) < width
    k1, k2 = jax.random.split(key)
    return {
        "W1": jax.random.normal(k1, (d, padded_width)) * jnp.sqrt(2.0 / d) * mask,
        "b1": jnp.zeros(padded_width),
        "w2": jax.random.normal(k2, (padded_width,)) * jnp.sqrt(2.0 / width) * mask,
        "b2": jnp.zeros(()),
    }


PADDED_WIDTH = 32  # networks up to this width share one compiled trainer (zero columns never train)


@functools.cache
def _compiled_mlp_runs(d: int, padded_width: int, steps: int):
    """A jitted trainer ``(keys, x, y, width, lr) -> (params, final MSE)`` vmapped over restarts.

    Hidden units past ``width`` start at zero and their gradients are masked to zero, so the padded network is
    exactly the width-``width`` one; one compilation then serves every width (compiling dominates the run time).
    """
    import jax
    import jax.numpy as jnp

    def runs(keys, x, y, width, lr):
        optimiser = adam_schedule(lr, steps)
        mask = {"W1": jnp.arange(padded_width) < width, "b1": jnp.arange(padded_width) < width}
        mask |= {"w2": mask["b1"], "b2": jnp.ones((), bool)}

        def loss(params):
            return jnp.mean((mlp_apply(params, x) - y) ** 2)

        def run(key):
            params = mlp_init(key, d, width, padded_width)

            def step(carry, _):
                params, state = carry
                grads = jax.tree.map(lambda g, k: g * k, jax.grad(loss)(params), mask)
                updates, state = optimiser.update(grads, state, params)
                return (jax.tree.map(lambda p, u: p + u, params, updates), state), None

            (params, _), _ = jax.lax.scan(step, (params, optimiser.init(params)), length=steps)
            return params, loss(params)

        return jax.vmap(run)(keys)

    return jax.jit(runs, compiler_options=FAST_COMPILE)


@dataclass(frozen=True, eq=False)
class MLPFit:
    """A trained one-hidden-layer ReLU network."""

    params: dict
    width: int
    num_parameters: int
    train_mse: float

    def predict(self, x) -> np.ndarray:
        import jax

        with jax.enable_x64(True):
            return np.asarray(mlp_apply(self.params, np.asarray(x, dtype=float)))


def fit_mlp(x, y, width: int, *, steps: int = 80, lr: float = 0.05, restarts: int = 8, seed: int = 0) -> MLPFit:
    """Train the ReLU network by MSE with the same Adam + step schedule and restarts as SAQNN (ours, [INF])."""
    import jax

    x = check_array("x", x, ndim=2, dtype=float)
    y = check_array("y", y, ndim=1, dtype=float)
    check_same_length(x=x, y=y)
    width = check_int("width", width, 1)
    steps = check_int("steps", steps, 1)
    lr = check_positive("lr", lr)
    restarts = check_int("restarts", restarts, 1)
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.PRNGKey(seed), restarts)
        padded = max(width, PADDED_WIDTH)
        params, final = _compiled_mlp_runs(x.shape[1], padded, steps)(keys, x, y, width, lr)
        i = int(np.argmin(np.asarray(final)))
        if not np.isfinite(float(final[i])):
            raise fail("lr", lr, "a learning rate that keeps training finite")
        best = {k: np.asarray(v[i]) for k, v in params.items()}
        best |= {"W1": best["W1"][:, :width], "b1": best["b1"][:width], "w2": best["w2"][:width]}
    return MLPFit(best, width, mlp_num_parameters(width, x.shape[1]), float(final[i]))
