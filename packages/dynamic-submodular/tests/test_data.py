import numpy as np
import pytest
from icml26_dynamic_submodular import (
    DELETE,
    INSERT,
    Cardinality,
    Coverage,
    adversarial_stream,
    digits_facility_location,
    greedy,
    partition_by_class,
    random_set_system,
    random_stream,
)


def _replay(n, ops, elements):
    active = set()
    for op, e in zip(ops, elements, strict=True):
        if op == INSERT:
            assert e not in active
            active.add(e)
        else:
            assert op == DELETE and e in active
            active.remove(e)
    return active


def test_streams_are_valid_and_start_with_insertions():
    rng = np.random.default_rng(0)
    f = Coverage(random_set_system(30, 50, 4.0, rng))
    for ops, elements in (random_stream(30, 200, 0.3, rng), adversarial_stream(f, Cardinality(4), 200, 0.3, 2, rng)):
        assert (ops[:15] == INSERT).all() and (ops == DELETE).any()
        _replay(30, ops, elements)


def test_adversary_deletes_the_greedy_solution_in_greedy_order():
    rng = np.random.default_rng(1)
    f = Coverage(random_set_system(20, 40, 4.0, rng))
    ops, elements = adversarial_stream(f, Cardinality(3), 80, 0.3, 1, rng)
    first = int(np.argmax(ops == DELETE))
    active = sorted(elements[:first])  # all inserted before the first deletion
    assert elements[first] == greedy(f, Cardinality(3), active)[0]


def test_set_system_and_digits_shapes():
    rng = np.random.default_rng(0)
    inc = random_set_system(10, 30, 5.0, rng)
    assert inc.shape == (10, 30) and (inc.sum(1) >= 1).all()
    sim, labels = digits_facility_location(50, rng)
    assert sim.shape == (50, 50) and np.allclose(np.diag(sim), 1.0) and (sim > 0).all()
    assert np.allclose(sim, sim.T) and set(labels) <= set(range(10))
    assert partition_by_class(labels, 2).rank == sum(min(2, c) for c in np.bincount(labels))


@pytest.mark.parametrize("n", [2, 7, 60])
def test_digits_similarity_equals_the_direct_broadcast_formula(n):
    """scikit-learn's pairwise kernels give the (n, n, 64) broadcast formula they replaced (issue 19)."""
    from sklearn.datasets import load_digits

    sim, labels = digits_facility_location(n, np.random.default_rng(n))
    X, y = load_digits(return_X_y=True)
    pick = np.random.default_rng(n).choice(len(X), size=n, replace=False)
    sq = ((X[pick][:, None, :] - X[pick][None, :, :]) ** 2).sum(-1)
    assert np.allclose(sim, np.exp(-sq / np.median(sq[np.triu_indices(n, 1)])), rtol=1e-14, atol=0)
    assert np.array_equal(labels, y[pick])


@pytest.mark.parametrize("p_del", [0.0, 0.5, 1.2])
def test_bad_p_del(p_del):
    with pytest.raises(ValueError, match="p_del"):
        random_stream(10, 20, p_del, np.random.default_rng(0))


def test_bad_steps_period_capacity_and_sizes():
    rng = np.random.default_rng(0)
    f = Coverage(random_set_system(10, 20, 3.0, rng))
    with pytest.raises(ValueError, match="steps"):
        random_stream(10, 0, 0.3, rng)
    with pytest.raises(ValueError, match="period"):
        adversarial_stream(f, Cardinality(2), 10, 0.3, 0, rng)
    with pytest.raises(ValueError, match="capacity"):
        partition_by_class(np.array([0, 1]), 0)
    with pytest.raises(ValueError, match="mean_size"):
        random_set_system(5, 10, 0.5, rng)
    with pytest.raises(ValueError, match="n="):
        digits_facility_location(5000, rng)
