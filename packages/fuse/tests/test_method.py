"""FUSE's generator, its loss (RSM + CBG) and the bi-level training loop."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_fuse import (
    FuseSettings,
    PerturbationGenerator,
    SmallCNN,
    cross_band_guidance,
    cross_band_split,
    generator_loss,
    make_unlearnable,
    protect,
    train_generator,
)
from icml26_fuse.spectral import apply_spectral_mask, band_stop_masks, sample_bands


def images(n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 16, 16, generator=g), torch.randint(0, 10, (n,), generator=g)


@given(st.floats(1e-3, 1.0), st.integers(0, 50))
def test_generator_respects_the_budget(eps, seed):
    torch.manual_seed(seed)
    x, _ = images(4, seed)
    with torch.no_grad():
        delta = PerturbationGenerator(eps)(x * 10)  # large inputs saturate tanh: still within eps
    assert delta.shape == x.shape and float(delta.abs().max()) <= eps + 1e-7


def test_cross_band_guidance_is_a_symmetric_divergence():
    torch.manual_seed(0)
    model, (x, _) = SmallCNN().eval(), images()
    assert float(cross_band_guidance(model, x, torch.zeros_like(x), 0.5).detach()) == pytest.approx(0.0, abs=1e-6)
    delta = 0.1 * torch.randn_like(x)
    assert float(cross_band_guidance(model, x, delta, 0.5).detach()) > 0
    low, high = cross_band_split(delta, 0.5)  # by hand: sum_k (p_L - p_H)(log p_L - log p_H) per image
    p_low, p_high = (torch.softmax(model(protect(x, d)), dim=1) for d in (low, high))
    by_hand = ((p_low - p_high) * (p_low.log() - p_high.log())).sum(1).mean()
    torch.testing.assert_close(cross_band_guidance(model, x, delta, 0.5), by_hand)


def test_plain_generator_loss_is_the_cross_entropy():
    torch.manual_seed(0)
    model, generator, (x, y) = SmallCNN().eval(), PerturbationGenerator(8 / 255), images()
    plain = FuseSettings(rsm=False, cbg_weight=0.0)
    expected = torch.nn.functional.cross_entropy(model(protect(x, generator(x))), y)
    torch.testing.assert_close(generator_loss(model, generator, x, y, plain, torch.Generator()), expected)
    with_cbg = FuseSettings(rsm=False, cbg_weight=2.0)
    extra = 2.0 * cross_band_guidance(model, x, generator(x), with_cbg.cbg_cutoff)
    torch.testing.assert_close(generator_loss(model, generator, x, y, with_cbg, torch.Generator()), expected + extra)


def test_rsm_loss_is_the_cross_entropy_on_the_band_stopped_perturbation():
    torch.manual_seed(0)
    model, generator, (x, y) = SmallCNN().eval(), PerturbationGenerator(0.5), images()
    rsm = FuseSettings(band_width=(0.3, 0.6), cbg_weight=0.0)
    start, width = sample_bands(len(y), rsm.band_width, torch.Generator().manual_seed(3))
    masked = apply_spectral_mask(generator(x), band_stop_masks(start, width, 16, 16))
    expected = torch.nn.functional.cross_entropy(model(protect(x, masked)), y)
    loss = generator_loss(model, generator, x, y, rsm, torch.Generator().manual_seed(3))
    torch.testing.assert_close(loss, expected)
    assert float((masked - generator(x)).abs().max()) > 1e-3  # a band was removed


def test_training_makes_bounded_unlearnable_images():
    x, y = images(32)
    settings = FuseSettings(eps=8 / 255, rounds=2, surrogate_steps=1, generator_steps=1, batch_size=8)
    generator = train_generator(x, y, settings, seed=0)
    released, delta = make_unlearnable(generator, x)
    assert released.min() >= 0 and released.max() <= 1
    assert float((released - x).abs().max()) <= 8 / 255 + 1e-6 and float(delta.abs().max()) <= 8 / 255 + 1e-6
    again = make_unlearnable(train_generator(x, y, settings, seed=0), x)[0]
    torch.testing.assert_close(released, again)  # seeded: reproducible


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generator_steps_lower_the_error_of_a_fixed_classifier(seed):
    """The error-minimising objective works: 60 generator steps against a fixed linear classifier bring
    ``CE(f(x + G(x)), y)`` well below the clean ``CE(f(x), y)``.

    Issue 16.0: the former test compared two freshly trained CNNs (0.1815 vs 0.1791, inside cross-machine
    noise). Here the classifier is fixed, the labels are its own predictions (a shortcut the generator can
    amplify), and the margin is large: measured ratios 0.65, 0.80, 0.90 for seeds 0-2, required < 0.95.
    """
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    x = torch.rand(32, 1, 16, 16, generator=g)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(256, 10)).requires_grad_(False)
    y = model(x).argmax(1)
    generator, plain = PerturbationGenerator(0.25), FuseSettings(rsm=False, cbg_weight=0.0)
    optimiser = torch.optim.Adam(generator.parameters(), lr=1e-2)
    for _ in range(60):
        loss = generator_loss(model, generator, x, y, plain, None)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    clean = float(torch.nn.functional.cross_entropy(model(x), y))
    protected = float(torch.nn.functional.cross_entropy(model(make_unlearnable(generator, x)[0]), y))
    assert protected < 0.95 * clean


@pytest.mark.parametrize("eps", [0.0, -0.1, 1.5])
def test_generator_rejects_bad_budgets(eps):
    with pytest.raises(ValueError, match="eps="):
        PerturbationGenerator(eps)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"eps": 0.0}, "eps"),
        ({"band_width": (0.9, 0.1)}, "band_width"),
        ({"band_width": (0.1, 3.0)}, "band_width"),
        ({"cbg_weight": -1.0}, "cbg_weight"),
        ({"cbg_cutoff": 2.0}, "cbg_cutoff"),
        ({"rounds": 0}, "rounds"),
        ({"lr": 0.0}, "lr"),
        ({"rsm": 1}, "rsm"),
    ],
)
def test_settings_reject_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        FuseSettings(**kwargs)


def test_training_rejects_bad_images_and_labels():
    x, y = images(8)
    with pytest.raises(ValueError, match="x="):
        train_generator(x * 2, y, FuseSettings(), 0)  # outside [0, 1]
    with pytest.raises(ValueError, match="x="):
        train_generator(x[0], y, FuseSettings(), 0)  # (C, H, W): not a batch
    with pytest.raises(ValueError, match="y="):
        train_generator(x, y[:4], FuseSettings(), 0)
    with pytest.raises(ValueError, match="y="):
        train_generator(x, y + 10, FuseSettings(), 0)
    with pytest.raises(ValueError, match="settings="):
        train_generator(x, y, {"eps": 0.1}, 0)
