"""Training gives the same model on torch's default (scalar) CPU kernels as on the vectorised ones.

In float32, the parameter draws already differ in their last bits between the two paths (the vectorised normal
fill), and training grows such differences until test predictions move (issue 27: a claim's mean moved by six
standard errors on another CPU). In float64 they stay at rounding level.
"""

import numpy as np
import torch
from icml26_shared.testing import on_default_kernels
from icml26_smmd.data import addition_task
from icml26_smmd.experiment import CONFIGS, _objective
from icml26_smmd.models import AnswerHead, PromptEncoder, TokenReader
from icml26_smmd.tokens import NumberTokenizer, NumericVocab
from icml26_smmd.training import train


def trained_adder() -> TokenReader:
    """Two epochs of CE + SMMD on 256 addition problems, float64, one thread."""
    torch.set_num_threads(1)
    tok = NumberTokenizer(max_number_token=9)
    task, _ = addition_task(tok, 256, 16, np.random.default_rng(0))
    torch.manual_seed(0)
    f = torch.float64
    model = TokenReader(PromptEncoder(tok.vocab_size, 6, dtype=f), AnswerHead(256, 4, tok.vocab_size, dtype=f))
    objective = _objective("SMMD", NumericVocab.from_tokenizer(tok, max_value=999), CONFIGS["smoke"], 0)
    train(model, objective, task, 2, 0)
    return model


def test_training_is_the_same_on_the_default_kernel_path(tmp_path):
    other = on_default_kernels(__file__, "trained_adder().state_dict()", tmp_path)
    for name, value in trained_adder().state_dict().items():
        assert torch.allclose(value, other[name], rtol=0, atol=1e-12), name
