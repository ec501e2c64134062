import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from icml26_pencil import Graph, Subgraph, ego_subgraph, sample_subgraphs, tokenize


def test_full_sampling_is_the_induced_two_hop_ball(karate):
    G, g = karate
    rng = np.random.default_rng(0)
    for u, v in [(0, 33), (5, 16), (2, 3)]:
        sub = ego_subgraph(g, u, v, depth=2, num_neighbors=100, rng=rng, remove_target=False)
        ball = set(nx.ego_graph(G, u, radius=2)) | set(nx.ego_graph(G, v, radius=2))
        assert sub.nodes[:2].tolist() == [u, v] and set(sub.nodes.tolist()) == ball
        local = {(min(a, b), max(a, b)) for a, b in sub.nodes[sub.edges].tolist()}
        assert local == {(min(a, b), max(a, b)) for a, b in G.subgraph(ball).edges()}


def test_training_removes_only_the_target_edge(karate):
    G, g = karate
    sub = ego_subgraph(g, 0, 1, 1, 100, np.random.default_rng(0), remove_target=True)
    pairs = {frozenset(e) for e in sub.nodes[sub.edges].tolist()}
    assert G.has_edge(0, 1) and frozenset((0, 1)) not in pairs
    assert len(pairs) == G.subgraph(sub.nodes.tolist()).number_of_edges() - 1


@settings(deadline=None)
@given(st.integers(1, 2), st.integers(1, 5), st.integers(0, 10_000))
def test_sample_size_bound(depth, k, seed):
    G = nx.barabasi_albert_graph(60, 3, seed=seed)
    g = Graph.from_networkx(G)
    rng = np.random.default_rng(seed)
    u, v = rng.choice(60, 2, replace=False)
    sub = ego_subgraph(g, int(u), int(v), depth, k, rng, remove_target=True)
    bound = 2 * sum(k**h for h in range(depth + 1))  # 1 + k + ... + k^depth per seed node
    assert len(sub.nodes) <= bound and len(set(sub.nodes.tolist())) == len(sub.nodes)
    assert all(G.has_edge(a, b) for a, b in sub.nodes[sub.edges].tolist())


def test_token_layout():
    # path 0-2-1 plus 3-2: u=0, v=1 (not adjacent), common neighbour 2
    sub = Subgraph(np.array([10, 11, 12, 13]), np.array([[0, 2], [1, 2], [2, 3]]))
    M = 6
    tb = tokenize([sub], M)
    X = tb.tokens[0]
    assert X.shape == (4 + 2, 2 * M + 2) and tb.mask.all()
    np.testing.assert_array_equal(X[:4, :4], np.eye(4))  # onehot of IDs, in position order
    A = X[:4, M : M + 4]
    np.testing.assert_array_equal(A, A.T)
    assert A[0, 2] == A[1, 2] == A[2, 3] == 1 and A.sum() == 6
    np.testing.assert_array_equal(X[4:, : 2 * M], X[:2, : 2 * M])  # task tokens copy u and v
    np.testing.assert_array_equal(X[:, 2 * M], [1, 1, 1, 1, 0, 0])  # is_node
    np.testing.assert_array_equal(X[:, 2 * M + 1], [0, 0, 0, 0, 1, 1])  # is_task


@settings(deadline=None)
@given(st.integers(3, 12), st.integers(0, 1000))
def test_random_ids_keep_roots_and_structure(n, seed):
    G = nx.gnp_random_graph(n, 0.5, seed=seed)
    sub = Subgraph(np.arange(n), np.array([(a, b) for a, b in G.edges()], dtype=np.int64).reshape(-1, 2))
    M = 16
    fixed = tokenize([sub], M).tokens[0]
    shuffled = tokenize([sub], M, np.random.default_rng(seed)).tokens[0]
    ids = shuffled[:n, :n].argmax(1)  # token at position i carries ID i
    np.testing.assert_array_equal(ids, np.arange(n))
    np.testing.assert_array_equal(shuffled[n:, : 2 * M].sum(), fixed[n:, : 2 * M].sum())
    # the adjacency spectrum is invariant to relabelling
    ev = [np.linalg.eigvalsh(t[:n, M : M + n]) for t in (fixed, shuffled)]
    np.testing.assert_allclose(ev[0], ev[1], atol=1e-6)
    np.testing.assert_array_equal(shuffled[n : n + 2, :M], fixed[n : n + 2, :M])  # u -> 0, v -> 1


def test_padding_mask():
    subs = [Subgraph(np.arange(3), np.array([[0, 2]])), Subgraph(np.arange(5), np.array([[0, 1], [3, 4]]))]
    tb = tokenize(subs, 8)
    assert tb.tokens.shape[:2] == (2, 7)
    np.testing.assert_array_equal(tb.mask[0], [1, 1, 1, 0, 0, 1, 1])
    assert tb.mask[1].all() and not tb.tokens[0, 3:5].any()


def test_bad_sampler_inputs(karate):
    _, g = karate
    big = Subgraph(np.arange(10), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="max_num_nodes=.*increase max_num_nodes"):
        tokenize([big], 8)
    with pytest.raises(ValueError, match="subgraphs="):
        tokenize([], 8)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="pairs=.*node ids"):
        sample_subgraphs(g, np.array([[0, 34]]), 2, 5, rng, True)
    with pytest.raises(ValueError, match="depth="):
        sample_subgraphs(g, np.array([[0, 1]]), 0, 5, rng, True)
    with pytest.raises(ValueError, match="num_neighbors="):
        sample_subgraphs(g, np.array([[0, 1]]), 2, 0, rng, True)


def test_batched_sampling_matches_single_pairs_and_keeps_k_uniformly(karate):
    _, g = karate
    pairs = np.array([(0, 33), (5, 16), (2, 3), (7, 7), (0, 1)])
    batch = sample_subgraphs(g, pairs, 2, 100, np.random.default_rng(0), remove_target=True)
    for (u, v), sub in zip(pairs.tolist(), batch, strict=True):
        ref = ego_subgraph(g, u, v, 2, 100, np.random.default_rng(1), remove_target=True)
        np.testing.assert_array_equal(sub.nodes, ref.nodes)
        np.testing.assert_array_equal(sub.edges, ref.edges)
    assert batch[3].nodes[0] == 7 and 7 not in batch[3].nodes[1:].tolist()  # u == v appears once
    assert batch[3].self_pair and not any(s.self_pair for i, s in enumerate(batch) if i != 3)
    tokens = tokenize(batch, 64).tokens  # both task tokens of the self pair copy u (official), not position 1
    N = tokens.shape[1] - 2
    np.testing.assert_array_equal(tokens[3, N + 1, :128], tokens[3, 0, :128])
    np.testing.assert_array_equal(tokens[3, N, :128], tokens[3, N + 1, :128])
    np.testing.assert_array_equal(tokens[4, N + 1, :128], tokens[4, 1, :128])  # (0, 1): v at position 1
    # star 0 - {1..16} and the edge 17 - 18; one hop, k=3 of the 16 leaves: each kept with probability 3/16
    star = Graph.from_edges(np.array([(0, i) for i in range(1, 17)] + [(17, 18)]), 19)
    subs = sample_subgraphs(star, np.tile([0, 17], (4000, 1)), 1, 3, np.random.default_rng(0), remove_target=False)
    assert all(len(s.nodes) == 6 and s.nodes[-1] == 18 for s in subs)
    counts = np.bincount(np.concatenate([s.nodes[2:-1] for s in subs]), minlength=19)[1:17]
    np.testing.assert_allclose(counts / 4000, 3 / 16, atol=0.03)
