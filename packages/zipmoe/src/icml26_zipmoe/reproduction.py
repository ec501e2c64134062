"""One seed of the reproduction: train, trace, compress, plan, serve through the real pipeline, replay in
the simulator; and the real-weights measurement. ``experiment.measure`` runs it per seed.

Per seed: a TinyMoE is trained on Shakespeare (cached) and served in bf16. Its experts are offloaded in
ZipMoE's format and as raw bf16. A profiling run over one stretch of held-out text gives the router trace
that plans the hierarchical cache (conditional Poisson model); a serving run over another stretch decodes
``serve_batch`` sequences through the real pipeline with ZipMoE and the baselines at the same memory
budget, and the serving trace is replayed in the discrete-event simulator.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from icml26_shared import Config, cached, derive, fingerprint

from .baselines import BASELINES


def _trained_model(config: Config, seed: int, data):
    """The seed's TinyMoE, trained once and kept in the cache (safetensors), in bf16."""
    import torch

    from .moe import TinyMoE, train_moe

    def new_model() -> TinyMoE:
        return TinyMoE(
            int(data.max()) + 1,
            config.d,
            config.heads,
            config.layers,
            config.d_ff,
            config.num_experts,
            config.k,
            config.context,
        )

    def build():
        torch.manual_seed(derive(seed, "init"))
        model = new_model()
        train_moe(
            model,
            torch.from_numpy(data[: config.n_chars]),
            config.train_steps,
            config.train_batch,
            config.lr,
            derive(seed, "train"),
        )
        return model.state_dict()

    key = f"zipmoe/tinymoe-{fingerprint([config.as_dict(), seed])}"
    model = new_model()
    model.load_state_dict(cached(key, build))
    return model.to(torch.bfloat16).eval()


def _sequences(data: np.ndarray, config: Config, seed: int, name: str, batch: int, length: int) -> np.ndarray:
    """``batch`` windows (batch, length) of held-out text (after the training text), seed-dependent."""
    rng = np.random.default_rng(derive(seed, name))
    starts = rng.integers(config.n_chars, data.size - length, size=batch)
    return np.stack([data[s : s + length] for s in starts])


def _decode(model, sequences: np.ndarray, get_experts):
    """Teacher-forced decoding of ``sequences`` (B, steps): logits per step and the trace (steps, layers, B, k)."""
    import torch

    from .moe import decode_step

    kv: list = [None] * len(model.blocks)
    logits, trace = [], []
    tokens = torch.from_numpy(sequences)
    for position in range(sequences.shape[1]):
        out, routed = decode_step(model, tokens[:, position], position, kv, get_experts)
        logits.append(out)
        trace.append(torch.stack(routed).numpy())
    return logits, np.stack(trace)


def _resident(model):
    def get_experts(layer, need):
        return [(e, model.expert(layer, e)) for e in need]

    return get_experts


def _codec_metrics(tensors, config: Config) -> dict[str, float]:
    """Entropies of the planes, ZipMoE's size ratio, raw zstd's, and whether every tensor round-trips."""
    from .baselines import raw_zstd_ratio
    from .codec import CODECS, bf16_words, compress_bf16, decompress_bf16, entropy_bits, split_planes

    exponent, sign_mantissa = split_planes(np.concatenate([bf16_words(t) for t in tensors]))
    stored = dict.fromkeys(CODECS, 0)
    raw = 0
    exact = True
    for tensor in tensors:
        for codec in {config.codec, "lz4hc"}:
            packed = compress_bf16(tensor, config.num_chunks, codec)
            stored[codec] += packed.nbytes
            exact &= bool(np.array_equal(bf16_words(decompress_bf16(packed)), bf16_words(tensor)))
        raw += 2 * packed.numel
    return {
        "exponent_entropy": entropy_bits(exponent),
        "sm_entropy": entropy_bits(sign_mantissa),
        "size_ratio": stored[config.codec] / raw,
        "size_ratio_lz4hc": stored["lz4hc"] / raw,
        "raw_zstd_ratio": raw_zstd_ratio(tensors),
        "roundtrip_exact": float(exact),
    }


def _decompress_rate(store) -> tuple[float, float]:
    """Measured single-thread decompression: (decoded bytes/s, mean decoded bytes per chunk), layer 0.

    Timed in this thread's CPU time, so other processes on a shared machine do not slow it down.
    """
    from .codec import decompress_bytes

    chunks = [
        (c, store.path.read_bytes()[c.offset : c.offset + c.length])
        for (layer, _), entries in store.index.items()
        if layer == 0
        for t in entries
        for c in t.e_chunks
    ]
    start = time.thread_time()
    for extent, blob in chunks:
        decompress_bytes(blob, store.codec, extent.size)
    decoded = sum(c.size for c, _ in chunks)
    return decoded / max(time.thread_time() - start, 1e-9), decoded / len(chunks)


def _expert_compute(model) -> float:
    """Measured seconds (this thread's CPU time) for one bf16 expert on one token (mean of 50 calls)."""
    import torch

    from .moe import expert_forward

    x = torch.zeros(1, model.embed.embedding_dim, dtype=torch.bfloat16)
    w1, w2 = model.expert(0, 0)
    start = time.thread_time()
    for _ in range(50):
        expert_forward(x, w1, w2)
    return (time.thread_time() - start) / 50


def _hit_distribution(p: np.ndarray, n_full: int, n_sm: int, k: int) -> np.ndarray:
    """CPS prediction of P(full hits = f, SM hits = s) for one token's k experts, (k+1, k+1)."""
    from .planning import poisson_binomial

    full, sm, rest = (
        poisson_binomial(p[:n_full]),
        poisson_binomial(p[n_full : n_full + n_sm]),
        poisson_binomial(p[n_full + n_sm :]),
    )
    joint = np.zeros((k + 1, k + 1))
    for f in range(min(k, n_full) + 1):
        for s in range(min(k - f, n_sm) + 1):
            if k - f - s < rest.size:
                joint[f, s] = full[f] * sm[s] * rest[k - f - s]
    return joint / joint.sum()


def _observed_hits(trace: np.ndarray, counts: np.ndarray, n_full: int, n_sm: int, k: int) -> np.ndarray:
    """Empirical P(full hits = f, SM hits = s) per token and layer of ``trace`` (steps, layers, B, k) when each
    layer's ``n_full`` most popular experts of the profile (``counts`` (layers, N)) are in full slots and
    the next ``n_sm`` in SM slots: the placement the planner's model assumes."""
    joint = np.zeros((k + 1, k + 1))
    for layer in range(trace.shape[1]):
        rank = np.empty(counts.shape[1], dtype=int)
        rank[np.argsort(-counts[layer], kind="stable")] = np.arange(counts.shape[1])
        for ids in trace[:, layer].reshape(-1, k):
            r = rank[ids]
            joint[int((r < n_full).sum()), int(((r >= n_full) & (r < n_full + n_sm)).sum())] += 1
    return joint / joint.sum()


def measure_seed(config: Config, seed: int, work: Path) -> dict[str, float]:
    """Every metric of one seed (the model, codec, planner, pipeline and simulator)."""
    import torch

    from .baselines import LFUCache, LRUCache, NoCache, full_slots
    from .cache import HierarchicalCache
    from .data import shakespeare_tokens
    from .pipeline import OffloadStore, RawEngine, Storage, ZipMoEEngine
    from .planning import CostModel, cps_weights, plan_cache, rank_popularity, scale_to_k, weight_to_prob
    from .scheduler import Device
    from .simulator import replay

    torch.set_num_threads(1)
    data, _ = shakespeare_tokens(config.n_chars + 50_000)
    model = _trained_model(config, seed, data)
    out: dict[str, float] = {}

    # the trained experts: entropy, size, round trip
    experts = {(l, e): model.expert(l, e) for l in range(config.layers) for e in range(config.num_experts)}
    codec = _codec_metrics([t for pair in experts.values() for t in pair], config)
    out.update(codec)
    out["exponent_entropy_margin"] = min(codec["exponent_entropy"] - 2.5, 3.5 - codec["exponent_entropy"])
    out["size_ratio_minus_raw_zstd"] = codec["size_ratio"] - codec["raw_zstd_ratio"]

    # traces: profiling (plans the cache) and serving (held out), both from real decoding runs
    profile = _sequences(data, config, seed, "profile", config.profile_batch, config.context)
    serve = _sequences(data, config, seed, "serve", config.serve_batch, config.serve_steps)
    _, profile_trace = _decode(model, profile, _resident(model))
    start = time.thread_time()  # CPU time: the simulator's compute costs, free of the machine's load
    reference, serve_trace = _decode(model, serve, _resident(model))
    resident_time = time.thread_time() - start

    # offload, measure decompression, plan the cache
    store = OffloadStore(
        {k: tuple(v) for k, v in experts.items()}, work / f"experts-{seed}.bin", config.num_chunks, config.codec
    )
    rate, chunk_size = _decompress_rate(store)
    expert_elements = config.d * config.d_ff * 2
    tensors_per_expert = 2
    e_ratio = sum(c.length for es in store.index.values() for t in es for c in t.e_chunks) / (
        len(experts) * expert_elements
    )
    cost = CostModel(
        sm_io=config.latency + expert_elements / tensors_per_expert / config.bandwidth,
        decompress=chunk_size / rate,
        compression_ratio=e_ratio,
        num_chunks=config.num_chunks,
        tensors_per_expert=tensors_per_expert,
        workers=config.workers,
    )
    flat_profile = profile_trace.transpose(0, 2, 1, 3).reshape(-1, config.layers, config.k)
    freq = rank_popularity(flat_profile, config.num_experts)
    counts = np.stack(
        [np.bincount(flat_profile[:, l].ravel(), minlength=config.num_experts) for l in range(config.layers)]
    )

    def zipmoe_cache(fraction: float):
        budget = fraction * config.num_experts * 2 * expert_elements
        plan = plan_cache(freq, config.k, budget, expert_elements, cost)
        return plan, HierarchicalCache(config.layers, config.num_experts, plan.n_full, plan.n_sm)

    def baseline_cache(name: str, fraction: float):
        capacity = full_slots(fraction * config.num_experts * 2 * expert_elements, expert_elements)
        return {"nocache": NoCache, "lru": LRUCache, "lfu": LFUCache}[name](
            *(() if name == "nocache" else (config.layers, capacity))
        )

    plan, _ = zipmoe_cache(config.budget_fraction)
    out.update(n_full=plan.n_full, n_sm=plan.n_sm, ratio_full=plan.ratio_full)
    p = weight_to_prob(cps_weights(scale_to_k(freq, config.k), config.k))
    predicted = _hit_distribution(p, plan.n_full, plan.n_sm, config.k)
    observed = _observed_hits(serve_trace, counts, plan.n_full, plan.n_sm, config.k)
    out["cps_tv_distance"] = 0.5 * float(np.abs(predicted - observed).sum())

    # the real pipeline: ZipMoE and the baselines on the same emulated storage, same memory budget
    storage = Storage(store.path, config.bandwidth, config.latency)
    device = Device(config.bandwidth, rate, config.workers, config.latency)
    exact = codec["roundtrip_exact"] == 1.0
    pipeline: dict[str, tuple[float, float]] = {}
    names = ["zipmoe", *BASELINES]
    rotation = seed % len(names)
    for name in names[rotation:] + names[:rotation]:  # rotate the run order across seeds
        engine = (
            ZipMoEEngine(store, storage, config.workers, zipmoe_cache(config.budget_fraction)[1], device)
            if name == "zipmoe"
            else RawEngine(store, storage, baseline_cache(name, config.budget_fraction))
        )
        start = time.perf_counter()
        logits, trace = _decode(model, serve, engine.get_experts)
        wall = time.perf_counter() - start
        engine.close()
        exact &= all(torch.equal(a, b) for a, b in zip(logits, reference, strict=True))
        exact &= bool(np.array_equal(trace, serve_trace))
        pipeline[name] = (float(np.mean(engine.log.latencies)), serve.size / wall)
    storage.close()
    out["bit_exact"] = float(exact)
    out["resident_tokens_per_s_cpu"] = serve.size / resident_time
    for name, (latency, tps) in pipeline.items():
        out[f"pipeline_{name}_latency_ms"], out[f"pipeline_{name}_tokens_per_s"] = 1e3 * latency, tps
    best_latency = min(pipeline[b][0] for b in BASELINES)
    best_tps = max(pipeline[b][1] for b in BASELINES)
    out["pipeline_latency_reduction"] = 1 - pipeline["zipmoe"][0] / best_latency
    out["pipeline_throughput_ratio"] = pipeline["zipmoe"][1] / best_tps

    # the simulator: the serving trace on a device with more decompression workers, at several budgets
    sim_device = Device(config.bandwidth, rate, config.sim_workers, config.latency)
    compute = _expert_compute(model)
    experts_per_layer = np.mean(
        [np.unique(serve_trace[s, l]).size for s in range(config.serve_steps) for l in range(config.layers)]
    )
    dense = max(resident_time / (config.serve_steps * config.layers) - experts_per_layer * compute, 0.0)
    for fraction in sorted({*config.sim_budgets, config.budget_fraction}):
        results = {"zipmoe": replay(serve_trace, zipmoe_cache(fraction)[1], store.task, sim_device, compute, dense)}
        results["zipmoe_fifo"] = replay(
            serve_trace, zipmoe_cache(fraction)[1], store.task, sim_device, compute, dense, schedule="fifo"
        )
        for name in BASELINES:
            results[name] = replay(
                serve_trace, baseline_cache(name, fraction), store.task, sim_device, compute, dense, compressed=False
            )
        for name, r in results.items():
            out[f"sim_{fraction:g}_{name}_latency_ms"] = 1e3 * r.load_latency
            out[f"sim_{fraction:g}_{name}_tokens_per_s"] = r.tokens_per_second
        if fraction == config.budget_fraction:
            out["sim_latency_reduction"] = 1 - results["zipmoe"].load_latency / min(
                results[b].load_latency for b in BASELINES
            )
            out["sim_throughput_ratio"] = results["zipmoe"].tokens_per_second / max(
                results[b].tokens_per_second for b in BASELINES
            )
            out["sim_affinity_vs_fifo_reduction"] = 1 - results["zipmoe"].load_latency / max(
                results["zipmoe_fifo"].load_latency, 1e-12
            )
    out["decompress_mb_per_s"] = rate / 1e6
    return out


def real_weights_metrics(config: Config) -> dict[str, float]:
    """all-MiniLM-L6-v2 in bf16: entropies, ZipMoE's size ratio and raw zstd's; NaN without the extra."""
    from .data import minilm_bf16, real_weights_available

    if not (config.real_weights and real_weights_available()):
        return {"real_weights_margin": float("nan")}
    metrics = _codec_metrics(list(minilm_bf16().values()), config)
    out = {f"real_{k}": v for k, v in metrics.items()}
    out["real_weights_margin"] = max(metrics["size_ratio"] - 0.8, metrics["size_ratio"] - metrics["raw_zstd_ratio"])
    return out
