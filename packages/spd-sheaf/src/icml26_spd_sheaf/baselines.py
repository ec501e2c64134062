"""What the paper compares against: GIN / GCN on the 2-D molecular graph, and vector-valued Neural Sheaf Diffusion.

* ``EuclideanStream`` / ``GNN``: GIN (Xu et al. 2019) or GCN (Kipf & Welling 2017) layers from
  torch_geometric, mean pooling and an MLP head. GIN alone is also the "without SPD stream" ablation.
* ``NeuralSheafDiffusion``: the Euclidean sheaf the paper claims to beat (Bodnar et al. 2022, eq. 8):
  ``X <- X - sigma(Delta_F (I (x) W1) X W2)`` on d-dimensional vector stalks with C channels and learned
  restriction maps; it shares ``coboundary``/``sheaf_laplacian`` with the SPD method and takes the
  same rank-1 geometry as first-order inputs (bond direction vectors, lifted by the adjoint maps).
"""

from __future__ import annotations

import itertools

import torch
from icml26_shared import check_choice, check_int
from torch import nn
from torch_geometric.nn import GCNConv, GINConv, global_mean_pool

from .method import RestrictionMaps, check_batch, lift_edge_features, sheaf_laplacian, vector_act, vector_adjoint

CONVS = ("gin", "gcn")


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers with ReLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class EuclideanStream(nn.Module):
    """Atom encoder + ``depth`` GIN or GCN layers (ReLU, residual); returns the features of every layer."""

    def __init__(self, in_features: int, hidden: int, depth: int, conv: str = "gin"):
        super().__init__()
        check_choice("conv", conv, CONVS)
        self.encoder = nn.Linear(check_int("in_features", in_features, 1), check_int("hidden", hidden, 1))
        check_int("depth", depth, 1)
        make = (
            (lambda: GINConv(mlp([hidden, hidden, hidden]), train_eps=True))
            if conv == "gin"
            else (lambda: GCNConv(hidden, hidden))
        )
        self.convs = nn.ModuleList(make() for _ in range(depth))
        self.residual = conv == "gin"  # GCN is kept plain: it is the oversmoothing reference of the depth claim

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> list[torch.Tensor]:
        h = self.encoder(x)
        layers = [h]
        for conv in self.convs:
            out = torch.relu(conv(h, edge_index))
            h = h + out if self.residual else out
            layers.append(h)
        return layers


class GNN(nn.Module):
    """GIN or GCN graph regressor/classifier: ``EuclideanStream`` -> mean pool -> MLP head."""

    def __init__(self, in_features: int, hidden: int = 32, depth: int = 2, out_dim: int = 1, conv: str = "gin"):
        super().__init__()
        self.stream = EuclideanStream(in_features, hidden, depth, conv)
        self.head = mlp([hidden, hidden, check_int("out_dim", out_dim, 1)])

    def forward(self, data) -> torch.Tensor:
        check_batch(data)
        h = self.stream(data.x, data.edge_index)[-1]
        return self.head(global_mean_pool(h, data.batch, size=data.num_graphs))


class NeuralSheafDiffusion(nn.Module):
    """Vector-valued sheaf diffusion (NSD) with d-dim stalks and C channels, on node features and bond directions.

    Input stalks: C-1 channels from a linear map of the node features, plus one channel holding the
    bond direction vectors lifted to the nodes by the adjoint restriction maps (first-order geometry,
    the Euclidean counterpart of the SPD method's rank-1 input).
    """

    def __init__(
        self,
        in_features: int,
        d: int = 3,
        channels: int = 4,
        depth: int = 2,
        out_dim: int = 1,
        maps: str = "orthogonal",
    ):
        super().__init__()
        self.d, self.channels = check_int("d", d, 1), check_int("channels", channels, 2)
        self.encoder = nn.Linear(check_int("in_features", in_features, 1), d * (channels - 1))
        flat = d * channels
        self.lift_maps = RestrictionMaps(d * (channels - 1), d, maps)
        self.maps = nn.ModuleList(RestrictionMaps(flat, d, maps) for _ in range(check_int("depth", depth, 1)))
        self.w1 = nn.ParameterList(nn.Parameter(torch.eye(d)) for _ in range(depth))
        self.w2 = nn.ParameterList(nn.Parameter(torch.eye(channels)) for _ in range(depth))
        self.head = mlp([flat + channels * channels, flat, check_int("out_dim", out_dim, 1)])

    def forward(self, data) -> torch.Tensor:
        reverse = check_batch(data)
        h = self.encoder(data.x)
        maps = self.lift_maps(h, data.edge_index)
        geometry = lift_edge_features(
            data.direction.unsqueeze(-1), data.edge_index, maps, data.num_nodes, vector_adjoint
        )
        x = torch.cat([h.view(-1, self.d, self.channels - 1), geometry], dim=-1)  # (N, d, C)
        for maps_layer, w1, w2 in zip(self.maps, self.w1, self.w2, strict=True):
            restriction = maps_layer(x.flatten(1), data.edge_index)
            step = sheaf_laplacian(
                w1 @ x @ w2,
                data.edge_index,
                reverse,
                restriction,
                vector_act,
                vector_adjoint,
                orthogonal=self.maps[0].kind != "general",
            )
            x = x - nn.functional.elu(step)  # Bodnar et al. (2022), eq. (8)
        # readout: the stalks and their rotation-invariant Gram matrices x_v^T x_v (C x C), mean-pooled [INF, ours]
        features = torch.cat([x.flatten(1), (x.transpose(-1, -2) @ x).flatten(1)], dim=-1)
        return self.head(global_mean_pool(features, data.batch, size=data.num_graphs))
