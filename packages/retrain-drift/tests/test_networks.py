"""The trained simulator's pieces: network shapes, MMD, input checks (training itself runs in the smoke test)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from icml26_retrain_drift.networks import ScoreNet, mmd2, retrain_trained


def test_score_net_shapes():
    model = ScoreNet(width=8)
    params = model.init(jax.random.PRNGKey(0), jnp.zeros((1, 2)), jnp.ones((1,)))
    out = model.apply(params, jnp.ones((5, 2)), jnp.full((5,), 0.3))
    assert out.shape == (5, 2)


def test_mmd2_properties():
    rng = np.random.default_rng(0)
    a, b = jnp.asarray(rng.normal(size=(300, 2))), jnp.asarray(rng.normal(size=(300, 2)))
    assert abs(float(mmd2(a, a))) < 1e-6
    assert np.isclose(float(mmd2(a, b)), float(mmd2(b, a)), atol=1e-6)
    assert float(mmd2(a, b + 1.0)) > 10 * float(mmd2(a, b)) > 0


def test_bad_inputs():
    with pytest.raises(ValueError, match="alphas"):
        retrain_trained([0, 1], [0.0, 1.5], 2)
    with pytest.raises(ValueError, match="alphas"):
        retrain_trained([0, 1], [0.0], 2)
    with pytest.raises(ValueError, match="generations"):
        retrain_trained([0], [0.0], 0)
    with pytest.raises(ValueError, match="seeds"):
        retrain_trained([-1], [0.0], 1)
