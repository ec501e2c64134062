"""Training: the loss falls, the rescale doubling of App. B, the PennyLane backend and bad inputs."""

import numpy as np
import pytest
from icml26_qnn_uap import SAQNN, fit
from icml26_qnn_uap.data import make_dataset, target

F2 = np.array([[0, 0], [1, 1], [-1, -1]])


def test_fit_learns_f2_and_keeps_the_scale():
    data = make_dataset("f2", 0, n_train=40, n_test=40)
    result = fit(SAQNN(F2), data.x_train, data.y_train, steps=40, restarts=2, max_doublings=1, seed=0)
    assert result.history[-1] < 0.9 * result.history[0]  # measured 0.78: a margin far outside float64 noise
    assert result.rescale_tried[0] == 1.0
    assert result.model.rescale / data.y_train.max() in result.rescale_tried  # y_max * a'
    assert np.mean((result.predict(data.x_test) - data.y_test) ** 2) < 0.02


@pytest.mark.slow
def test_pennylane_backend_follows_the_closed_form_trajectory():
    data = make_dataset("f2", 1, n_train=10, n_test=10)
    kwargs = dict(steps=3, restarts=1, max_doublings=0, seed=3)
    closed = fit(SAQNN(F2), data.x_train, data.y_train, **kwargs)
    circuit = fit(SAQNN(F2), data.x_train, data.y_train, backend="pennylane", **kwargs)
    np.testing.assert_allclose(circuit.history, closed.history, rtol=1e-8)


def test_targets_are_the_papers():
    x = np.zeros((1, 2))
    assert target("f1", x)[0] == 1.0 and target("f3", x)[0] == pytest.approx(1 / 9)
    assert target("f2", x)[0] == pytest.approx((np.cos(np.pi / 6) + 1) / 2.5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"steps": 0}, "steps"),
        ({"lr": -0.1}, "lr"),
        ({"restarts": 0}, "restarts"),
        ({"max_doublings": -1}, "max_doublings"),
        ({"backend": "braket"}, "backend"),
        ({"y": -np.ones(5)}, "y"),
        ({"x": np.zeros((4, 2))}, "x"),
    ],
)
def test_bad_training_inputs(kwargs, name):
    args = {"x": np.zeros((5, 2)), "y": np.ones(5)} | kwargs
    x, y = args.pop("x"), args.pop("y")
    with pytest.raises(ValueError, match=name):
        fit(SAQNN(F2), x, y, **args)


def test_bad_dataset_inputs():
    with pytest.raises(ValueError, match="name"):
        make_dataset("f4", 0)
    with pytest.raises(ValueError, match="n_train"):
        make_dataset("f1", 0, n_train=0)
