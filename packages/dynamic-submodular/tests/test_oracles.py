import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_dynamic_submodular import Coverage, FacilityLocation, GraphCut, SetFunction, check_submodular


def _graph(seed, n=10):
    g = nx.gnp_random_graph(n, 0.4, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 2.0))
    return g


def _oracles(seed):
    rng = np.random.default_rng(seed)
    sim = rng.uniform(0, 1, size=(7, 10))
    return [Coverage(rng.integers(0, 2, size=(10, 12))), FacilityLocation(sim), GraphCut(_graph(seed), lam=0.3)]


def test_values_match_direct_formulas():
    rng = np.random.default_rng(0)
    inc = rng.integers(0, 2, size=(8, 20))
    S = [1, 4, 6]
    assert Coverage(inc).value(S) == inc[S].any(0).sum()
    sim = rng.uniform(size=(5, 8))
    assert FacilityLocation(sim).value(S) == pytest.approx(sim[:, S].max(1).sum())
    assert FacilityLocation(sim).value([]) == 0.0


def test_graph_cut_with_half_lambda_is_cut_plus_inner_weight():
    g = _graph(3)
    S = [0, 2, 5, 7]
    expected = nx.cut_size(g, S, weight="weight") + g.subgraph(S).size(weight="weight")
    assert GraphCut(g, lam=0.5).value(S) == pytest.approx(expected)


@settings(deadline=None, max_examples=20)
@given(st.integers(0, 10_000), st.data())
def test_gains_losses_and_state_agree_with_values(seed, data):
    for f in _oracles(seed):
        perm = np.random.default_rng(seed).permutation(f.n)
        size = data.draw(st.integers(0, f.n - 2))
        S, rest = perm[:size].tolist(), perm[size:]
        base = f.value(S)
        expected = [f.value([*S, e]) - base for e in rest]
        assert np.allclose(f.gains(S, rest), expected, atol=1e-5)
        state = f.state(S[:-1]) if S else f.state([])
        if S:
            state = f.extend(state, S[-1])
        assert np.allclose(f.gains_at(state, rest), expected, atol=1e-5)
        if S:
            assert np.allclose(f.losses(S, S), [base - f.value([s for s in S if s != x]) for x in S], atol=1e-5)


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000))
def test_builtin_oracles_pass_the_submodularity_check(seed):
    for f in _oracles(seed):
        calls = f.calls
        check_submodular(f, samples=32, seed=seed)
        assert f.calls == calls  # the check does not count as algorithm work


def test_gains_count_oracle_calls(coverage):
    coverage.calls = 0
    coverage.gains([0], [1, 2, 3])
    coverage.value([0])
    assert coverage.calls == 4


@pytest.mark.parametrize(
    ("fn", "what"),
    [(lambda S: 10.0 - len(S), "monotone"), (lambda S: float(len(S)) ** 2, "submodular"), (lambda S: -1.0, ">= 0")],
)
def test_check_rejects_non_monotone_or_non_submodular(fn, what):
    with pytest.raises(ValueError, match=f"f=.*{what}"):
        check_submodular(SetFunction(6, fn), samples=200)


def test_set_function_is_a_working_oracle():
    f = SetFunction(5, lambda S: float(len(S) > 0) + 0.5 * len(S & {1, 2}))
    assert f.value([1, 3]) == 1.5
    assert np.allclose(f.gains([3], [1, 4]), [0.5, 0.0])


# bad inputs: one test per validated argument
def test_bad_incidence():
    with pytest.raises(ValueError, match="incidence"):
        Coverage(np.array([[0, 2]]))


def test_bad_weights():
    with pytest.raises(ValueError, match="weights"):
        Coverage(np.array([[0, 1]]), weights=np.array([1.0, -1.0]))


@pytest.mark.parametrize("sim", [np.array([[0.5, -0.1]]), np.array([[np.nan, 1.0]])])
def test_bad_similarity(sim):
    with pytest.raises(ValueError, match="similarity"):
        FacilityLocation(sim)


@pytest.mark.parametrize(
    "graph",
    [
        nx.DiGraph([(0, 1)]),
        nx.MultiGraph([(0, 1), (0, 1)]),
        nx.Graph([(0, 0), (0, 1)]),
        nx.Graph([(0, 1, {"weight": -1.0})]),
        nx.Graph([(0, 1, {"weight": float("nan")})]),
        nx.Graph([(1, 2)]),
        "not a graph",
    ],
)
def test_bad_graph(graph):
    with pytest.raises(ValueError, match="graph"):
        GraphCut(graph)


@pytest.mark.parametrize("lam", [-0.1, 0.6, float("nan")])
def test_bad_lam(lam):
    with pytest.raises(ValueError, match="lam"):
        GraphCut(nx.path_graph(3), lam=lam)


def test_bad_fn_and_samples(coverage):
    with pytest.raises(ValueError, match="fn"):
        SetFunction(3, 42)
    with pytest.raises(ValueError, match="samples"):
        check_submodular(coverage, samples=0)
