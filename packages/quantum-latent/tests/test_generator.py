"""The generators: MMD estimator, latent draws, molecule graphs and metrics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_quantum_latent.generator import draw_latents, mmd2
from icml26_quantum_latent.molecules import decode, encode, molecule_metrics, one_hot_dataset

MMD2 = jax.jit(mmd2)  # one compile for every example instead of one per eager op


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 1000))
def test_mmd_is_symmetric_and_separates(seed):
    rng = np.random.default_rng(seed)
    x, y = jnp.asarray(rng.normal(size=(64, 3))), jnp.asarray(rng.normal(size=(64, 3)) + 2.0)
    assert np.isclose(MMD2(x, y), MMD2(y, x), atol=1e-6)
    assert MMD2(x, y) > 10 * abs(MMD2(x, jnp.asarray(rng.normal(size=(64, 3)))))


def test_draw_latents_uses_the_table_or_the_gaussian():
    table = jnp.asarray([[1.0, 0.0], [0.0, 1.0]])
    logp = jnp.log(jnp.asarray([1.0, 1e-30]))
    key = jax.random.key(0, impl="rbg")
    draw = jax.jit(draw_latents, static_argnums=4)  # one compile instead of one per eager op
    assert np.allclose(draw(key, table, logp, False, 2000), [[1.0, 0.0]] * 2000)
    gaussian = draw(key, table, logp, True, 2000)
    assert abs(float(gaussian.mean())) < 0.1 and abs(float(gaussian.std()) - 1.0) < 0.1


def test_molecule_round_trip_and_metrics():
    smiles = ["CCO", "c1ccccc1", "N#CC(=O)F"]
    nodes, edges, canonical = one_hot_dataset(smiles)
    assert nodes.shape == (3, 9, 5) and edges.shape == (3, 9, 9, 4) and len(canonical) == 3
    n, e = encode("CCO")
    assert decode(n, e) == "CCO"
    broken = e.copy()
    broken[1, 2] = broken[2, 1] = 3  # a triple bond to the oxygen: invalid valence
    metrics = molecule_metrics(np.stack([n, n, n]), np.stack([e, e, broken]), {"CCO"})
    assert metrics["validity"] == pytest.approx(2 / 3) and metrics["uniqueness"] == 0.5 and metrics["novelty"] == 0
    assert encode("[NH3+]CC([O-])=O") is None  # charged atoms are not representable


def test_bad_inputs():
    with pytest.raises(ValueError, match="nodes="):
        molecule_metrics(np.zeros(3), np.zeros((1, 3, 3)), set())
    with pytest.raises(ValueError, match="max_atoms="):
        one_hot_dataset(["C"], max_atoms=0)
