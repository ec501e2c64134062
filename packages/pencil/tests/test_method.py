import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_pencil import Graph, Pencil, Sampling, Subgraph, Training, predict, tokenize, train_link, train_regression
from icml26_pencil.baselines import common_neighbors

torch.set_num_threads(1)


def small_model(mp_residual=True, M=12):
    torch.manual_seed(0)
    return Pencil(max_num_nodes=M, d_model=16, n_layers=2, n_heads=2, d_ffn=32, mp_residual=mp_residual).eval()


def random_subgraph(n, seed):
    G = nx.gnp_random_graph(n, 0.4, seed=seed)
    return Subgraph(np.arange(n), np.array(list(G.edges()), dtype=np.int64).reshape(-1, 2))


def test_projection_is_fixed_and_orthogonal():
    model = small_model()
    P = model.P
    torch.testing.assert_close(P.T @ P, torch.eye(16), atol=1e-5, rtol=0)
    assert all(p is not P for p in model.parameters())
    assert model.num_parameters() == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("mp_residual", [True, False])
@settings(deadline=None, max_examples=10)
@given(st.integers(2, 10), st.integers(2, 10), st.integers(0, 100))
def test_padding_does_not_change_scores(mp_residual, n1, n2, seed):
    model = small_model(mp_residual)
    a, b = random_subgraph(n1, seed), random_subgraph(n2, seed + 1)
    with torch.no_grad():
        alone = model(*map(torch.from_numpy, (tokenize([a], 12).tokens, tokenize([a], 12).mask)))
        tb = tokenize([a, b], 12)
        batched = model(torch.from_numpy(tb.tokens), torch.from_numpy(tb.mask))
    torch.testing.assert_close(alone[0], batched[0], atol=1e-5, rtol=1e-4)


def test_adjacency_is_row_normalised_with_self_loops():
    model = small_model()
    tb = tokenize([Subgraph(np.arange(4), np.array([[0, 2], [1, 2], [2, 3]]))], 12)
    A = model.adjacency(torch.from_numpy(tb.tokens))[0]
    torch.testing.assert_close(A.sum(-1), torch.ones(6))
    assert A[2, 2] > 0 and A[0, 1] == 0 and (A[:, 4:] == 0).all()
    torch.testing.assert_close(A[4], A[0])  # task token u aggregates like node u


@settings(deadline=None, max_examples=10)
@given(st.integers(3, 10), st.integers(0, 100))
def test_scores_do_not_depend_on_where_node_tokens_sit(n, seed):
    """Issue 16.11: message passing used to index rows by position and columns by ID; now both by position."""
    model = small_model(True)
    tb = tokenize([random_subgraph(n, seed)], 12, np.random.default_rng(seed))
    perm = np.r_[np.random.default_rng(seed + 1).permutation(n), n, n + 1]  # move node tokens, keep task tokens
    with torch.no_grad():
        ref = model(torch.from_numpy(tb.tokens), torch.from_numpy(tb.mask))
        moved = model(torch.from_numpy(tb.tokens[:, perm]), torch.from_numpy(tb.mask[:, perm]))
    torch.testing.assert_close(moved, ref, atol=1e-5, rtol=1e-4)


def test_mp_residual_flag_changes_the_model():
    with_mp, without = small_model(True), small_model(False)
    assert without.mp is None and with_mp.num_parameters() - without.num_parameters() == 2 * (16 * 16 + 16)
    tb = tokenize([random_subgraph(6, 0)], 12)
    x = (torch.from_numpy(tb.tokens), torch.from_numpy(tb.mask))
    with torch.no_grad():
        without.load_state_dict(with_mp.state_dict(), strict=False)
        assert not torch.allclose(with_mp(*x), without(*x))


@pytest.mark.parametrize("mp_residual", [True, False])
def test_training_learns_common_neighbours(mp_residual):
    G = nx.powerlaw_cluster_graph(60, 2, 0.6, seed=0)
    g = Graph.from_networkx(G)
    rng = np.random.default_rng(0)
    pairs = np.array([rng.choice(60, 2, replace=False) for _ in range(200)])
    y = common_neighbors(g, pairs) / 3.0
    sampling = Sampling(1, 30, 48)
    model = Pencil(48, 32, 1, 2, 64, mp_residual=mp_residual)
    history = train_regression(model, g, pairs, y, sampling, Training(epochs=8, batch_size=32, lr=3e-3), 0)
    assert history[-1] < 0.5 * history[0]
    assert predict(model, g, pairs, sampling).shape == (200,)


def test_link_training_runs_and_is_seeded():
    g = Graph.from_networkx(nx.karate_club_graph())
    sampling = Sampling(2, 3, 26)
    losses = []
    for _ in range(2):
        torch.manual_seed(0)
        model = Pencil(26, 16, 1, 2, 32)
        losses.append(train_link(model, g, sampling, Training(epochs=2, batch_size=64, lr=1e-3), seed=3))
    assert losses[0] == losses[1] and all(np.isfinite(losses[0]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_heads": 3, "d_model": 16}, "n_heads="),
        ({"max_num_nodes": 1}, "max_num_nodes="),
        ({"d_model": 0}, "d_model="),
        ({"n_layers": 0}, "n_layers="),
        ({"d_ffn": 0}, "d_ffn="),
        ({"dropout": 1.0}, "dropout="),
    ],
)
def test_bad_model_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Pencil(**kwargs)


def test_bad_training_and_sampling_arguments():
    for kwargs, match in [
        ({"epochs": 0}, "epochs="),
        ({"batch_size": 0}, "batch_size="),
        ({"lr": -1.0}, "lr="),
        ({"neg_ratio": 0}, "neg_ratio="),
        ({"pairs_per_epoch": -1}, "pairs_per_epoch="),
        ({"weight_decay": -0.1}, "weight_decay="),
    ]:
        with pytest.raises(ValueError, match=match):
            Training(**kwargs)
    with pytest.raises(ValueError, match="depth="):
        Sampling(depth=0)
    with pytest.raises(ValueError, match="num_neighbors="):
        Sampling(num_neighbors=0)
    with pytest.raises(ValueError, match="tokens="):
        small_model(M=12)(torch.zeros(1, 4, 10), torch.ones(1, 4, dtype=torch.bool))
    g = Graph.from_networkx(nx.karate_club_graph())
    with pytest.raises(ValueError, match="targets="):
        train_regression(small_model(), g, np.array([[0, 1]]), np.zeros(2), Sampling(1, 3, 12), Training(), 0)
