"""The pipeline gives the same bits on torch's default (scalar) CPU kernels as on the vectorised ones.

torch's fused layer norm, GELU, softmax, attention and AdamW kernels round differently on the two paths (by
~1e-16 in float64), and 400 pre-training steps grow that to 2e-6 and fine-tuning to other test predictions
(issue 27: verdicts flipped on another CPU). The VLM is drawn by numpy and built from ops that round the same on
both paths (``portable``), so nothing is left to grow: the comparison is exact. The 0.1.2 code already differed
by 4e-16 in its drawn parameters and by 4e-12 after 5 pre-training steps of this test.
"""

import torch
from icml26_atr import ATRSettings, answer_log_likelihoods, default_vocabulary, fine_tune, long_tailed_task, shot_bins
from icml26_atr.data import pretraining_images
from icml26_atr.experiment import CONFIGS, make_model
from icml26_atr.training import pretrain
from icml26_shared.testing import on_default_kernels


def trained() -> dict:
    """The smoke VLM as drawn, after 5 pre-training steps and after one epoch of fine-tuning with ATR (two views,
    running threshold), and its test scores (float64, one thread)."""
    torch.set_num_threads(1)
    config, vocab = CONFIGS["smoke"], default_vocabulary()
    model = make_model(config, len(vocab), seed=0)
    out = {f"drawn.{name}": value.clone() for name, value in model.state_dict().items()}
    pretrain(model, pretraining_images("digits", 64, 0), vocab, 5, 16, 1e-2, 0)
    out |= {f"pretrained.{name}": value.clone() for name, value in model.state_dict().items()}
    task = long_tailed_task("digits", config.n_max, config.imbalance_ratio, config.test_per_class, 0)
    bins = shot_bins(task.counts, config.many_shot, config.few_shot)
    fine_tune(model, task, vocab, "atr", ATRSettings(), 1, config.batch_size, config.lr, 0, bins)
    out |= {f"atr.{name}": value for name, value in model.state_dict().items()}
    out["scores"] = answer_log_likelihoods(model, torch.as_tensor(task.test_images), vocab, task.answers)
    return out


def test_drawing_training_and_scoring_are_the_same_bits_on_the_default_kernel_path(tmp_path):
    other = on_default_kernels(__file__, "trained()", tmp_path)
    ours = trained()
    assert ours.keys() == other.keys()
    differ = {
        name: (ours[name] - other[name]).abs().max().item() for name in ours if not torch.equal(ours[name], other[name])
    }
    assert not differ, differ
