"""IGPO, the paper's training signal: cost accounting, cognitive impedance, preference pairs and the DPO loss.

Everything follows the official code (``EcthelionLiu/TodoEvolve``): token prices from
``PlanFactory/base_agent.py::capture_trajectory``; the impedance and the pair rules from
``Trainer/construct_DPOdataset.py``; the SFT filter from ``Trainer/construct_SFTdataset.py``; the loss is the
standard DPO objective that LLaMA-Factory trains with ``pref_beta: 0.1`` against the frozen SFT model.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
from icml26_shared import check_int, check_number, check_positive, fail

# USD per million tokens (base_agent.py): the planning model and the executing (worker) model
PLANNER_PRICE_INPUT, PLANNER_PRICE_OUTPUT = 0.50, 3.0
WORKER_PRICE_INPUT, WORKER_PRICE_OUTPUT = 0.25, 2.0
# impedance exponent weights (construct_DPOdataset.py)
FAIL_WEIGHT, TURBULENCE_WEIGHT, BUREAUCRACY_WEIGHT = 0.5, 2.0, 0.5
SIMILARITY_LIMIT = 0.8  # above this difflib ratio the rejected text is degraded
DPO_BETA = 0.1  # pref_beta of qwen3_full_dpo.yaml
BAD_THOUGHTS = (
    "I will generate the code directly.",
    "Skipping analysis.",
    "### Analysis\n(No detailed analysis provided)",
)


def usage(
    planner_input_tokens: int,
    planner_output_tokens: int,
    worker_input_tokens: int,
    worker_output_tokens: int,
    steps: int = 0,
) -> dict[str, dict[str, Any]]:
    """The ``usage`` / ``planning_system_usage`` / ``worker_usage`` blocks of a trajectory, costs in USD.

    planner = in/1e6 * 0.50 + out/1e6 * 3.0; worker = in/1e6 * 0.25 + out/1e6 * 2.0; total = planner + worker;
    each cost rounded to 6 decimals as the official collector stores it (the impedance reads these values).
    """
    names = ("planner_input_tokens", "planner_output_tokens", "worker_input_tokens", "worker_output_tokens")
    counts = [planner_input_tokens, planner_output_tokens, worker_input_tokens, worker_output_tokens]
    p_in, p_out, w_in, w_out = (check_int(k, v, 0) for k, v in zip(names, counts, strict=True))
    planner_cost = p_in / 1e6 * PLANNER_PRICE_INPUT + p_out / 1e6 * PLANNER_PRICE_OUTPUT
    worker_cost = w_in / 1e6 * WORKER_PRICE_INPUT + w_out / 1e6 * WORKER_PRICE_OUTPUT
    return {
        "usage": {
            "step_count": check_int("steps", steps, 0),
            "total_tokens": p_in + p_out + w_in + w_out,
            "input_tokens": p_in + w_in,
            "output_tokens": p_out + w_out,
            "total_cost_usd": round(planner_cost + worker_cost, 6),
        },
        "planning_system_usage": {
            "total_tokens": p_in + p_out,
            "input_tokens": p_in,
            "output_tokens": p_out,
            "cost_usd": round(planner_cost, 6),
        },
        "worker_usage": {
            "total_tokens": w_in + w_out,
            "input_tokens": w_in,
            "output_tokens": w_out,
            "cost_usd": round(worker_cost, 6),
        },
    }


def _non_negative(name: str, value: Any) -> float:
    v = check_number(name, value)
    if v < 0:
        raise fail(name, value, "a finite number >= 0")
    return v


def _impedance_terms(entry: Mapping[str, Any]) -> tuple[float, float]:
    """``(C_total, exponent)`` of a trajectory record, validated (see ``impedance``)."""
    if not isinstance(entry, Mapping):
        raise fail("entry", entry, "a trajectory record (a mapping with metrics / usage fields)")
    metrics = entry.get("metrics", {})
    cost_total = _non_negative("total_cost_usd", entry.get("usage", {}).get("total_cost_usd", 0.0)) + 1e-9
    n_fail = metrics.get("failed_tool_calls", 0)
    if isinstance(n_fail, bool) or not isinstance(n_fail, int | np.integer) or n_fail < 0:
        raise fail("failed_tool_calls", n_fail, "an integer >= 0")
    plan_stability = check_number("plan_stability", metrics.get("plan_stability", 1.0))
    turbulence = max(0.0, 1.0 - plan_stability)
    c_plan = _non_negative(
        "planning_system_usage.cost_usd", entry.get("planning_system_usage", {}).get("cost_usd", 0.0)
    )
    c_work = _non_negative("worker_usage.cost_usd", entry.get("worker_usage", {}).get("cost_usd", 0.0))
    bureaucracy = c_plan / c_work if c_work > 1e-6 else 1.0
    exponent = FAIL_WEIGHT * int(n_fail) + TURBULENCE_WEIGHT * turbulence + BUREAUCRACY_WEIGHT * bureaucracy
    return cost_total, exponent


def impedance(entry: Mapping[str, Any]) -> float:
    """Cognitive impedance of one trajectory record (lower is better), as ``calculate_cognitive_impedance``:

        C_total     = total_cost_usd + 1e-9
        turbulence  = max(0, 1 - plan_stability)              (plan_stability defaults to 1.0)
        bureaucracy = c_plan / c_work if c_work > 1e-6 else 1.0
        Impedance   = C_total * exp(0.5 * n_fail + 2.0 * turbulence + 0.5 * bureaucracy)

    Missing fields take the official defaults (cost 0, no failures, stability 1); present ones are validated
    (negative or non-finite numbers raise ``ValueError`` naming the field). Past the float range (an exponent
    above ~709.78: about 1420 failed calls) it is ``inf``, where the official code raises ``OverflowError``; compare
    such records with ``log_impedance``, which stays finite.
    """
    cost_total, exponent = _impedance_terms(entry)
    try:
        return cost_total * math.exp(exponent)
    except OverflowError:
        return math.inf


def log_impedance(entry: Mapping[str, Any]) -> float:
    """``log(C_total) + exponent``: the log of ``impedance`` computed without ``exp``, so it stays finite where
    ``impedance`` overflows to ``inf`` (e.g. 1500 failed calls: about 750)."""
    cost_total, exponent = _impedance_terms(entry)
    return math.log(cost_total) + exponent


def _lower_impedance(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether A's impedance is strictly below B's (the official ``score_A < score_B``); by log impedance where
    both overflow to ``inf``."""
    imp_a, imp_b = impedance(a), impedance(b)
    if math.isinf(imp_a) and math.isinf(imp_b):
        return log_impedance(a) < log_impedance(b)
    return imp_a < imp_b


def is_correct(entry: Mapping[str, Any]) -> bool:
    """The official test: the judgement contains "correct" and not "incorrect" (case-insensitive)."""
    judgement = str(entry.get("judgement", "")).lower()
    return "correct" in judgement and "incorrect" not in judgement


def parse_instruction(entry: Mapping[str, Any]) -> str:
    """The instruction of a record, as the official ``parse_instruction``, stripped: ``plan_model_input`` as a
    chat-message list (the contents of its messages, joined by a blank line), one message (its content) or text.
    A missing or null input is "" (the record is then skipped; the official DPO script writes the text "None")."""
    raw = entry.get("plan_model_input")
    if raw is None:
        return ""
    if isinstance(raw, list):
        return "\n\n".join(str(m["content"]) for m in raw if isinstance(m, Mapping) and "content" in m).strip()
    if isinstance(raw, Mapping):
        return str(raw.get("content", "")).strip()
    return str(raw).strip()


def _output(entry: Mapping[str, Any]) -> str:
    """``plan_model_output`` stripped; a missing or null output is "" (the official DPO script: "None")."""
    return str(entry.get("plan_model_output") or "").strip()


def _load(line: Any) -> dict | None:
    if isinstance(line, Mapping):
        return dict(line)
    try:
        value = json.loads(line)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _records(lines: Iterable[Any], stats: dict[str, int]) -> Iterator[dict]:
    """The records of JSONL lines (or dicts): blank lines dropped, as both official readers do; lines that do not
    parse to an object counted in ``stats["unparsed"]``."""
    for line in lines:
        if isinstance(line, str) and not line.strip():
            continue
        entry = _load(line)
        if entry is None:
            stats["unparsed"] += 1
        else:
            yield entry


def sft_examples(lines: Iterable[Any]) -> tuple[list[dict[str, str]], dict[str, int]]:
    """SFT data from trajectory records (dicts or JSONL lines): the correct ones with a non-empty input and output.

    Returns ``[{"instruction", "input", "output"}]`` (LLaMA-Factory's alpaca form; the instruction by
    ``parse_instruction``) and counts. As in ``construct_SFTdataset.py``, blank lines are dropped and lines that
    do not parse are skipped and counted. Unlike it, an input or output that is null or only whitespace is
    skipped (the official script keeps whitespace-only ones, as empty texts after stripping).
    """
    examples, stats = [], {"kept": 0, "skipped": 0, "unparsed": 0}
    for entry in _records(lines, stats):
        instruction, output = parse_instruction(entry), _output(entry)
        if not is_correct(entry) or not instruction or not output:
            stats["skipped"] += 1
            continue
        examples.append({"instruction": instruction, "input": "", "output": output})
        stats["kept"] += 1
    return examples, stats


def degrade_rejected(text: str, rng: np.random.Generator) -> str:
    """Make a rejected text that is too similar to the chosen one visibly worse (``degrade_rejected_sample``):
    replace a long analysis by a dismissive line, break the ``<<<PYTHON>>>`` / ``<<<YAML>>>`` tags, or comment out
    imports and ``try:``."""
    draw = rng.random()
    if "<<<PYTHON>>>" in text and draw < 0.5:
        head, _, rest = text.partition("<<<PYTHON>>>")
        if len(head) > 50:
            return str(rng.choice(BAD_THOUGHTS)) + "\n\n<<<PYTHON>>>" + rest.split("<<<PYTHON>>>")[0]
    if draw < 0.7:
        if rng.random() < 0.5:
            return text.replace("<<<PYTHON>>>", "[PYTHON]").replace("<<<END_PYTHON>>>", "[/PYTHON]")
        return text.replace("<<<YAML>>>", "```yaml").replace("<<<END_YAML>>>", "```")
    return text.replace("import ", "# import ").replace("try:", "# try:")


PAIR_STATS = (
    "processed_pairs",
    "unparsed",
    "no_instruction",
    "unpaired",
    "kept_correct_vs_incorrect",
    "kept_fancy_battle",
    "skipped_both_incorrect",
    "skipped_both_correct",
    "skipped_empty",
    "skipped_same_content",
    "augmented_too_similar",
    "too_similar_kept",
)


def _pairs_by_task(lines: Iterable[Any], stats: dict[str, int]) -> Iterator[tuple[str, dict, dict]]:
    """(instruction, A, B) for consecutive records of the same task, in the order B appears; blank lines dropped,
    lines that do not parse, records without an instruction and each task's odd last record counted in ``stats``."""
    waiting: dict[str, dict] = {}  # per task, a record still without its partner
    for entry in _records(lines, stats):
        instruction = parse_instruction(entry)
        if not instruction:
            stats["no_instruction"] += 1
        elif instruction in waiting:
            yield instruction, waiting.pop(instruction), entry
        else:
            waiting[instruction] = entry
    stats["unpaired"] += len(waiting)


def igpo_pairs(
    lines: Iterable[Any],
    rng: np.random.Generator | None = None,
    use_impedance: bool = True,
    degrade: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """IGPO preference pairs (A, B) of two records of the same task (``process_pairwise_dpo``).

    Pairing: blank lines are dropped (as the official reader does) and each task's records (a task: one
    ``parse_instruction``), in file order, are paired consecutively. For a file in which each task's rollouts
    are consecutive and even in number (what the official pairing of consecutive lines assumes) these are the
    official pairs in the official order; a stray line, an odd rollout or interleaved tasks never pair records of
    two tasks. Lines that do not parse, records without an instruction and a task's odd last record are skipped
    and counted.

    Rules per pair:

    1. one correct, the other not: chosen = the correct one;
    2. both correct: chosen = the lower impedance (a tie goes to B: the code keeps A only if ``score_A < score_B``);
       with ``use_impedance=False`` (the correctness-only ablation) such pairs are skipped instead;
    3. both incorrect: skipped;
    4. skipped when either output is empty (or null: the official script would train on the text "None") or
       both are equal; when ``difflib`` similarity > 0.8 the rejected text is degraded (``degrade=True``, needs
       ``rng``) or kept as is and counted (``degrade=False``: a policy whose outputs are always well-formed
       configurations cannot score a degraded text).

    Lines are dicts or JSONL strings. Returns ``[{"instruction", "input", "chosen", "rejected", ...}]`` and the
    counts; each pair also carries both impedances and ``"rule"`` (``"correctness"`` or ``"impedance"``).
    """
    if degrade and rng is None:
        raise fail("rng", rng, "a numpy Generator when degrade=True (the degradation is random)")
    stats = dict.fromkeys(PAIR_STATS, 0)
    pairs = []
    for instruction, a, b in _pairs_by_task(lines, stats):
        stats["processed_pairs"] += 1
        a_ok, b_ok = is_correct(a), is_correct(b)
        if a_ok != b_ok:
            winner, loser = (a, b) if a_ok else (b, a)
            rule = "correctness"
            stats["kept_correct_vs_incorrect"] += 1
        elif a_ok and use_impedance:
            winner, loser = (a, b) if _lower_impedance(a, b) else (b, a)
            rule = "impedance"
            stats["kept_fancy_battle"] += 1
        else:
            stats["skipped_both_correct" if a_ok else "skipped_both_incorrect"] += 1
            continue
        chosen, rejected = _output(winner), _output(loser)
        if not chosen or not rejected:
            stats["skipped_empty"] += 1
            continue
        if chosen == rejected:
            stats["skipped_same_content"] += 1
            continue
        if difflib.SequenceMatcher(None, chosen, rejected).ratio() > SIMILARITY_LIMIT:
            if degrade:
                rejected = degrade_rejected(rejected, rng)
                stats["augmented_too_similar"] += 1
            else:
                stats["too_similar_kept"] += 1
        pairs.append(
            {
                "instruction": instruction,
                "input": "",
                "chosen": chosen,
                "rejected": rejected,
                "rule": rule,
                "impedance_chosen": impedance(winner),
                "impedance_rejected": impedance(loser),
            }
        )
    return pairs, stats


def dpo_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta: float = DPO_BETA):
    """DPO: mean of -log sigmoid(beta * [(log pi(y_w|x) - log ref(y_w|x)) - (log pi(y_l|x) - log ref(y_l|x))]).

    Arguments are 1-D torch tensors of sequence log-probabilities (one entry per pair); ``beta > 0``.
    """
    import torch

    check_positive("beta", beta)
    tensors = {
        "policy_chosen": policy_chosen,
        "policy_rejected": policy_rejected,
        "reference_chosen": reference_chosen,
        "reference_rejected": reference_rejected,
    }
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor) or t.ndim != 1 or t.numel() == 0:
            raise fail(name, t, "a non-empty 1-D torch tensor of sequence log-probabilities")
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        raise ValueError(
            f"policy_chosen, policy_rejected, reference_chosen, reference_rejected: expected the same "
            f"length (one entry per pair), got {shapes}"
        )
    margin = (policy_chosen - reference_chosen) - (policy_rejected - reference_rejected)
    return -torch.nn.functional.logsigmoid(beta * margin).mean()
