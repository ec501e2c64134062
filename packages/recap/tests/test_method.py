"""The agent: shapes, target encoding, decoding, and that training fits a small set."""

import numpy as np
import pytest
import torch
from icml26_recap import AgentPolicy, ReCAPAgent, collect, sft_samples, train
from icml26_recap.method import GRID, batch, loss, tokens
from icml26_recap.tasks import ERRORS
from icml26_shared.testing import on_default_kernels


def test_forward_shapes():
    agent = ReCAPAgent(64, width=8, hidden=16)
    b = batch(sft_samples(collect("drag_match", 3, 0)), 64)
    out = agent(b["image"], b["words"], b["context"])
    assert out["reflection"].shape == (3, len(ERRORS)) and out["kind"].shape == (3, 3)
    assert out["points"].shape == (3, 3, GRID * GRID) and out["text"].shape == (3, 4, 11)


def test_batch_encodes_only_the_parts_an_action_has():
    samples = sft_samples(collect("slider", 1, 0) + collect("text", 1, 0))
    b = batch(samples, 64)
    assert (b["points"][0, 0], b["text"][0, 0]) == (-100, -100)  # a drag has no click point and no text
    start = b["points"][0, 1].item()
    a = samples[0].action
    assert (start % GRID, start // GRID) == (int(a.x // 4), int(a.y // 4))
    assert b["text"][1].tolist() == [int(c) for c in samples[1].action.text] + [10]


def test_training_fits_a_small_set_and_the_policy_replays_it():
    torch.manual_seed(0)
    samples = sft_samples(collect("drag_slider", 12, 0))
    agent = ReCAPAgent(64, width=16, hidden=64)
    losses = train(agent, samples, epochs=60, lr=3e-3, batch_size=12, seed=0)
    assert np.mean(losses[-5:]) < 0.2 * np.mean(losses[:5])
    actions, reflections = AgentPolicy(agent).act([s_obs(s) for s in samples], np.stack([s.context for s in samples]))
    hits = [abs(a.x2 - s.action.x2) <= 2 and a.kind == "drag" for a, s in zip(actions, samples, strict=True)]
    assert np.mean(hits) >= 0.9 and set(reflections) == {"none"}


def s_obs(sample):
    from icml26_recap import Observation

    return Observation(sample.image, sample.instruction)


def test_policy_points_lie_on_the_screen_at_cell_centres():
    agent = ReCAPAgent(128, width=8, hidden=16)
    samples = sft_samples(collect("click_button", 4, 0, size=128), size=128)
    actions, _ = AgentPolicy(agent).act([s_obs(s) for s in samples], np.stack([s.context for s in samples]))
    for a in actions:
        assert all(0 <= v < 128 and (v + 0.5) % 8 == 4 for p in a.points() for v in p)


def test_bad_inputs():
    with pytest.raises(ValueError, match="size="):
        ReCAPAgent(48)
    with pytest.raises(ValueError, match="samples="):
        batch([], 64)
    with pytest.raises(ValueError, match="instruction="):
        tokens(("a",) * 7)
    with pytest.raises(ValueError, match="epochs="):
        train(ReCAPAgent(64, 8, 16), sft_samples(collect("text", 1, 0)), epochs=0)
    samples = sft_samples(collect("text", 1, 0, size=128), size=128)
    with pytest.raises(ValueError, match="image="):
        AgentPolicy(ReCAPAgent(64, 8, 16)).act([s_obs(samples[0])], samples[0].context[None])


def test_every_parameter_gets_a_gradient():
    """A parameter whose exact gradient is 0 (a bias before a batch norm, a constant added to a whole heatmap)
    gets only rounding noise, which Adam turns into steps of size lr that differ between CPUs: there is none."""
    agent = ReCAPAgent(64, 8, 16, dtype="float64")
    samples = sft_samples(collect("slider", 2, 0) + collect("click_button", 2, 0) + collect("text", 2, 0))
    agent.train()
    loss(agent, batch(samples, 64)).backward()
    for name, p in agent.named_parameters():
        grad = p.grad if name != "words.weight" else p.grad[1:]  # the padding word has none, by design
        assert grad.abs().max() > 1e-8, name


def test_initialisation_is_a_function_of_the_seed_alone():
    torch.manual_seed(0)
    a = ReCAPAgent(64, 8, 16, seed=3).state_dict()
    torch.manual_seed(1)
    b = ReCAPAgent(64, 8, 16, seed=3).state_dict()
    assert all(torch.equal(v, b[k]) for k, v in a.items())
    assert not torch.equal(a["glimpse.weight"], ReCAPAgent(64, 8, 16, seed=4).state_dict()["glimpse.weight"])
    assert a["words.weight"][0].abs().max() == 0  # the padding word


def trained_state() -> dict[str, torch.Tensor]:
    """A float64 agent after three epochs of SFT on six drag episodes (one torch thread), with its losses."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        agent = ReCAPAgent(64, 8, 16, dtype="float64", seed=1)
        losses = train(agent, sft_samples(collect("drag_slider", 6, 0)), epochs=3, batch_size=8, seed=2)
    finally:
        torch.set_num_threads(threads)
    return {"losses": torch.tensor(losses, dtype=torch.float64), **agent.state_dict()}


def test_float64_training_is_the_same_on_the_default_kernel_path(tmp_path):
    """Initialisation and a few Adam steps in float64 under torch's AVX2/AVX512 kernels (this process) and under
    ATEN_CPU_CAPABILITY=default agree to ~1e-12 (float32, or torch's own initialisers, differ in the last bits
    from the first step on, and training grows them: README, "Across machines")."""
    default = on_default_kernels(__file__, "trained_state()", tmp_path)
    for name, value in trained_state().items():
        assert torch.allclose(value.double(), default[name].double(), rtol=0, atol=1e-9), name
