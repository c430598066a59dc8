"""Deterministic verdict rules: totals, tie-breaks, caps, thresholds, swap consolidation.

Each function implements one seed's rule verbatim and is pure, so the library (never the
judge) decides totals, winners and verdicts, and hand-made cases can test every branch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

VERDICTS_VERSION = "1"


# ---------------------------------------------------------------- chess commentary (seed 000)
@dataclass(frozen=True)
class PairwiseTotals:
    total_a: int
    total_b: int
    winner: str  # "A", "B" or "TIE"
    decided_by: str  # "total", or the tie-break criterion, or "tie"


def chess_winner(
    scores_a: Mapping[str, int], scores_b: Mapping[str, int], tie_break: Sequence[str]
) -> PairwiseTotals:
    """Seed 000: total = sum of the six criteria; higher total wins; tie-break cascade, else TIE."""
    if set(scores_a) != set(scores_b):
        raise ValueError("both candidates must be scored on the same criteria")
    total_a, total_b = sum(scores_a.values()), sum(scores_b.values())
    if total_a != total_b:
        return PairwiseTotals(total_a, total_b, "A" if total_a > total_b else "B", "total")
    for criterion in tie_break:
        if scores_a[criterion] != scores_b[criterion]:
            return PairwiseTotals(total_a, total_b, "A" if scores_a[criterion] > scores_b[criterion] else "B", criterion)
    return PairwiseTotals(total_a, total_b, "TIE", "tie")


# ---------------------------------------------------------------- unified judge (seed 001)
def extraction_f1(output: Iterable[str], expected: Iterable[str]) -> dict[str, float]:
    """Set precision, recall and F1 of extracted items (case- and space-normalised).

    Conventions for empty sets (the seed leaves them open): both empty -> P = R = F1 = 1
    (nothing to extract, nothing extracted); output empty, expected not -> P = R = F1 = 0;
    output non-empty, expected empty -> P = 0, R = 1, F1 = 0.
    """
    out = {_norm(x) for x in output if _norm(x)}
    exp = {_norm(x) for x in expected if _norm(x)}
    if not out and not exp:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0, "n_output": 0, "n_expected": 0, "n_overlap": 0}
    overlap = len(out & exp)
    precision = overlap / len(out) if out else 0.0
    recall = overlap / len(exp) if exp else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "n_output": len(out),
        "n_expected": len(exp),
        "n_overlap": overlap,
    }


def _norm(x: Any) -> str:
    return " ".join(str(x).casefold().split())


def extraction_credit_band(f1: float) -> str:
    """The seed's F1 bands: >= 0.8 full, >= 0.5 partial, else low (reported, score is F1 x 40)."""
    return "full" if f1 >= 0.8 else "partial" if f1 >= 0.5 else "low"


def classification_match(output: str, expected: str, separators: str = "/:>") -> str:
    """EXACT when labels are equal (case-insensitive); PARTIAL when hierarchical labels
    (``category/sub``) share the category but not the sub-label; NONE otherwise."""
    o, e = _norm(output), _norm(expected)
    if o == e:
        return "EXACT"
    cat_o, cat_e = _category(o, separators), _category(e, separators)
    if cat_o is not None and cat_o == cat_e:
        return "PARTIAL"
    return "NONE"


def _category(label: str, separators: str) -> str | None:
    for sep in separators:
        if sep in label:
            return label.split(sep, 1)[0].strip()
    return None


CLASSIFICATION_POINTS = {"EXACT": 40, "PARTIAL": 20, "NONE": 0}


def unified_verdict(correctness: float, rule_compliance: float, reasoning: float) -> tuple[str, float, str]:
    """Seed 001's ``calculate_verdict``, verbatim: (verdict, total, reason)."""
    total = correctness + rule_compliance + reasoning
    if correctness == 0:
        return "FAIL", min(total, 60), "Incorrect output"
    if total >= 70:
        return "PASS", total, "Meets threshold"
    return "FAIL", total, "Below threshold"


# ---------------------------------------------------------------- reference judge (seed 003)
def reference_verdict(correctness: int, completeness: int) -> str:
    """Seed 003: match if correctness = 5 and completeness >= 4; partial_match if both >= 3; else mismatch."""
    if correctness == 5 and completeness >= 4:
        return "match"
    if correctness >= 3 and completeness >= 3:
        return "partial_match"
    return "mismatch"


def reference_verdict_degraded(correctness: int) -> str:
    """Seed 003's degraded variant (one axis, two verdicts): match iff correctness = 5.

    The seed names only the two labels; 5 is the correctness condition of its full "match" rule.
    """
    return "match" if correctness == 5 else "mismatch"


# ---------------------------------------------------------------- generic judges (seed 002)
def weighted_mean(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Weighted mean of criterion scores (on the criterion scale); weights need not sum to 1."""
    total_weight = sum(weights[c] for c in scores)
    if total_weight <= 0:
        raise ValueError("criterion weights sum to zero")
    return sum(scores[c] * weights[c] for c in scores) / total_weight


def weighted_vote(winners: Mapping[str, str], weights: Mapping[str, float]) -> str:
    """Winner of a weighted per-criterion vote (TIE votes count for neither)."""
    a = sum(weights[c] for c, w in winners.items() if w == "A")
    b = sum(weights[c] for c, w in winners.items() if w == "B")
    if math.isclose(a, b):
        return "TIE"
    return "A" if a > b else "B"


def combine_swapped_passes(first: Any, second: Any) -> dict[str, Any]:
    """Seed 002's position-swap rule over two passes whose winners are in ORIGINAL labels.

    Passes agree -> that winner with the mean of the two confidences; passes disagree -> TIE with
    confidence 0.5. Each pass is a mapping or object with ``winner`` and ``confidence``.
    A pass with a missing winner (unscored) makes the result unscored: winner None.
    """
    w1, c1 = _winner_conf(first)
    w2, c2 = _winner_conf(second)
    result: dict[str, Any] = {"first_pass_winner": w1, "second_pass_winner": w2}
    if w1 is None or w2 is None:
        return {**result, "winner": None, "confidence": None, "consistent": None}
    if w1 == w2:
        conf = None if c1 is None or c2 is None else (c1 + c2) / 2
        return {**result, "winner": w1, "confidence": conf, "consistent": True}
    return {**result, "winner": "TIE", "confidence": 0.5, "consistent": False}


def _winner_conf(p: Any) -> tuple[str | None, float | None]:
    get = p.get if isinstance(p, Mapping) else lambda k: getattr(p, k, None)
    winner, conf = get("winner"), get("confidence")
    if winner is not None and winner not in ("A", "B", "TIE"):
        raise ValueError(f"winner {winner!r} must be 'A', 'B' or 'TIE' (original labels)")
    if conf is not None and (isinstance(conf, float) and math.isnan(conf)):
        conf = None
    return winner, None if conf is None else float(conf)


def swap_label(label: str | None) -> str | None:
    """Map a label seen in a swapped prompt back to the original candidate."""
    return {"A": "B", "B": "A"}.get(label, label) if label is not None else None
