from pathlib import Path

import numpy as np
from icml26_shared.testing import run_readme_usage


def test_readme_usage_block_prints_what_its_comments_say():
    ns = run_readme_usage(Path(__file__).parents[1] / "README.md")
    div, est, test = ns["div"], ns["est"], ns["test"]
    assert round(div.value, 4) == 1.745 and div.phi_x.shape == (100,)
    assert np.allclose([est.estimate, est.plugin, *est.ci], [0.462, 0.443, 0.206, 0.719], atol=6e-4)
    assert not test.reject and abs(test.p_value - 0.0511) < 6e-5 and test.z.shape == (4,)
