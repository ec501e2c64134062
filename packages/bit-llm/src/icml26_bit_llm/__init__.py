"""BIT-LLM: fMRI-to-text with persistent cross-attention into a frozen LLM (ICML 2026), reference implementation.

A subject-agnostic ``VoxelEncoder`` turns any subject's voxels into fMRI tokens; ``BitLLM`` gives every
decoder layer of a frozen causal LM those tokens as a persistent key/value memory through Flamingo gated
cross-attention adapters (``GatedCrossAttention``, gates at 0); ``training`` holds the three stages
(contrastive alignment, instruction SFT, SCST with a CIDEr-D reward); ``PrefixDecoder`` is the soft-prompt
baseline; ``caption_scores`` computes BLEU-4 and CIDEr-D with pycocoevalcap.
"""

from importlib.metadata import PackageNotFoundError, version

from .baselines import LanguagePrior, PrefixDecoder, retrieve_captions
from .data import Cortex, Dataset, Subject, captions, make_dataset, make_subject, sample_scenes
from .encoder import ContrastiveHead, VoxelEncoder, fourier_features, info_nce
from .lm import IGNORE_INDEX, PROMPT, encode, load_smollm2, pretrain_tiny_lm, tiny_llama, word_tokenizer
from .method import BitLLM, CaptionDecoder, GatedCrossAttention, scst_loss
from .metrics import caption_scores, cider_d, coco_tokenize, is_ptb_plain
from .training import encode_subject, evaluate, train_contrastive, train_scst, train_sft

try:
    __version__ = version("icml26-bit-llm")
except PackageNotFoundError:  # pragma: no cover
    __version__ = "0+unknown"

__all__ = [
    "IGNORE_INDEX",
    "PROMPT",
    "BitLLM",
    "CaptionDecoder",
    "ContrastiveHead",
    "Cortex",
    "Dataset",
    "GatedCrossAttention",
    "LanguagePrior",
    "PrefixDecoder",
    "Subject",
    "VoxelEncoder",
    "caption_scores",
    "captions",
    "cider_d",
    "coco_tokenize",
    "encode",
    "encode_subject",
    "evaluate",
    "fourier_features",
    "info_nce",
    "is_ptb_plain",
    "load_smollm2",
    "make_dataset",
    "make_subject",
    "pretrain_tiny_lm",
    "retrieve_captions",
    "sample_scenes",
    "scst_loss",
    "tiny_llama",
    "train_contrastive",
    "train_scst",
    "train_sft",
    "word_tokenizer",
]
