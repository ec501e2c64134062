import numpy as np
import pytest
import torch
from icml26_todoevolve.factory import ALL_CONFIGS, PlannerConfig
from icml26_todoevolve.policy import ConfigPolicy, train_dpo, train_sft


def test_log_probabilities_of_all_configurations_sum_to_one():
    torch.manual_seed(0)
    policy = ConfigPolicy(3, hidden=8)
    x = np.tile(np.array([[0.3, -1.0, 2.0]], dtype=np.float32), (len(ALL_CONFIGS), 1))
    with torch.no_grad():
        total = policy.log_prob(x, list(ALL_CONFIGS)).exp().sum()
    assert float(total) == pytest.approx(1.0, abs=1e-5)


def test_greedy_decoding_follows_the_token_argmax():
    torch.manual_seed(1)
    policy = ConfigPolicy(2, hidden=8)
    x = np.array([[1.0, 0.0]], dtype=np.float32)
    greedy = policy.decode(x)[0]
    prefix: list[int] = []
    for k in range(4):  # brute force: best next token given the greedy prefix, by full-sequence marginals
        scores = {}
        for c in ALL_CONFIGS:
            if list(c.indices[:k]) == prefix:
                with torch.no_grad():
                    scores.setdefault(c.indices[k], []).append(float(policy.log_prob(x, [c]).exp()))
        prefix.append(max(scores, key=lambda t: sum(scores[t])))
    assert greedy.indices == tuple(prefix)


def test_sft_learns_a_configuration_per_task_type_and_dpo_moves_away_from_rejected():
    torch.manual_seed(0)
    a, b = PlannerConfig("dag", "decompose", "none", "parallel"), PlannerConfig("linear", "verified", "periodic")
    x = np.array([[1.0, 0.0]] * 10 + [[0.0, 1.0]] * 10, dtype=np.float32)
    policy = ConfigPolicy(2, hidden=8)
    losses = train_sft(policy, x, [a] * 10 + [b] * 10, steps=200, lr=0.05)
    assert losses[-1] < 0.1 * losses[0]
    assert policy.decode(x[[0, 10]]) == [a, b]
    rejected = PlannerConfig("dag", "decompose", "periodic", "parallel")
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    trained, losses = train_dpo(policy, x[:10], [a] * 10, [rejected] * 10, beta=0.1, steps=50, lr=0.05)
    assert all(torch.equal(before[k], v) for k, v in policy.state_dict().items())  # the reference stays frozen
    assert margin(trained, x[:1], a, rejected) > margin(policy, x[:1], a, rejected) + 1.0 and losses[-1] < losses[0]


@torch.no_grad()
def margin(policy, x, chosen, rejected):
    return float((policy.log_prob(x, [chosen]) - policy.log_prob(x, [rejected]))[0])


def test_bad_policy_inputs():
    policy = ConfigPolicy(2)
    cfg = [PlannerConfig()]
    with pytest.raises(ValueError, match="^features="):
        policy.log_prob(np.zeros((1, 3)), cfg)
    with pytest.raises(ValueError, match="^configs=2"):
        policy.log_prob(np.zeros((1, 2)), cfg * 2)
    with pytest.raises(ValueError, match="^rejected=0"):
        train_dpo(policy, np.zeros((1, 2)), cfg, [])
    with pytest.raises(ValueError, match="^beta=-0.1"):
        train_dpo(policy, np.zeros((1, 2)), cfg, cfg, beta=-0.1)
    with pytest.raises(ValueError, match="^configs=\\[\\]"):
        train_sft(policy, np.zeros((0, 2)), [])
