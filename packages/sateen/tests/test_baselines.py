import pytest
import torch
from icml26_sateen import EATA, SAR, DeYO, NoAdapt, SmallCNN, Tent, collect_params, entropy, fisher_information


def _model(seed=0):
    torch.manual_seed(seed)
    return SmallCNN(1, 10, width=8)


def _params(model):
    return [p.detach().clone() for p in collect_params(model)]


def _changed(before, model):
    return any(not torch.equal(a, b) for a, b in zip(before, collect_params(model), strict=True))


def test_no_adapt_changes_nothing():
    model = _model()
    before = _params(model)
    NoAdapt(model)(torch.rand(8, 1, 8, 8))
    assert not _changed(before, model)


def test_tent_lowers_the_entropy_of_a_repeated_batch():
    model = _model()
    x = torch.rand(32, 1, 8, 8)
    tent = Tent(model, 10, lr=0.05)
    first = entropy(tent(x)).mean()
    for _ in range(20):
        last = entropy(tent(x)).mean()
    assert last < first


def test_fisher_is_nonnegative_and_eata_with_huge_alpha_stays_at_the_source():
    model = _model()
    params = collect_params(model)
    fisher = fisher_information(model, [torch.rand(16, 1, 8, 8)], params)
    assert all((f >= 0).all() for f in fisher) and any((f > 0).any() for f in fisher)
    free, anchored = _model(), _model()
    x = torch.rand(32, 1, 8, 8)
    clean = [torch.rand(32, 1, 8, 8)]
    lr = 0.05
    strong = 0.5 / (lr * max(float(f.max()) for f in fisher_information(anchored, clean, collect_params(anchored))))
    a = EATA(free, 10, lr, clean, fisher_alpha=0.0, e_margin=10.0, d_margin=2.0)
    b = EATA(anchored, 10, lr, clean, fisher_alpha=strong, e_margin=10.0, d_margin=2.0)  # stable: lr 2 alpha F < 2
    for _ in range(5):
        a(x), b(x)
    drift = [sum((p - q).abs().sum() for p, q in zip(m.params, m.anchor, strict=True)) for m in (a, b)]
    assert drift[1] < drift[0]


def test_eata_redundancy_filter_drops_everything_when_d_margin_is_tiny():
    model = _model()
    eata = EATA(model, 10, 0.05, [torch.rand(8, 1, 8, 8)], e_margin=10.0, d_margin=1e-12)
    x = torch.rand(16, 1, 8, 8)
    eata(x)  # first batch: no running prediction yet, all reliable samples are used
    before = _params(model)
    eata(x)  # now every sample is redundant (cosine similarity ~ 1 > d_margin)
    assert not _changed(before, model)


def test_sar_recovers_the_source_model_when_entropy_collapses():
    model = _model()
    source = _params(model)
    sar = SAR(model, 10, lr=0.5, margin=10.0, reset_constant=100.0)  # every moving entropy is below 100
    sar(torch.rand(16, 1, 8, 8))
    assert sar.resets == 1 and not _changed(source, model)


def test_sar_updates_without_reset():
    model = _model()
    before = _params(model)
    sar = SAR(model, 10, lr=0.5, margin=10.0, reset_constant=1e-9)
    sar(torch.rand(16, 1, 8, 8))
    assert sar.resets == 0 and _changed(before, model)


def test_deyo_with_unreachable_plpd_threshold_does_not_update():
    model = _model()
    before = _params(model)
    deyo = DeYO(model, 10, lr=0.5, margin=10.0, plpd_threshold=1.0, generator=torch.Generator().manual_seed(0))
    deyo(torch.rand(16, 1, 8, 8))
    assert not _changed(before, model) and deyo.reliable_fraction == 0.0


@pytest.mark.parametrize("cls", [Tent, SAR, DeYO])
def test_adapters_return_the_logits_before_their_update(cls):
    model = _model()
    x = torch.rand(16, 1, 8, 8)
    with torch.no_grad():
        expected = model.train()(x)
    assert torch.allclose(cls(model, 10, lr=0.5)(x), expected, atol=1e-6)


def test_rejects_non_positive_lr():
    with pytest.raises(ValueError, match="lr="):
        Tent(_model(), 10, lr=0.0)


def test_rejects_eata_without_clean_batches():
    with pytest.raises(ValueError, match="batches="):
        EATA(_model(), 10, 0.01, [])


def test_rejects_batch_that_does_not_match_the_model():
    with pytest.raises(ValueError, match="x="):
        Tent(_model(), 10, lr=0.01)(torch.rand(4, 2, 8, 8))


@pytest.mark.parametrize("name", ["no_adapt", "tent", "eata", "sar", "deyo"])
def test_reset_returns_every_baseline_to_the_source_state(name):
    """Issue 16.12: after adapting and reset() a baseline behaves exactly as a fresh one on the same stream."""
    stream = [torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(i)) for i in range(3)]

    def make():
        model = _model()
        return {
            "no_adapt": lambda: NoAdapt(model),
            "tent": lambda: Tent(model, 10, lr=0.5),
            "eata": lambda: EATA(model, 10, lr=0.5, clean_batches=[stream[0]], e_margin=10.0, d_margin=2.0),
            "sar": lambda: SAR(model, 10, lr=0.5, margin=10.0, reset_constant=1e-9),
            "deyo": lambda: DeYO(model, 10, lr=0.5, margin=10.0, plpd_threshold=-1.0),
        }[name]()

    expected = [a(x) for a in [make()] for x in stream]
    adapter = make()
    for x in stream[::-1]:
        adapter(x)
    adapter.reset()
    assert adapter.reliable_fraction == 0.0
    for x, logits in zip(stream, expected, strict=True):
        torch.testing.assert_close(adapter(x), logits, rtol=0, atol=0)
