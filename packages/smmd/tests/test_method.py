"""The SMMD loss: brute-force equivalence of eq. (4)-(6), limits, masking, gradients, bad inputs."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from icml26_smmd import (
    NumberTokenizer,
    NumberTokenLoss,
    NumericTargetObjective,
    NumericVocab,
    SMMDLoss,
    laplacian,
    smmd_terms,
)
from icml26_smmd.kernels import value_distance_kernel

TOK = NumberTokenizer(9)
VOCAB = NumericVocab.from_tokenizer(TOK, 9)
V = TOK.vocab_size


def brute_force(p: np.ndarray, t: int, K: np.ndarray) -> tuple[float, float]:
    r = p.copy()
    r[t] -= 1.0
    mmd = float(r @ K @ r)
    dirichlet = 0.5 * sum(K[i, j] * (r[i] - r[j]) ** 2 for i in range(len(r)) for j in range(len(r)))
    return mmd, dirichlet


@given(st.lists(st.floats(-5, 5), min_size=10, max_size=10), st.integers(0, 9), st.floats(0.3, 5))
def test_terms_equal_brute_force_quadratic_forms(logits, t, sigma):
    K = value_distance_kernel(range(10), (sigma,))
    p = torch.softmax(torch.tensor(logits, dtype=torch.float64), 0)
    mmd, smooth = smmd_terms(p[None], torch.tensor([t]), K)
    bf_mmd, bf_dirichlet = brute_force(p.numpy(), t, K.numpy())
    r = p.clone()
    r[t] -= 1
    assert float(mmd) == pytest.approx(bf_mmd, abs=1e-10)
    assert float(smooth) == pytest.approx(bf_dirichlet, abs=1e-10)
    assert float(smooth) == pytest.approx(float(r @ laplacian(K) @ r), abs=1e-10)
    assert float(mmd) >= -1e-12 and float(smooth) >= -1e-12


def test_mmd_equals_classic_mmd_between_the_two_distributions():
    # MMD^2(P, Q) = E k(x, x') + E k(y, y') - 2 E k(x, y), with x ~ p over values, y = the target value
    K = value_distance_kernel(range(10)).numpy()
    p = np.random.default_rng(0).dirichlet(np.ones(10))
    t = 4
    classic = p @ K @ p + K[t, t] - 2 * (K[t] @ p)
    mmd, _ = smmd_terms(torch.tensor(p)[None], torch.tensor([t]), torch.tensor(K))
    assert float(mmd) == pytest.approx(classic, abs=1e-12)


def test_one_hot_prediction_loss_grows_with_value_distance():
    loss = SMMDLoss(VOCAB, "mmd")
    target = int(VOCAB.token_ids[0])
    values = []
    for j in range(10):
        logits = torch.full((1, 1, V), -50.0)
        logits[0, 0, VOCAB.token_ids[j]] = 50.0
        values.append(float(loss(logits, torch.tensor([[target]]))))
    assert values[0] == pytest.approx(0.0, abs=1e-6)
    assert all(b > a for a, b in itertools.pairwise(values))
    assert values[-1] == pytest.approx(2 - 2 * np.exp(-81 / 8), abs=1e-5)  # 2 - 2 K(0, 9)


def test_module_matches_terms_with_auto_alpha_and_masks_non_numeric_targets():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, V, dtype=torch.float64)
    targets = torch.tensor([[TOK.token_to_id["3"], TOK.token_to_id[":"], -100], [TOK.token_to_id["9"], 0, 0]])
    loss = SMMDLoss(VOCAB).double()
    K = value_distance_kernel(range(10))
    alpha = 1 / (2 * K.sum(1).mean())
    assert loss.alpha == pytest.approx(float(alpha))
    p = torch.softmax(logits[[0, 1], [0, 0]][:, VOCAB.token_ids], -1)
    mmd, smooth = smmd_terms(p, torch.tensor([3, 9]), K)
    assert float(loss(logits, targets)) == pytest.approx(float((mmd + alpha * smooth).mean()), rel=1e-5)


def test_modes_split_the_objective():
    torch.manual_seed(1)
    logits, targets = torch.randn(4, 2, V), VOCAB.token_ids[torch.randint(0, 10, (4, 2))]
    full = SMMDLoss(VOCAB, "smmd")(logits, targets)
    parts = SMMDLoss(VOCAB, "mmd")(logits, targets) + SMMDLoss(VOCAB, "smooth")(logits, targets)
    assert float(full) == pytest.approx(float(parts), rel=1e-5)


def test_no_numeric_target_gives_zero_and_gradient_only_reaches_numeric_logits():
    logits = torch.randn(2, 2, V, requires_grad=True)
    targets = torch.tensor([[TOK.token_to_id["+"], -100], [TOK.token_to_id["5"], TOK.eos_id]])
    assert float(SMMDLoss(VOCAB)(logits, torch.full((2, 2), TOK.eos_id))) == 0.0
    SMMDLoss(VOCAB)(logits, targets).backward()
    grad = logits.grad.abs().sum(-1)
    assert grad[1, 0] > 0 and grad[0, 0] == 0 and grad[0, 1] == 0 and grad[1, 1] == 0
    non_numeric = torch.ones(V, dtype=torch.bool)
    non_numeric[VOCAB.token_ids] = False
    assert logits.grad[1, 0, non_numeric].abs().max() == 0


def test_shuffled_kernel_changes_the_loss_and_objective_adds_ce():
    torch.manual_seed(2)
    logits, targets = torch.randn(8, 1, V), VOCAB.token_ids[torch.randint(0, 10, (8, 1))]
    value = SMMDLoss(VOCAB)(logits, targets)
    assert float(SMMDLoss(VOCAB, kernel_mode="shuffled_mapping")(logits, targets)) != pytest.approx(float(value))
    ce = torch.nn.functional.cross_entropy(logits[:, 0], targets[:, 0])
    total = NumericTargetObjective(SMMDLoss(VOCAB), lam=0.5)(logits, targets)
    assert float(total) == pytest.approx(float(ce + 0.5 * value), rel=1e-6)
    assert float(NumericTargetObjective(None)(logits, targets)) == pytest.approx(float(ce))


def test_random_kernel_mode_builds_a_psd_kernel():
    K = SMMDLoss(VOCAB, kernel_mode="random_kernel").K
    assert torch.linalg.eigvalsh(K.double()).min() > -1e-6


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"mode": "kl"}, "mode"),
        ({"kernel_mode": "cosine"}, "kernel_mode"),
        ({"kernel_type": "cauchy"}, "kernel_type"),
        ({"sigmas": (0.0,)}, "sigmas"),
        ({"sigmas": ()}, "sigmas"),
        ({"alpha": -1.0}, "alpha"),
        ({"alpha": "half"}, "alpha"),
    ],
)
def test_constructor_rejects_bad_values(kwargs, name):
    with pytest.raises(ValueError, match=f"{name}="):
        SMMDLoss(VOCAB, **kwargs)


def test_rejects_a_missing_vocabulary():
    with pytest.raises(ValueError, match="vocab="):
        SMMDLoss(None)


def test_rejects_logits_that_are_not_3d():
    with pytest.raises(ValueError, match="logits="):
        SMMDLoss(VOCAB)(torch.randn(4, V), torch.zeros(4, 1, dtype=torch.long))


def test_rejects_targets_that_are_not_2d_integers():
    with pytest.raises(ValueError, match="targets="):
        SMMDLoss(VOCAB)(torch.randn(4, 1, V), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="targets="):
        SMMDLoss(VOCAB)(torch.randn(4, 1, V), torch.zeros(4, 1))


def test_rejects_targets_of_another_shape():
    with pytest.raises(ValueError, match="targets="):
        SMMDLoss(VOCAB)(torch.randn(4, 2, V), torch.zeros(4, 3, dtype=torch.long))


def test_rejects_logits_of_another_vocabulary():
    with pytest.raises(ValueError, match="logits="):
        SMMDLoss(VOCAB)(torch.randn(4, 1, V + 1), torch.zeros(4, 1, dtype=torch.long))


def test_objective_rejects_bad_weight_and_aux():
    with pytest.raises(ValueError, match="lam="):
        NumericTargetObjective(SMMDLoss(VOCAB), lam=0.0)
    with pytest.raises(ValueError, match="aux="):
        NumericTargetObjective("smmd")


def test_tokens_sharing_a_value_act_as_one_token_with_their_pooled_probability():
    # issue 16.7: "3" and "Ġ3" carry one value; the kernel is over values, so the loss sees their sum
    shared = NumericVocab.from_token_strings(["0", "1", "\u01201", "2", "x"])  # ids 1 and 2 both read 1
    single = NumericVocab.from_token_strings(["0", "1", "2", "x"])
    logits = torch.randn(3, 2, 5, generator=torch.Generator().manual_seed(0))
    pooled = torch.cat(
        [logits[..., :1], torch.logsumexp(logits[..., 1:3], -1, keepdim=True), logits[..., 3:]], dim=-1
    )  # (3, 2, 4): tokens 1 and 2 merged into one token with logit log(e^l1 + e^l2)
    targets = torch.tensor([[1, 3], [2, 0], [4, 1]])  # token ids of the shared vocabulary
    merged_targets = torch.tensor([[1, 2], [1, 0], [3, 1]])
    for mode in ("smmd", "mmd", "smooth"):
        torch.testing.assert_close(
            SMMDLoss(shared, mode=mode)(logits, targets), SMMDLoss(single, mode=mode)(pooled, merged_targets)
        )


def test_float64_logits_give_a_float64_loss():
    # issue 16.7: the float32 kernel buffer made float64 logits raise
    logits = torch.randn(4, 2, V, dtype=torch.float64, requires_grad=True)
    targets = VOCAB.token_ids[torch.randint(0, 10, (4, 2), generator=torch.Generator().manual_seed(1))]
    loss = SMMDLoss(VOCAB)(logits, targets)
    assert loss.dtype == torch.float64
    loss.backward()
    assert logits.grad.dtype == torch.float64
    torch.testing.assert_close(loss.float(), SMMDLoss(VOCAB)(logits.detach().float(), targets), rtol=1e-5, atol=1e-6)
    assert NumberTokenLoss(VOCAB)(logits, targets).dtype == torch.float64
