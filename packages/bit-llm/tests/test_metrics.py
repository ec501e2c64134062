"""Captioning metrics through pycocoevalcap, and its tokenisation convention."""

import shutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from icml26_bit_llm.data import COLOURS, RELATIONS, SHAPES, captions, sample_scenes
from icml26_bit_llm.metrics import caption_scores, cider_d, coco_tokenize, is_ptb_plain
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider

REFS = [captions(s) for s in sample_scenes(20, np.random.default_rng(0))]
JAVA = shutil.which("java") is not None


def test_exact_captions_score_bleu_one_and_beat_a_constant_caption():
    perfect = caption_scores(REFS, [r[0] for r in REFS])
    constant = caption_scores(REFS, ["a red circle left of a red circle"] * len(REFS))
    assert perfect["bleu4"] == pytest.approx(1.0)
    assert perfect["cider_d"] > 2 * constant["cider_d"]


def test_scores_are_pycocoevalcaps():
    cands = [r[1] for r in REFS[:10]] + ["a red circle"] * 10
    gts, res = {i: r for i, r in enumerate(REFS)}, {i: [c] for i, c in enumerate(cands)}
    cider, per_sample = Cider().compute_score(gts, res)
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    scores = caption_scores(REFS, cands)
    assert scores["cider_d"] == pytest.approx(cider) and scores["bleu4"] == pytest.approx(bleu[3])
    np.testing.assert_allclose(cider_d(REFS, cands), per_sample)


@pytest.mark.skipif(not JAVA, reason="pycocoevalcap's PTBTokenizer needs a Java runtime")
def test_plain_captions_are_fixed_points_of_the_ptb_tokenizer():
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    words = [w for phrase in (*COLOURS, *SHAPES, *RELATIONS) for w in phrase.split()]
    texts = [" ".join(words), *(r for refs in REFS for r in refs), "cannot stop 42 x"]
    out = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(texts)})
    for i, t in enumerate(texts):
        assert (out[i][0] == t) == is_ptb_plain(t), t
    assert coco_tokenize(["A Red circle, left of a blue square."]) == ["a red circle left of a blue square"]


@given(st.lists(st.sampled_from(["a", "red", "circle", "7", "Red", "x.", "can't", "cannot"]), max_size=6))
def test_plain_means_lowercase_alphanumeric_words(words):
    text = " ".join(words)
    expected = all(w.isalnum() and w == w.lower() and w != "cannot" for w in words)
    assert is_ptb_plain(text) == expected


def test_bad_metric_inputs():
    with pytest.raises(ValueError, match="references="):
        caption_scores([], [])
    with pytest.raises(ValueError, match="references="):
        caption_scores([[]], ["a red circle"])
    with pytest.raises(ValueError, match="candidates="):
        caption_scores(REFS, ["a"])
    with pytest.raises(ValueError, match="captions="):
        coco_tokenize("a red circle")
