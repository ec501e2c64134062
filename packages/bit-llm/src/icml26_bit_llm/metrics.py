"""Captioning metrics as the field computes them: ``pycocoevalcap``'s BLEU-4 and CIDEr-D.

Captions are first put in the COCO evaluation form, pycocoevalcap's PTBTokenizer (Stanford PTB tokenizer,
lower-cased, punctuation removed). That tokenizer is Java; a caption that is already a run of lower-case
ASCII letters and digits separated by single spaces (every caption of this package's grammar, and every
caption the in-repo LM can produce) is a fixed point of it, so it is passed through without starting Java
(tests check the fixed point against the real tokenizer where Java is installed). Any other caption
(e.g. SmolLM2's free text) goes through PTBTokenizer, which then needs ``java`` on PATH.
METEOR and SPICE are left out: both need Java, and SPICE also downloads Stanford CoreNLP on first use.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil

import numpy as np
from icml26_shared import fail

PLAIN = re.compile(r"^(?:[a-z0-9]+(?: [a-z0-9]+)*)?$")
PTB_SPLITS = ("cannot", "gonna", "gotta", "lemme", "gimme", "wanna")  # words the PTB tokenizer splits in two


def is_ptb_plain(caption: str) -> bool:
    """True when PTBTokenizer (-lowerCase, punctuation removed) leaves ``caption`` unchanged."""
    return bool(PLAIN.match(caption)) and not any(w in PTB_SPLITS for w in caption.split())


def coco_tokenize(captions: list[str]) -> list[str]:
    """The COCO evaluation form of each caption (pycocoevalcap's PTBTokenizer; plain captions pass as they are)."""
    if not isinstance(captions, list) or not all(isinstance(c, str) for c in captions):
        raise fail("captions", captions, "a list of strings")
    todo = {i: c for i, c in enumerate(captions) if not is_ptb_plain(c)}
    if not todo:
        return list(captions)
    if shutil.which("java") is None:
        example = next(iter(todo.values()))
        raise RuntimeError(
            f"captions={example!r} needs pycocoevalcap's PTBTokenizer, which runs Java: install a Java runtime "
            "(e.g. apt-get install default-jre-headless)"
        )
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    tokenized = PTBTokenizer().tokenize({i: [{"caption": c}] for i, c in todo.items()})
    return [tokenized[i][0] if i in todo else c for i, c in enumerate(captions)]


def _scorer_inputs(references: list[list[str]], candidates: list[str]) -> tuple[dict, dict]:
    if not isinstance(references, list) or not references:
        raise fail("references", references, "a non-empty list of reference lists")
    if not isinstance(candidates, list) or len(candidates) != len(references):
        raise fail("candidates", candidates, f"a list of {len(references)} captions, one per reference list")
    for refs in references:
        if not isinstance(refs, list) or not refs:
            raise fail("references", refs, "at least one reference caption per sample")
    flat = coco_tokenize([r for refs in references for r in refs])
    cands = coco_tokenize(list(candidates))
    gts, k = {}, 0
    for i, refs in enumerate(references):
        gts[i] = flat[k : k + len(refs)]
        k += len(refs)
    return gts, {i: [c] for i, c in enumerate(cands)}


def cider_d(references: list[list[str]], candidates: list[str]) -> np.ndarray:
    """Per-sample CIDEr-D (pycocoevalcap ``Cider``: n <= 4, sigma = 6, clipped counts, x10); document
    frequencies from the references given, as pycocoevalcap computes them."""
    from pycocoevalcap.cider.cider import Cider

    gts, res = _scorer_inputs(references, candidates)
    return np.asarray(Cider().compute_score(gts, res)[1], dtype=float)


def caption_scores(references: list[list[str]], candidates: list[str]) -> dict[str, float]:
    """Corpus BLEU-4 and CIDEr-D of ``candidates`` against ``references`` (one list per sample)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider

    gts, res = _scorer_inputs(references, candidates)
    with contextlib.redirect_stdout(io.StringIO()):  # pycocoevalcap's BleuScorer prints its counts
        bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    cider, _ = Cider().compute_score(gts, res)
    return {"bleu4": float(bleu[3]), "cider_d": float(cider)}
