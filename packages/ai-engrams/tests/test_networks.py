import numpy as np
import pytest
import torch
from icml26_ai_engrams import MLP, TinyLM, answer_scores, class_accuracy, train_lm
from icml26_ai_engrams.data import ANSWER_POSITION, load_digits_split, make_facts


def test_lm_is_causal():
    torch.manual_seed(0)
    lm = TinyLM(11, 6, dim=16, heads=2, layers=2)
    ids = torch.randint(0, 11, (3, 6))
    changed = ids.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11
    assert torch.allclose(lm(ids)[:, :4], lm(changed)[:, :4], atol=1e-6)
    assert not torch.allclose(lm(ids)[:, 4:], lm(changed)[:, 4:])


def test_facts_corpus_and_memorisation():
    facts = make_facts(people=6, cities=3, jobs=4, seed=0)
    assert facts.ids.shape == (12, 6) and len(set(facts.vocab)) == len(facts.vocab)
    assert facts.decode(0).startswith("<bos> name0 lives in city") and facts.decode(1).split()[3] == "as"
    assert (np.bincount(facts.person) == 2).all()
    ids = torch.from_numpy(facts.ids)
    torch.manual_seed(0)
    lm = train_lm(TinyLM(len(facts.vocab), 6, dim=32, heads=2, layers=1), ids, steps=150, seed=0, lr=1e-2)
    hit, nll = answer_scores(lm, ids, ANSWER_POSITION)
    assert hit.mean() == 1.0 and nll.max() < 0.5


def test_class_accuracy_and_digits_split():
    X_train, _, X_test, y_test = load_digits_split(0)
    assert X_train.shape[1] == 64 and 0 <= X_train.min() and X_train.max() <= 1
    assert len(X_test) == pytest.approx(0.3 * 1797, abs=2) and set(y_test) == set(range(10))
    model = MLP(64, (8,), 10)
    acc = class_accuracy(model, torch.from_numpy(X_test), torch.from_numpy(y_test), 11)
    assert acc.shape == (11,) and np.isnan(acc[10]) and np.all((acc[:10] >= 0) & (acc[:10] <= 1))


def test_networks_reject_bad_inputs():
    lm = TinyLM(5, 4, dim=8, heads=2, layers=1)
    with pytest.raises(ValueError, match="ids="):
        lm(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="ids="):
        lm(torch.full((2, 3), 7))
    with pytest.raises(ValueError, match="dim="):
        TinyLM(5, 4, dim=9, heads=2)
    with pytest.raises(ValueError, match="x="):
        MLP(3)(torch.rand(2, 4))
    with pytest.raises(ValueError, match="people="):
        make_facts(0, 2, 2, 0)
    with pytest.raises(ValueError, match="test_fraction="):
        load_digits_split(0, test_fraction=1.0)
