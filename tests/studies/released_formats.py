"""Small synthetic releases in the file formats published judge studies use, written from a seeded generator,
and each study's number computed independently (scipy, scikit-learn, plain numpy) from what the generator
drew -- never through judgelab.

The formats, as the publishers lay them out:

- **G-Eval** (nlpyang/geval ``results/*.json``, read by its ``meta_eval_summeval.py``): one JSON list per
  criterion, each record ``doc_id``, ``system_id``, ``scores`` (the human ratings, one per criterion) and
  ``all_responses`` (the judge's n sampled answers as text). Here on a Topical-Chat-style dialogue set:
  naturalness, coherence and engagingness on 1-3, groundedness on 0-1; answers such as "2",
  "Coherence: 3", a rationale with the score last, and unreadable ones.
- **Three-class pairwise test set**: one record per pair with three annotators' labels (0 = tie, 1 = the
  first response is better, 2 = the second) and the judge's raw answer ("1\\n\\nReason: ...", "Tie",
  "Output (b)", "[[A]]", or an answer that names no winner).
- **MT-Bench human judgments** (the lmsys/mt_bench_human_judgments layout): one record per vote,
  ``question_id``, ``model_a``, ``model_b``, ``winner`` (model_a / model_b / tie / tie (bothbad)),
  ``judge`` (``expert_<k>``, ``author_<k>`` or ``gpt4_pair``) and ``turn`` (1 or 2); the same model pair
  appears in either order across votes. One file per split (``human.jsonl``, ``gpt4_pair.jsonl``).
- **JudgeBench outputs** (ScalerLab/JudgeBench ``outputs/*.jsonl``): ``pair_id``, ``label`` ("A>B" or
  "B>A") and ``judgments``: two records, the second judged with the responses swapped, each with a
  ``decision`` ("A>B", "B>A", "A=B" or null) in the labels as shown.
- **Chosen/rejected with a vote per order**: ``id``, ``chosen``, ``rejected`` and the judge's vote with
  the chosen response shown first and with it shown second, each +1 (the response shown first is better),
  -1 (the second) or 0 (a tie).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps
from sklearn import metrics as skm

# ------------------------------------------------------------------------------------------------ G-Eval

GEVAL_SCALES = {"naturalness": (1, 3), "coherence": (1, 3), "engagingness": (1, 3), "groundedness": (0, 1)}
N_SAMPLES = 20


def _geval_answer(rng: np.random.Generator, criterion: str, value: int) -> str:
    form = rng.integers(5)
    if form == 0:
        return str(value)
    if form == 1:
        return f"{criterion.capitalize()}: {value}"
    if form == 2:
        return f"The response follows from the context and stays on topic. Score: {value}"
    if form == 3:
        return f" {value}\n\nThe reply is mostly fine."
    return f"- {criterion.capitalize()} ({GEVAL_SCALES[criterion][0]}-{GEVAL_SCALES[criterion][1]}): {value}"


def write_geval(folder: Path, seed: int, n_dialogues: int = 12, n_systems: int = 5) -> dict[str, dict[str, float]]:
    """One ``gpt4_<criterion>_detailed.json`` per criterion; returns, per criterion, the turn-level Spearman
    and Kendall of the mean of the samples (an unreadable sample counts 0, G-Eval's script) with the human
    rating, computed by scipy from the values the generator wrote."""
    rng = np.random.default_rng(seed)
    expected: dict[str, dict[str, float]] = {}
    humans = {(d, s): {c: float(np.round(rng.uniform(lo, hi) * 3) / 3) if hi > 1 else float(rng.integers(0, 2))
                       for c, (lo, hi) in GEVAL_SCALES.items()}
              for d in range(n_dialogues) for s in range(n_systems)}
    for criterion, (low, high) in GEVAL_SCALES.items():
        records, means, gold = [], [], []
        for (doc, system), scores in humans.items():
            truth = scores[criterion]
            answers, values = [], []
            for _ in range(N_SAMPLES):
                if rng.random() < 0.07:  # an answer naming no score: G-Eval counts it 0
                    answers.append("I cannot rate this response without more context.")
                    values.append(0.0)
                    continue
                value = int(np.clip(round(truth + rng.normal(0, 0.8)), low, high))
                answers.append(_geval_answer(rng, criterion, value))
                values.append(float(value))
            records.append({"doc_id": f"dialogue-{doc}", "system_id": f"sys{system}", "scores": scores,
                            "system_output": f"reply {doc}/{system}", "all_responses": answers})
            means.append(float(np.mean(values)))
            gold.append(truth)
        (folder / f"gpt4_{criterion}_detailed.json").write_text(json.dumps(records), encoding="utf-8")
        expected[criterion] = {"spearman": float(sps.spearmanr(means, gold)[0]),
                               "kendall": float(sps.kendalltau(means, gold)[0]), "n": len(means)}
    return expected


# ------------------------------------------------------------------------- three-class pairwise test set

_ANSWERS = {
    0: ["Tie", "Tie\n\nReason: both responses answer the question equally well.", "[[C]]"],
    1: ["1\n\nReason: the first response follows the instruction.", "Output (a)", "[[A]]",
        "Assistant A is better."],
    2: ["2\n\nReason: the second response is more complete.", "Output (b)", "[[B]]", "Assistant B is better."],
}
_UNREADABLE = ["Both responses have merits and flaws.", "I cannot decide.", ""]


def write_three_class(folder: Path, seed: int, n: int = 150) -> dict[str, Any]:
    """``testset.json``; returns accuracy and macro precision/recall/F1 of the judge (an unreadable answer
    counting as a tie) against the annotators' plurality (a three-way split counting as a tie), by
    scikit-learn on the labels the generator drew."""
    rng = np.random.default_rng(seed)
    records, judge, majority = [], [], []
    for idx in range(n):
        truth = int(rng.choice(3, p=[0.25, 0.4, 0.35]))
        votes = [truth if rng.random() < 0.7 else int(rng.integers(3)) for _ in range(3)]
        counts = np.bincount(votes, minlength=3)
        majority.append(int(np.argmax(counts)) if counts.max() > 1 else 0)
        if rng.random() < 0.08:
            answer, verdict = _UNREADABLE[int(rng.integers(len(_UNREADABLE)))], 0
        else:
            verdict = truth if rng.random() < 0.65 else int(rng.integers(3))
            options = _ANSWERS[verdict]
            answer = options[int(rng.integers(len(options)))]
        judge.append(verdict)
        records.append({"idx": idx, "instruction": f"task {idx}", "response1": "first", "response2": "second",
                        "annotator1": votes[0], "annotator2": votes[1], "annotator3": votes[2],
                        "judge_output": answer})
    (folder / "testset.json").write_text(json.dumps(records), encoding="utf-8")
    y_true, y_pred = np.array(majority), np.array(judge)
    p, r, f, _ = skm.precision_recall_fscore_support(y_true, y_pred, labels=[0, 1, 2], average="macro",
                                                     zero_division=0)
    return {"accuracy": float(skm.accuracy_score(y_true, y_pred)), "precision": float(p), "recall": float(r),
            "f1": float(f), "n": n}


# ------------------------------------------------------------------------------- MT-Bench human judgments

_MODELS = ["alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b-v1.2"]
_VOTES = ["model_a", "model_b", "tie", "tie (bothbad)"]


def write_mt_bench(folder: Path, seed: int, n_questions: int = 20) -> dict[tuple[int, str], tuple[int, int]]:
    """``human.jsonl`` and ``gpt4_pair.jsonl``; returns {(turn, "with tie" | "without tie"): (agree, total)},
    GPT-4's vote paired with every expert vote on the same question, model pair and turn, the pair ordered
    by name (a vote listing it the other way round reverted), "tie" and "tie (bothbad)" agreeing -- counted
    by plain Python from the generator's votes."""
    rng = np.random.default_rng(seed)
    human, gpt4 = [], []
    counts: dict[tuple[int, str], list[int]] = {(t, m): [0, 0] for t in (1, 2) for m in ("with tie", "without tie")}
    for q in range(81, 81 + n_questions):
        pairs = {tuple(sorted(rng.choice(_MODELS, 2, replace=False))) for _ in range(3)}
        for first, second in sorted(pairs):
            for turn in (1, 2):
                preferred = rng.choice(4, p=[0.4, 0.35, 0.15, 0.1])  # in the sorted order's labels
                g = int(preferred) if rng.random() < 0.7 else int(rng.integers(4))
                shown = (first, second) if rng.random() < 0.5 else (second, first)
                gpt4.append(_vote(q, shown, (first, second), g, "gpt4_pair", turn))
                experts = rng.choice(6, size=int(rng.integers(1, 4)), replace=False)
                for e in sorted(int(x) for x in experts):
                    h = int(preferred) if rng.random() < 0.75 else int(rng.integers(4))
                    shown = (first, second) if rng.random() < 0.5 else (second, first)
                    human.append(_vote(q, shown, (first, second), h, f"expert_{e}", turn))
                    for mode in ("with tie", "without tie"):
                        if mode == "without tie" and (g >= 2 or h >= 2):
                            continue
                        counts[(turn, mode)][1] += 1
                        counts[(turn, mode)][0] += (g == h) or (g >= 2 and h >= 2)
                if rng.random() < 0.3:  # an author's vote: not an expert, left out of the agreement
                    human.append(_vote(q, (first, second), (first, second), int(rng.integers(4)), "author_0", turn))
    for name, votes in (("human", human), ("gpt4_pair", gpt4)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(v) + "\n" for v in votes), encoding="utf-8")
    return {k: (a, t) for k, (a, t) in counts.items()}


def _vote(question: int, shown: tuple[str, str], ordered: tuple[str, str], vote: int, judge: str,
          turn: int) -> dict[str, Any]:
    """One vote as released: ``vote`` indexes model_a/model_b/tie/tie (bothbad) in the ORDERED pair's labels,
    written in the labels of the pair as ``shown`` in this record."""
    winner = _VOTES[vote]
    if vote < 2 and shown != ordered:
        winner = _VOTES[1 - vote]
    return {"question_id": question, "model_a": shown[0], "model_b": shown[1], "winner": winner, "judge": judge,
            "turn": turn, "conversation_a": [], "conversation_b": []}


# ------------------------------------------------------------------------------------- JudgeBench outputs

def _flip(decision: str | None) -> str | None:
    return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision) if decision is not None else None


def write_judgebench(folder: Path, seed: int, n: int = 120) -> dict[str, float]:
    """``outputs.jsonl``; returns JudgeBench's two-order accuracy (each order votes +1 / -1 / 0, a pair is
    correct when the sum is positive, every pair in the denominator) and the first order's accuracy."""
    rng = np.random.default_rng(seed)
    lines, correct, first_correct = [], 0, 0
    for k in range(n):
        label = ["A>B", "B>A"][int(rng.integers(2))]
        # the first judgment in the pair's labels, the second in the labels as shown (responses swapped)
        first = [label, _flip(label), "A=B", None][rng.choice(4, p=[0.6, 0.22, 0.1, 0.08])]
        second = [_flip(label), label, "A=B", None][rng.choice(4, p=[0.5, 0.3, 0.12, 0.08])]
        judgments = [None if d is None and rng.random() < 0.5 else {"judgment": {"response": "..."}, "decision": d}
                     for d in (first, second)]
        lines.append(json.dumps({"pair_id": f"pair-{k}", "source": "mmlu-pro", "label": label,
                                 "judge_name": "arena_hard", "judgments": judgments}))
        votes = sum((d == label) - (d == _flip(label)) for d in (first, _flip(second)))
        correct += votes > 0
        first_correct += first == label
    (folder / "outputs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"accuracy_net": correct / n, "accuracy_original": first_correct / n, "n": n}


# ------------------------------------------------------------------------- chosen/rejected, votes +1/-1/0

def write_chosen_rejected(folder: Path, seed: int, n: int = 100) -> dict[str, float]:
    """``votes.jsonl``; returns the accuracy in each order (a vote for the chosen response is correct, a tie
    is not) and the share of items where the two votes name the same response (ties agreeing), by numpy."""
    rng = np.random.default_rng(seed)
    votes = rng.choice([1, -1, 0], size=(n, 2), p=[0.55, 0.3, 0.15])  # in the labels as shown
    # shown first in column 0 is the chosen response; in column 1 the rejected one: a vote for it is -1
    chosen_first = votes[:, 0] == 1
    chosen_second = votes[:, 1] == -1
    same = np.where(votes[:, 0] == 0, votes[:, 1] == 0, votes[:, 1] == -votes[:, 0])
    rows = [{"id": f"p{k}", "prompt": "...", "chosen": "good", "rejected": "bad",
             "vote_chosen_first": int(votes[k, 0]), "vote_rejected_first": int(votes[k, 1])} for k in range(n)]
    pd.DataFrame(rows).to_json(folder / "votes.jsonl", orient="records", lines=True)
    return {"accuracy_original": float(chosen_first.mean()), "accuracy_swapped": float(chosen_second.mean()),
            "position_consistency": float(same.mean()), "n": n}
