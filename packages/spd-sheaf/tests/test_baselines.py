"""Baselines: GIN/GCN and vector-valued Neural Sheaf Diffusion (shapes, the graph-Laplacian limit, bad input)."""

import networkx as nx
import numpy as np
import pytest
import torch
from icml26_spd_sheaf import GNN, DualStreamSheafNet, NeuralSheafDiffusion, check_graph, sheaf_laplacian
from icml26_spd_sheaf.data import point_neighbourhoods
from icml26_spd_sheaf.method import vector_act, vector_adjoint
from torch_geometric.data import Batch


def batch_of_neighbourhoods(num=4):
    graphs = point_neighbourhoods(num, neighbours=5, seed=0)
    return Batch.from_data_list(graphs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: GNN(3, 8, 2, 2, "gin"),
        lambda: GNN(3, 8, 3, 2, "gcn"),
        lambda: NeuralSheafDiffusion(3, 3, 3, 2, 2),
        lambda: DualStreamSheafNet(3, 8, 2, 2, 2),
        lambda: DualStreamSheafNet(3, 8, 2, 1, 2, maps="identity"),
    ],
)
def test_models_map_graphs_to_outputs_and_train(make):
    torch.manual_seed(0)
    batch = batch_of_neighbourhoods()
    model = make()
    out = model(batch)
    assert out.shape == (4, 2) and torch.isfinite(out).all()
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_vector_sheaf_with_identity_maps_is_the_normalised_graph_laplacian():
    """Trusted reference: networkx's normalised Laplacian, Kronecker identity on the stalks."""
    graph = nx.petersen_graph()
    edges = torch.tensor([q for u, v in graph.edges for q in ((u, v), (v, u))]).T
    reverse = check_graph(edges, 10)
    maps = torch.eye(3, dtype=torch.float64).repeat(edges.shape[1], 1, 1)
    x = torch.randn(10, 3, 2, dtype=torch.float64)
    ours = sheaf_laplacian(x, edges, reverse, maps, vector_act, vector_adjoint)
    reference = nx.normalized_laplacian_matrix(graph, nodelist=range(10)).toarray()
    np.testing.assert_allclose(ours.numpy(), np.einsum("uv,vdc->udc", reference, x.numpy()), atol=1e-10)


def test_baselines_reject_bad_arguments():
    with pytest.raises(ValueError, match="conv="):
        GNN(3, conv="gat")
    with pytest.raises(ValueError, match="depth="):
        GNN(3, depth=0)
    with pytest.raises(ValueError, match="channels="):
        NeuralSheafDiffusion(3, channels=1)


def test_models_reject_nan_features_and_broken_graphs():
    batch = batch_of_neighbourhoods()
    batch.x[0, 0] = float("nan")
    with pytest.raises(ValueError, match="x="):
        DualStreamSheafNet(3, 8, 2, 1)(batch)
    batch = batch_of_neighbourhoods()
    batch.edge_index = batch.edge_index[:, 1:]
    with pytest.raises(ValueError, match="edge_index="):
        NeuralSheafDiffusion(3)(batch)
