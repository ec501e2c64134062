"""The baselines: the classic metrics and the whole-image judge's evidence against scikit-image's own."""

import numpy as np
import pytest
from icml26_dlebench.baselines import classic_metrics, whole_image_evidence
from icml26_dlebench.data import SMALL_AREA, make_item
from icml26_dlebench.editors import Edit, apply_edit
from icml26_dlebench.imaging import zoom
from skimage.metrics import peak_signal_noise_ratio, structural_similarity


@pytest.fixture(scope="module")
def pair():
    item = make_item("replace", 128, SMALL_AREA, np.random.default_rng(2))
    edited = apply_edit(item, Edit("correct", 0.8, 0.3, 0.7, 0.02), np.random.default_rng(0))
    return item, edited


def test_whole_image_ssim_and_psnr_are_scikit_images(pair):
    item, edited = pair
    metrics = classic_metrics(item, edited)
    expected = structural_similarity(item.source, edited, win_size=7, channel_axis=-1, data_range=1.0)
    assert metrics["ssim_whole"] == pytest.approx(expected, abs=1e-12)
    assert metrics["psnr_whole"] == pytest.approx(peak_signal_noise_ratio(item.source, edited, data_range=1.0))


def test_background_metrics_read_only_the_pixels_outside_the_region(pair):
    item, edited = pair
    background = ~item.region
    mse = ((edited - item.source) ** 2)[background].mean()
    metrics = classic_metrics(item, edited)
    assert metrics["psnr_background"] == pytest.approx(10 * np.log10(1 / mse), rel=1e-12)
    assert metrics["neg_l1_background"] == pytest.approx(-np.abs(edited - item.source)[background].mean())


def test_whole_image_judge_reads_scikit_images_ssim_of_its_view(pair):
    item, edited = pair
    _, q_vc = whole_image_evidence(item.source, edited, 32, 0.0055)
    a, b = zoom(item.source, None, 32), zoom(edited, None, 32)
    assert q_vc == pytest.approx(structural_similarity(a, b, win_size=7, channel_axis=-1, data_range=1.0), abs=1e-12)
