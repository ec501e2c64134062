"""A MolGAN-style graph GAN (De Cao & Kipf 2018) in flax, fed by any latent: the paper's QM9 model, in miniature.

Generator: MLP z -> node-type logits (N, T) and bond-type logits (N, N, Y), bonds symmetrised; the
discriminator sees softmax probabilities (fake) or one-hot tensors (real). Discriminator: relational GCN
(one weight per bond type, eq. 4 of MolGAN), gated graph aggregation (eq. 5), MLP -> a WGAN critic score.
Loss: WGAN-GP (Gulrajani et al. 2017) with lambda = 10. [INF] ours: no RL reward (MolGAN's lambda = 1
setting), soft (softmax) instead of Gumbel samples, and smaller layers to fit a 2-core budget.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from icml26_shared import check_array, check_int, check_positive

from .generator import draw_latents, run_compiled

GP_WEIGHT = 10.0  # lambda of the gradient penalty (WGAN-GP)


class GraphGenerator(nn.Module):
    """z (B, d_z) -> node logits (B, N, T) and symmetric bond logits (B, N, N, Y)."""

    num_atoms: int
    atom_types: int
    bond_types: int
    hidden: Sequence[int] = (128, 256)

    @nn.compact
    def __call__(self, z):
        h = z
        for width in self.hidden:
            h = nn.tanh(nn.Dense(width)(h))
        N, T, Y = self.num_atoms, self.atom_types, self.bond_types
        nodes = nn.Dense(N * T)(h).reshape(-1, N, T)
        edges = nn.Dense(N * N * Y)(h).reshape(-1, N, N, Y)
        return nodes, 0.5 * (edges + edges.transpose(0, 2, 1, 3))


class GraphCritic(nn.Module):
    """Relational GCN + gated aggregation + MLP -> one WGAN score per graph."""

    graph_units: Sequence[int] = (32, 16)
    aggregate_units: int = 64
    dense_units: Sequence[int] = (64,)

    @nn.compact
    def __call__(self, nodes, edges):
        adjacency = edges[..., 1:]  # drop the "no bond" channel: (B, N, N, Y-1)
        h = nodes
        for units in self.graph_units:
            x = jnp.concatenate([h, nodes], -1)
            messages = nn.Dense(units * adjacency.shape[-1])(x).reshape(*x.shape[:-1], adjacency.shape[-1], units)
            h = nn.tanh(jnp.einsum("bijy,bjyu->biu", adjacency, messages) + nn.Dense(units)(x))  # MolGAN eq. (4)
        x = jnp.concatenate([h, nodes], -1)
        gate = nn.sigmoid(nn.Dense(self.aggregate_units)(x))
        h = nn.tanh(jnp.sum(gate * nn.tanh(nn.Dense(self.aggregate_units)(x)), axis=1))  # MolGAN eq. (5)
        for units in self.dense_units:
            h = nn.tanh(nn.Dense(units)(h))
        return nn.Dense(1)(h)[:, 0]


def train_molgans(
    z_tables: np.ndarray,
    logps: np.ndarray,
    is_gauss: np.ndarray,
    nodes: np.ndarray,
    edges: np.ndarray,
    seeds: np.ndarray,
    steps: int,
    batch: int = 32,
    lr: float = 1e-3,
    n_critic: int = 2,
    generator_hidden: Sequence[int] = (128, 256),
    critic_graph_units: Sequence[int] = (32, 16),
    critic_dense_units: Sequence[int] = (64,),
    fast_compile: bool = False,
):
    """Train R graph GANs at once (run r draws latents from table r); returns the stacked generator params.

    ``nodes`` (M, N, T) and ``edges`` (M, N, N, Y) are the one-hot training molecules shared by all runs.
    The layer widths default to ``GraphGenerator`` and ``GraphCritic``'s; ``fast_compile`` compiles with XLA's
    ``FAST_COMPILE_OPTIONS`` (see ``generator.run_compiled``).
    """
    z_tables = check_array("z_tables", z_tables, ndim=3)
    nodes = check_array("nodes", nodes, ndim=3)
    edges = check_array("edges", edges, ndim=4)
    check_int("steps", steps, 1)
    check_int("batch", batch, 2)
    check_int("n_critic", n_critic, 1)
    check_positive("lr", lr)
    _, N, T = nodes.shape
    generator = GraphGenerator(num_atoms=N, atom_types=T, bond_types=edges.shape[-1], hidden=tuple(generator_hidden))
    critic = GraphCritic(graph_units=tuple(critic_graph_units), dense_units=tuple(critic_dense_units))
    g_opt, d_opt = optax.adam(lr, b1=0.5, b2=0.9), optax.adam(lr, b1=0.5, b2=0.9)
    real_nodes, real_edges = jnp.asarray(nodes, jnp.float32), jnp.asarray(edges, jnp.float32)

    def fake(g_params, z):
        node_logits, edge_logits = generator.apply(g_params, z)
        return jax.nn.softmax(node_logits), jax.nn.softmax(edge_logits)

    def critic_loss(d_params, g_params, key, z_table, logp, gauss):
        k_z, k_x, k_eps = jax.random.split(key, 3)
        idx = jax.random.randint(k_x, (batch,), 0, real_nodes.shape[0])
        xn, xe = real_nodes[idx], real_edges[idx]
        fn, fe = fake(g_params, draw_latents(k_z, z_table, logp, gauss, batch))
        eps = jax.random.uniform(k_eps, (batch, 1, 1))
        mix_n, mix_e = eps * xn + (1 - eps) * fn, eps[..., None] * xe + (1 - eps[..., None]) * fe
        grads = jax.grad(lambda n, e: critic.apply(d_params, n, e).sum(), argnums=(0, 1))(mix_n, mix_e)
        norm = jnp.sqrt(jnp.sum(grads[0] ** 2, (1, 2)) + jnp.sum(grads[1] ** 2, (1, 2, 3)) + 1e-12)
        wasserstein = critic.apply(d_params, fn, fe).mean() - critic.apply(d_params, xn, xe).mean()
        return wasserstein + GP_WEIGHT * jnp.mean((norm - 1.0) ** 2)

    def generator_loss(g_params, d_params, key, z_table, logp, gauss):
        fn, fe = fake(g_params, draw_latents(key, z_table, logp, gauss, batch))
        return -critic.apply(d_params, fn, fe).mean()

    def one_run(seed, z_table, logp, gauss):
        key = jax.random.key(seed, impl="rbg")
        key, k_g, k_d = jax.random.split(key, 3)
        g_params = generator.init(k_g, z_table[:1])
        d_params = critic.init(k_d, real_nodes[:1], real_edges[:1])
        state = (g_params, d_params, g_opt.init(g_params), d_opt.init(d_params))

        def step(carry, k):
            g_params, d_params, g_state, d_state = carry
            keys = jax.random.split(k, n_critic + 1)
            for kd in keys[:-1]:  # n_critic critic updates per generator update
                grads = jax.grad(critic_loss)(d_params, g_params, kd, z_table, logp, gauss)
                updates, d_state = d_opt.update(grads, d_state, d_params)
                d_params = optax.apply_updates(d_params, updates)
            loss, grads = jax.value_and_grad(generator_loss)(g_params, d_params, keys[-1], z_table, logp, gauss)
            updates, g_state = g_opt.update(grads, g_state, g_params)
            return (optax.apply_updates(g_params, updates), d_params, g_state, d_state), loss

        (g_params, *_), losses = jax.lax.scan(step, state, jax.random.split(key, steps))
        return g_params, losses

    return run_compiled(
        jax.vmap(one_run),
        jnp.asarray(seeds, dtype=jnp.uint32),
        jnp.asarray(z_tables, dtype=jnp.float32),
        jnp.asarray(logps, dtype=jnp.float32),
        jnp.asarray(is_gauss, dtype=bool),
        fast_compile=fast_compile,
    )


def generate_graphs(g_params, z: np.ndarray, num_atoms: int, atom_types: int, bond_types: int):
    """Discrete graphs from one trained generator: argmax node types (n, N) and bond types (n, N, N)."""
    model = GraphGenerator(num_atoms=num_atoms, atom_types=atom_types, bond_types=bond_types)
    node_logits, edge_logits = model.apply(g_params, jnp.asarray(z, jnp.float32))
    return np.asarray(node_logits.argmax(-1)), np.asarray(edge_logits.argmax(-1))


def generate_graph_batches(
    g_params,
    z: np.ndarray,
    num_atoms: int,
    atom_types: int,
    bond_types: int,
    hidden: Sequence[int] = (128, 256),
    fast_compile: bool = False,
):
    """``generate_graphs`` for every trained run at once: stacked ``g_params`` (leading axis R), latents
    ``z`` (R, n, d_z) -> node types (R, n, N) and bond types (R, n, N, N), from one compiled program."""
    model = GraphGenerator(num_atoms=num_atoms, atom_types=atom_types, bond_types=bond_types, hidden=tuple(hidden))

    def all_runs(p, z):
        def one(args):
            node_logits, edge_logits = model.apply(*args)
            return node_logits.argmax(-1), edge_logits.argmax(-1)

        return jax.lax.map(one, (p, z))

    nodes, edges = run_compiled(all_runs, g_params, jnp.asarray(z, jnp.float32), fast_compile=fast_compile)
    return np.asarray(nodes), np.asarray(edges)
