"""The generated stand-in: grammar, cortex, subjects with their own voxels, and bad inputs."""

import numpy as np
import pytest
from icml26_bit_llm.data import (
    N_ATTRIBUTES,
    Cortex,
    Subject,
    attribute_onehot,
    captions,
    check_fmri,
    make_dataset,
    pretraining_texts,
    sample_scenes,
    zipf_probabilities,
)


def test_captions_and_converse():
    assert captions(np.array([0, 1, 0, 1, 2])) == [
        "a red square left of a blue triangle",
        "a blue triangle right of a red square",
    ]
    assert attribute_onehot(np.array([[0, 1, 0, 1, 2]])).sum() == 5 and N_ATTRIBUTES == 28


def test_subjects_differ_in_voxel_count_and_order():
    data = make_dataset(0, n_subjects=4, n_train=20, n_test=10, voxels=(50, 90))
    subjects = [*data.train, data.test]
    counts = [len(s.coords) for s in subjects]
    assert all(50 <= c <= 90 for c in counts) and len(set(counts)) > 1
    assert all(s.fmri.shape == (len(s.scenes), len(s.coords)) for s in subjects)
    assert not np.allclose(subjects[0].coords[:50], subjects[1].coords[:50])
    assert data.target(data.test.scenes).shape == (10, 32)
    np.testing.assert_allclose(np.linalg.norm(data.target(data.test.scenes), axis=1), 1, rtol=1e-5)


def test_cortex_response_is_the_sum_of_attribute_bumps():
    cortex = Cortex.generate(0)
    coords = cortex.centres[:1]  # a voxel at the centre of attribute 0's bump
    on, off = np.array([[0, 0, 0, 0, 0]]), np.array([[1, 0, 0, 0, 0]])
    assert cortex.response(coords, on)[0, 0] > cortex.response(coords, off)[0, 0] + 0.5 * cortex.amplitudes[0]


def test_zipf_skew_makes_a_mode():
    p = zipf_probabilities(6, 1.0)
    assert p.argmax() == 0 and p.sum() == pytest.approx(1.0)
    scenes = sample_scenes(2000, np.random.default_rng(0))
    assert (scenes[:, 0] == 0).mean() > 0.3
    texts = pretraining_texts(50, 0, "describe the scene")
    assert len(texts) == 100 and all("describe the scene a " in t for t in texts)


@pytest.mark.parametrize("coords", [np.zeros((0, 3)), np.zeros((5, 2)), np.zeros(5)])
def test_subject_refuses_bad_coords(coords):
    with pytest.raises(ValueError, match="coords="):
        Subject("S1", coords, np.zeros((2, max(len(coords), 1))), np.zeros((2, 5), dtype=int))


@pytest.mark.parametrize("fmri", [np.zeros(4), np.zeros((2, 4, 1)), np.full((2, 4), np.nan), np.zeros((2, 3))])
def test_fmri_of_wrong_rank_length_or_nan_is_refused(fmri):
    with pytest.raises(ValueError, match="fmri="):
        check_fmri(fmri, 4)


def test_bad_dataset_arguments():
    with pytest.raises(ValueError, match="voxels="):
        make_dataset(0, voxels=(10, 5))
    with pytest.raises(ValueError, match="n_subjects="):
        make_dataset(0, n_subjects=1)
    with pytest.raises(ValueError, match="exponent="):
        zipf_probabilities(6, -1.0)
