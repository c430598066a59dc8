"""Learn-then-Test thresholds: keep a judge's verdict only where it is confident enough, with a guarantee.

Given calibration items with the judge's confidence and whether its verdict matched gold,
:func:`ltt_threshold` finds the lowest confidence threshold λ such that, with probability at least
1 − δ over the calibration draw, the judge's disagreement with gold on the items it keeps
(confidence >= λ) is at most α (Angelopoulos et al. 2021, "Learn then test"; applied to LLM judges by
Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025). Each candidate λ is a hypothesis
H0(λ): risk(λ) > α, tested with the exact binomial p-value P(Binomial(n_kept, α) <= errors) (for a 0/1
loss this is the Bentkus bound LTT and MAPIE use, the smaller of it and Hoeffding's). Hypotheses are
tested in a fixed sequence from the most to the least confident λ, each at level δ, stopping at the
first that is not rejected; this controls the family-wise error at δ. The sequence starts at the most
confident λ that keeps enough items to be rejectable at all (``ceil(log δ / log(1 − α))`` items
with no error), a choice that looks at confidences only, never at the labels.

:func:`ltt_cascade` does the same for a cascade of judges (cheap → strong → … → human): a
configuration keeps an item at the first tier whose confidence reaches its threshold and sends the
rest to humans; the risk is the disagreement on everything the judges keep. Thresholds of the later
tiers range over a small grid (Bonferroni over the grid, δ split equally), the first tier's over a
fixed sequence; among the configurations whose risk is certified, the one that keeps the most items
(then uses the later tiers least) is chosen. The guarantee holds for new items exchangeable with the
calibration items.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats.corrected.ppi import CorrectionError

__all__ = ["CascadeCalibration", "LttResult", "binomial_p_value", "cascade_decisions", "ltt_cascade", "ltt_threshold",
           "min_kept_for_rejection"]

NEVER = math.inf  # the threshold of a tier that keeps nothing


def binomial_p_value(errors: np.ndarray | int, kept: np.ndarray | int, alpha: float) -> np.ndarray:
    """P(Binomial(kept, alpha) <= errors): small when the observed error rate is well below alpha (1 if kept=0)."""
    errors, kept = np.asarray(errors, dtype=float), np.asarray(kept, dtype=float)
    with np.errstate(invalid="ignore"):
        p = stats.binom.cdf(errors, kept, alpha)
    return np.where(kept > 0, p, 1.0)


def min_kept_for_rejection(alpha: float, delta: float) -> int:
    """The fewest kept items with which H0 (risk > alpha) can be rejected at level delta (zero errors)."""
    return math.ceil(math.log(delta) / math.log(1 - alpha))


def _check(alpha: float, delta: float) -> None:
    if not 0 < alpha < 1 or not 0 < delta < 1:
        raise CorrectionError(f"alpha and delta must be in (0, 1), not alpha={alpha}, delta={delta}")


@dataclass(frozen=True)
class LttResult:
    """A certified threshold (``inf``: no threshold is certified, escalate everything) and its evidence."""

    threshold: float
    alpha: float
    delta: float
    n_calibration: int
    n_kept: int
    n_errors_kept: int
    hypotheses: pd.DataFrame  # threshold, n_kept, n_errors, risk, p_value, rejected, in the order tested

    @property
    def coverage(self) -> float:
        """Share of calibration items the judge keeps at the threshold."""
        return self.n_kept / self.n_calibration if self.n_calibration else float("nan")

    @property
    def risk(self) -> float:
        """Disagreement on the kept calibration items (NaN when nothing is kept)."""
        return self.n_errors_kept / self.n_kept if self.n_kept else float("nan")


def _arrays(confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray) -> tuple[np.ndarray, ...]:
    conf = np.asarray(confidence, dtype=float)
    ok = np.asarray(correct, dtype=float)
    if conf.shape != ok.shape or conf.ndim != 1:
        raise CorrectionError(f"confidence and correct must be 1-D of one length, not {conf.shape} and {ok.shape}")
    if np.isnan(ok).any() or not np.isin(ok, (0.0, 1.0)).all():
        raise CorrectionError("correct must be 0/1 (True/False) for every calibration item")
    return conf, ok


def ltt_threshold(confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, *, alpha: float,
                  delta: float) -> LttResult:
    """The lowest confidence threshold whose disagreement on kept items is <= alpha w.p. >= 1 − delta.

    ``confidence``: the judge's confidence per calibration item (NaN: never kept); ``correct``: whether
    its verdict matched gold. See the module docstring for the procedure.
    """
    _check(alpha, delta)
    conf, ok = _arrays(confidence, correct)
    levels = np.unique(conf[np.isfinite(conf)])[::-1]
    wrong = 1 - ok
    rows = []
    chosen, kept_at, errors_at = NEVER, 0, 0
    need = min_kept_for_rejection(alpha, delta)
    for level in levels:
        keep = conf >= level
        n_kept, n_err = int(keep.sum()), int(wrong[keep].sum())
        if n_kept < need and level != levels[-1]:
            continue  # not rejectable yet: a label-free choice of where the sequence starts
        p = float(binomial_p_value(n_err, n_kept, alpha))
        rejected = p <= delta
        rows.append({"threshold": float(level), "n_kept": n_kept, "n_errors": n_err, "risk": n_err / n_kept,
                     "p_value": p, "rejected": rejected})
        if not rejected:
            break
        chosen, kept_at, errors_at = float(level), n_kept, n_err
    table = pd.DataFrame(rows, columns=["threshold", "n_kept", "n_errors", "risk", "p_value", "rejected"])
    return LttResult(chosen, alpha, delta, len(conf), kept_at, errors_at, table)


@dataclass(frozen=True)
class CascadeCalibration:
    """Certified thresholds per tier of a cascade (``inf``: the tier keeps nothing) and what they do."""

    thresholds: tuple[float, ...]
    alpha: float
    delta: float
    n_calibration: int
    kept_per_tier: tuple[int, ...]
    n_errors_kept: int
    certified: bool
    hypotheses: pd.DataFrame

    @property
    def n_kept(self) -> int:
        return sum(self.kept_per_tier)

    @property
    def coverage(self) -> float:
        return self.n_kept / self.n_calibration if self.n_calibration else float("nan")

    @property
    def to_human(self) -> float:
        return 1 - self.coverage

    @property
    def risk(self) -> float:
        return self.n_errors_kept / self.n_kept if self.n_kept else float("nan")


def cascade_decisions(confidences: Sequence[np.ndarray], thresholds: Sequence[float]) -> np.ndarray:
    """Per item, the tier that keeps it (0, 1, ...) or -1 when every tier escalates (to humans)."""
    tier = np.full(len(confidences[0]), -1)
    for k in range(len(confidences) - 1, -1, -1):
        with np.errstate(invalid="ignore"):
            keep = np.asarray(confidences[k], dtype=float) >= thresholds[k]
        tier[keep] = k
    return tier


def _grid(conf: np.ndarray, max_levels: int) -> list[float]:
    levels = np.unique(conf[np.isfinite(conf)])
    if len(levels) > max_levels:
        levels = np.unique(np.quantile(conf[np.isfinite(conf)], np.linspace(0, 1, max_levels), method="lower"))
    return [NEVER, *sorted(levels.tolist(), reverse=True)]


def ltt_cascade(confidences: Sequence[Sequence[float] | np.ndarray], correct: Sequence[Sequence[bool] | np.ndarray],
                *, alpha: float, delta: float, max_levels: int = 8, max_first_levels: int = 100) -> CascadeCalibration:
    """Certified thresholds for tiers 0..K−1 (tier k's confidence and correctness per calibration item).

    See the module docstring. The first tier's thresholds are its distinct confidences, or
    ``max_first_levels`` quantiles of them; the later tiers' ``max_levels`` quantiles. With one tier and
    few distinct confidences this is :func:`ltt_threshold`.
    """
    _check(alpha, delta)
    if not confidences or len(confidences) != len(correct):
        raise CorrectionError("give one confidence array and one correctness array per tier")
    pairs = [_arrays(c, ok) for c, ok in zip(confidences, correct, strict=True)]
    n = len(pairs[0][0])
    if any(len(c) != n for c, _ in pairs):
        raise CorrectionError("every tier needs a confidence and a correctness value for every calibration item")
    confs = [c for c, _ in pairs]
    wrong = np.stack([1 - ok for _, ok in pairs])
    later = list(itertools.product(*[_grid(c, max_levels) for c in confs[1:]]))
    level = delta / len(later)
    need = min_kept_for_rejection(alpha, level)
    first_levels = _grid(confs[0], max_first_levels)
    rows = []
    best: tuple[tuple[float, ...], tuple[int, ...], int] | None = None
    best_key: tuple[int, int] | None = None
    for path, rest in enumerate(later):
        for lam in first_levels:
            thresholds = (lam, *rest)
            tier = cascade_decisions(confs, thresholds)
            kept = tier >= 0
            n_kept = int(kept.sum())
            n_err = int(wrong[tier[kept], np.flatnonzero(kept)].sum()) if n_kept else 0
            if n_kept < need and lam != first_levels[-1]:
                continue
            p = float(binomial_p_value(n_err, n_kept, alpha))
            rejected = p <= level
            rows.append({"path": path, **{f"threshold_{k}": t for k, t in enumerate(thresholds)}, "n_kept": n_kept,
                         "n_errors": n_err, "risk": n_err / n_kept if n_kept else np.nan, "p_value": p,
                         "level": level, "rejected": rejected})
            if not rejected:
                break
            per_tier = tuple(int((tier == k).sum()) for k in range(len(confs)))
            key = (n_kept, -sum(per_tier[1:]))
            if best_key is None or key > best_key:
                best, best_key = (thresholds, per_tier, n_err), key
    table = pd.DataFrame(rows)
    if best is None:
        return CascadeCalibration(tuple(NEVER for _ in confs), alpha, delta, n, tuple(0 for _ in confs), 0, False,
                                  table)
    thresholds, per_tier, n_err = best
    return CascadeCalibration(thresholds, alpha, delta, n, per_tier, n_err, True, table)
