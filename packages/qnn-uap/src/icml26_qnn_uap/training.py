"""Training SAQNN with optax: MSE loss, Adam with a step schedule, restarts, and the rescale doubling (App. B).

Appendix B's two steps: (1) normalise the targets so that their maximum is 1; (2) start from a' = 1 and double
a' "until it learns well". We read (2) as: keep doubling while the best training MSE improves ([INF]).
Restarts (best training MSE wins) answer the paper's remark that training is sensitive to initialisation.
The default backend is the closed form (A.1) in JAX (vmapped over restarts, jitted); ``backend="pennylane"``
trains the gate-level PennyLane circuit through its JAX interface with the same optimiser.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
from icml26_shared import check_array, check_choice, check_int, check_positive, check_same_length, fail

from .method import SAQNN, output_from_overlap, overlap_from_basis

BACKENDS = ("closed_form", "pennylane")
# The trainers run in milliseconds but XLA's optimising passes take seconds on a loaded 2-core CPU:
# compiling with fewer passes halves the start-up of every new circuit size (measured; ours).
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


@dataclass(frozen=True, eq=False)
class FitResult:
    """A trained SAQNN (its ``rescale`` holds y_max * a'), its parameters and the training record."""

    model: SAQNN
    params: dict
    train_mse: float
    rescale_tried: tuple[float, ...]
    history: np.ndarray  # (steps,) training MSE of the winning run, normalised targets

    def predict(self, x) -> np.ndarray:
        """Predictions ``(N,)`` in the targets' original scale, computed in float64 (as every model call)."""
        return np.asarray(self.model(self.params, x))


def adam_schedule(lr, steps: int):
    """Adam with a step schedule: lr halved at 50 % and 75 % of the steps (the paper's "step scheduling", [INF])."""
    import optax

    schedule = optax.piecewise_constant_schedule(lr, {steps // 2: 0.5, (3 * steps) // 4: 0.5})
    return optax.adam(schedule)


def init_params(key, m: int, n: int) -> dict:
    """Random parameters, theta and phi uniform in [0, 2 pi) (ours, [INF]: the paper does not say)."""
    import jax

    k_theta, k_phi = jax.random.split(key)
    return {
        "theta": jax.random.uniform(k_theta, (2**m - 1,), maxval=2 * np.pi),
        "phi": jax.random.uniform(k_phi, (n,), maxval=2 * np.pi),
    }


@functools.cache
def _compiled_runs(m: int, steps: int):
    """A jitted trainer ``(keys, values, y, rescale, lr) -> (params, final MSE, MSE history)``, vmapped over keys.

    Cached per (m, steps) so that seeds, rescales and learning rates reuse one compilation.
    """
    import jax
    import jax.numpy as jnp

    def runs(keys, values, y, rescale, lr):
        optimiser = adam_schedule(lr, steps)

        def loss(params):
            z = overlap_from_basis(params["theta"], params["phi"], values, m)
            return jnp.mean((rescale * output_from_overlap(z) - y) ** 2)

        def run(key):
            params = init_params(key, m, values.shape[1])

            def step(carry, _):
                params, state = carry
                value, grads = jax.value_and_grad(loss)(params)
                updates, state = optimiser.update(grads, state, params)
                return (jax.tree.map(lambda p, u: p + u, params, updates), state), value

            (params, _), history = jax.lax.scan(step, (params, optimiser.init(params)), length=steps)
            return params, loss(params), history

        return jax.vmap(run)(keys)

    return jax.jit(runs, compiler_options=FAST_COMPILE)


def _closed_form_runs(model: SAQNN, x, y, keys, steps: int, lr: float):
    """Train ``len(keys)`` restarts at once on the closed form (A.1)."""
    import jax.numpy as jnp

    return _compiled_runs(model.m, steps)(keys, model.basis_values(x), jnp.asarray(y), model.rescale, lr)


def _pennylane_runs(model: SAQNN, x, y, keys, steps: int, lr: float):
    """Train each restart on the PennyLane circuit (JAX interface, no jit: compiling the circuit is slow)."""
    import jax
    import jax.numpy as jnp

    from .circuits import pennylane_qnode

    qnode = pennylane_qnode(model)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    optimiser = adam_schedule(lr, steps)

    def loss(params):
        prob = qnode(params["theta"], params["phi"], xj)  # <0|U^dag O U|0>
        return jnp.mean((model.rescale * jnp.sqrt(prob + 1e-12) - yj) ** 2)

    finals, losses, histories = [], [], []
    for key in keys:
        params = init_params(key, model.m, model.n)
        state = optimiser.init(params)
        history = []
        for _ in range(steps):
            value, grads = jax.value_and_grad(loss)(params)
            updates, state = optimiser.update(grads, state, params)
            params = jax.tree.map(lambda p, u: p + u, params, updates)
            history.append(value)
        finals.append(params)
        losses.append(loss(params))
        histories.append(jnp.stack(history))
    stacked = jax.tree.map(lambda *p: jnp.stack(p), *finals)
    return stacked, jnp.stack(losses), jnp.stack(histories)


def fit(
    model: SAQNN,
    x,
    y,
    *,
    steps: int = 80,
    lr: float = 0.05,
    restarts: int = 8,
    max_doublings: int = 3,
    seed: int = 0,
    backend: str = "closed_form",
) -> FitResult:
    """Fit SAQNN to ``(x (N, d), y (N,))`` by MSE (Sec. 4), in float64; returns the best run over a' and restarts.

    ``steps`` and ``lr`` default to the paper's 80 Adam iterations and lr 0.05 (f2, f3; 0.01 for f1).
    Targets must be >= 0 (the output ``a'|<0|U|0>|`` is non-negative) and not all 0.
    """
    import jax

    steps = check_int("steps", steps, 1)
    lr = check_positive("lr", lr)
    restarts = check_int("restarts", restarts, 1)
    max_doublings = check_int("max_doublings", max_doublings, 0)
    check_choice("backend", backend, BACKENDS)
    y = check_array("y", y, ndim=1, dtype=float)
    x = np.asarray(x)
    check_same_length(x=x, y=y)
    if (y < 0).any() or y.max() <= 0:
        raise fail("y", y, "targets >= 0, not all zero (the model output a'|<0|U|0>| is non-negative)")
    y_max = float(y.max())  # App. B step 1: normalise so that max y = 1
    runner = _closed_form_runs if backend == "closed_form" else _pennylane_runs
    best, tried = None, []
    with jax.enable_x64(True):
        keys = jax.random.split(jax.random.PRNGKey(seed), restarts)
        for doubling in range(max_doublings + 1):
            a_prime = 2.0**doubling  # App. B step 2: a' = 1, 2, 4, ...
            trial = replace(model, rescale=a_prime)
            params, final, history = runner(trial, x, y / y_max, keys, steps, lr)
            i = int(np.argmin(np.asarray(final)))
            tried.append(a_prime)
            if best is not None and float(final[i]) >= best[2]:
                break  # doubling no longer helps: a' has passed the coefficient sum
            best = (
                trial,
                jax.tree.map(lambda p, i=i: np.asarray(p[i]), params),
                float(final[i]),
                np.asarray(history[i]),
            )
    trial, params, mse, history = best
    fitted = replace(trial, rescale=trial.rescale * y_max)
    return FitResult(fitted, params, mse * y_max**2, tuple(tried), history * y_max**2)
