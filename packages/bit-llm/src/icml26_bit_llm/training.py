"""The three training stages and the evaluation, on the subjects of a ``Dataset``.

(i) contrastive alignment of the voxel encoder to the stimulus embedding (encoder + head trained);
(ii) instruction SFT of the brain-LLM interface, encoder and LLM frozen;
(iii) self-critical sequence training of the interface with a CIDEr-D reward and the greedy baseline.
Every step draws one training subject and a batch of its samples (subjects differ in voxel count).
"""

from __future__ import annotations

import numpy as np
import torch
from icml26_shared import check_int, check_positive

from .data import Dataset, Subject, captions
from .encoder import ContrastiveHead, VoxelEncoder, info_nce
from .method import CaptionDecoder, scst_loss
from .metrics import caption_scores, cider_d


def subject_batches(sizes: list[int], steps: int, batch: int, seed: int):
    """(subject k, sample indices) for each of ``steps`` steps: a training subject at random, a batch of its samples."""
    check_int("steps", steps, 1)
    check_int("batch", batch, 1)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        k = int(rng.integers(len(sizes)))
        yield k, rng.choice(sizes[k], size=min(batch, sizes[k]), replace=False)


def _descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> float:
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def train_contrastive(
    encoder: VoxelEncoder, head: ContrastiveHead, data: Dataset, steps: int, lr: float, batch: int, seed: int
) -> list[float]:
    """Stage (i): symmetric InfoNCE between the pooled fMRI tokens and the scene's semantic vector."""
    check_positive("lr", lr)
    optimizer = torch.optim.AdamW([*encoder.parameters(), *head.parameters()], lr=lr, weight_decay=0.01)
    losses = []
    for k, idx in subject_batches([len(s.fmri) for s in data.train], steps, batch, seed):
        subject = data.train[k]
        fmri, coords = torch.from_numpy(subject.fmri[idx]), torch.from_numpy(subject.coords)
        target = torch.from_numpy(data.target(subject.scenes[idx]))
        losses.append(_descend(optimizer, info_nce(head(encoder(fmri, coords)), target, head.log_scale)))
    return losses


@torch.no_grad()
def encode_subject(
    encoder: VoxelEncoder, subject: Subject, fmri: np.ndarray | None = None, coords: np.ndarray | None = None
) -> torch.Tensor:
    """(n, T, d) fMRI tokens of a subject (or of perturbed ``fmri``/``coords``), with the encoder frozen."""
    encoder.eval()
    f = torch.from_numpy(np.asarray(subject.fmri if fmri is None else fmri, dtype=np.float32))
    c = torch.from_numpy(np.asarray(subject.coords if coords is None else coords, dtype=np.float32))
    return encoder(f, c)


def train_sft(
    decoder: CaptionDecoder,
    memories: list[torch.Tensor],
    subjects: tuple[Subject, ...],
    steps: int,
    lr: float,
    batch: int,
    seed: int,
) -> list[float]:
    """Stage (ii): next-token CE on the caption (its first reference), only the interface's parameters trained."""
    optimizer = torch.optim.AdamW([p for p in decoder.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    losses = []
    for k, idx in subject_batches([len(m) for m in memories], steps, batch, seed):
        targets = [captions(s)[0] for s in subjects[k].scenes[idx]]
        losses.append(_descend(optimizer, decoder.loss(memories[k][idx], targets)))
    return losses


def train_scst(
    decoder: CaptionDecoder,
    memories: list[torch.Tensor],
    subjects: tuple[Subject, ...],
    steps: int,
    lr: float,
    batch: int,
    max_new_tokens: int,
    seed: int,
) -> list[float]:
    """Stage (iii): SCST with reward CIDEr-D (pycocoevalcap) and the greedy caption as baseline."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW([p for p in decoder.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    rewards = []
    for k, idx in subject_batches([len(m) for m in memories], steps, batch, seed):
        refs = [captions(s) for s in subjects[k].scenes[idx]]
        loss, reward = scst_loss(decoder, memories[k][idx], refs, cider_d, max_new_tokens, generator)
        _descend(optimizer, loss)
        rewards.append(reward)
    return rewards


def evaluate(
    decoder: CaptionDecoder, memory: torch.Tensor, references: list[list[str]], max_new_tokens: int
) -> tuple[dict[str, float], list[str]]:
    """Greedy captions of ``memory`` scored against ``references``: BLEU-4, CIDEr-D, distinct captions."""
    decoder.eval()
    generated = decoder.caption(memory, max_new_tokens)
    scores = caption_scores(references, generated)
    scores["distinct"] = float(len(set(generated)))
    return scores, generated
