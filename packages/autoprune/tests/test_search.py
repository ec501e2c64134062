"""The metric search: elitism, history written as it goes, GCoT prompts, the three proposers."""

import json

import pytest
import torch
from icml26_autoprune.data import planted_outlier_network
from icml26_autoprune.metric import MAGNITUDE, WANDA
from icml26_autoprune.pruning import dense_statistics
from icml26_autoprune.search import (
    ChatCompletionsProposer,
    LLMProposer,
    MutationProposer,
    Node,
    best,
    build_prompt,
    extract_metric,
    gcot_graph,
    layer_facts,
    reconstruction_fitness,
    search,
    serialise,
)
from icml26_shared import ChatError
from icml26_shared.testing import FakeChatServer


@pytest.fixture(scope="module")
def layers():
    net = planted_outlier_network(seed=0)
    x = torch.randn(512, 128, generator=torch.Generator().manual_seed(0))
    stats = dense_statistics(list(net), x, keep_inputs=range(6), max_tokens=256)
    return [s for block in stats for s in block.values()]


class Scripted:
    """A ChatModel that answers from a script (the fake LLM of these tests)."""

    def __init__(self, replies):
        self.replies, self.prompts = list(replies), []

    def chat(self, messages):
        self.prompts.append(messages[-1]["content"])
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_mutation_search_keeps_the_elite_and_reaches_magnitude(layers, tmp_path):
    history = search(MutationProposer(seed=0), layers, 0.7, generations=3, candidates=4, history_path=tmp_path / "h")
    assert [c.generation for c in history] == [0] + [g for g in (1, 2, 3) for _ in range(4)]
    running = [max(c.fitness for c in history[: i + 1] if c.valid) for i in range(len(history))]
    assert running == sorted(running)  # the best fitness never goes down
    assert best(history).fitness >= reconstruction_fitness(MAGNITUDE, layers, 0.7)
    lines = [json.loads(line) for line in (tmp_path / "h").read_text().splitlines()]
    assert [line["text"] for line in lines] == [c.text for c in history]


def test_mutation_proposer_is_deterministic(layers):
    runs = [[c.text for c in search(MutationProposer(seed=5), layers, 0.7, 2, 3)] for _ in range(2)]
    assert runs[0] == runs[1]


def test_wanda_is_fitter_than_magnitude_on_reconstruction(layers):
    assert reconstruction_fitness(WANDA, layers, 0.7) > reconstruction_fitness(MAGNITUDE, layers, 0.7)
    assert -1.0 < reconstruction_fitness(MAGNITUDE, layers, 0.7) < 0.0


def test_garbage_replies_are_recorded_not_fatal(layers, tmp_path):
    replies = ["", "I think pruning is good.", "score = __import__('os').system('x')", "score = abs(W) * X", "∑∑"]
    history = search(LLMProposer(Scripted(replies)), layers, 0.7, 1, 5, history_path=tmp_path / "h")
    proposed = history[1:]
    assert [c.valid for c in proposed] == [False, False, False, True, False]
    assert all(c.reason for c in proposed if not c.valid)
    assert proposed[3].metric == "abs(W) * X" and best(history).metric == "abs(W) * X"


def test_endpoint_error_propagates_after_the_history_is_written(layers, tmp_path):
    chat = Scripted(["score = abs(W)", ChatError("POST http://127.0.0.1:1/v1/chat/completions timed out")])
    proposer = LLMProposer(chat)
    proposer.propose = lambda prompt, history, n: [chat.chat([{"content": prompt}]) for _ in range(1)]
    with pytest.raises(ChatError, match="timed out"):
        search(proposer, layers, 0.7, generations=2, candidates=1, history_path=tmp_path / "h")
    assert len((tmp_path / "h").read_text().splitlines()) == 2  # the seed and generation 1 were kept


@pytest.mark.parametrize("with_history", [False, True])
def test_non_text_proposals_are_refused_before_anything_is_written(layers, tmp_path, with_history):
    """A proposer returning bytes used to crash json.dumps half-way with a history file (issue 27)."""
    proposer = MutationProposer()
    proposer.propose = lambda prompt, history, n: ["abs(W)", b"abs(W) * X"]
    path = tmp_path / "h" if with_history else None
    with pytest.raises(ValueError, match=r"^proposer.propose\(\)='a list holding bytes': expected a list of"):
        search(proposer, layers, 0.7, generations=1, candidates=2, history_path=path)
    if with_history:
        assert len(path.read_text().splitlines()) == 1  # the seed only: none of generation 1 was written
    with pytest.raises(ValueError, match="^seeds="):
        search(MutationProposer(), layers, 0.7, seeds=[b"abs(W)"], history_path=path)


def test_gcot_prompt_carries_statistics_and_history(layers):
    facts = layer_facts(layers)
    history = search(MutationProposer(seed=1), layers, 0.7, 1, 2)
    prompt = build_prompt("gcot", facts, history, 0.7)
    assert f"{facts['weight_skew']:.1f}" in prompt and history[0].metric in prompt
    assert prompt.index("[observe_weights]") < prompt.index("[hypothesise]") < prompt.index("[write_metric]")
    plain = build_prompt("plain", facts, history, 0.7)
    assert "skewness" not in plain and "score = <expression>" in plain
    assert len(gcot_graph(facts, history, 0.7)) == 5


def test_serialise_is_topological_and_refuses_cycles():
    nodes = [Node("c", ("a", "b"), "C"), Node("a", (), "A"), Node("b", ("a",), "B")]
    assert [line.split("[")[1].split("]")[0] for line in serialise(nodes).splitlines()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="^nodes="):
        serialise([Node("x", ("y",), ""), Node("y", ("x",), "")])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("score = abs(W) * X.", "abs(W) * X"), ("Sure!\n```\nabs(W)\n```", "Sure!"), ("`score = W ** 2`", "W ** 2")],
)
def test_extract_metric(reply, expected):
    assert extract_metric(reply) == expected


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"sparsity": 1.0}, "sparsity=1.0"),
        ({"generations": 0}, "generations=0"),
        ({"candidates": 0}, "candidates=0"),
        ({"prompt": "cot"}, "prompt='cot'"),
    ],
)
def test_bad_search_arguments(layers, kwargs, named):
    args = {"proposer": MutationProposer(), "layers": layers, "sparsity": 0.7, **kwargs}
    with pytest.raises(ValueError, match=f"^{named}"):
        search(**args)


def test_layers_without_inputs_and_bad_proposers_are_refused(layers):
    from icml26_autoprune.pruning import LayerStats

    with pytest.raises(ValueError, match="^layers="):
        search(MutationProposer(), [LayerStats(torch.ones(2, 2), torch.ones(2))], 0.5)
    with pytest.raises(ValueError, match="^chat="):
        LLMProposer("not a chat model")


def test_chat_completions_proposer_needs_an_address(monkeypatch):
    monkeypatch.delenv("ICML26_CHAT_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="^base_url=None"):
        ChatCompletionsProposer(model="m")


def test_chat_completions_proposer_against_a_fake_server(layers):
    with FakeChatServer(lambda request: (200, "score = abs(W) * sqrt(X)")) as server:
        proposer = ChatCompletionsProposer(server.base_url, "fake", timeout_s=5)
        history = search(proposer, layers, 0.7, generations=1, candidates=2)
    assert [c.metric for c in history[1:]] == ["abs(W) * sqrt(X)"] * 2
