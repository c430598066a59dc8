"""The Alt-Test: can this judge replace the human annotators? (Calderon, Reichart & Dror, ACL 2025)

Leave one annotator out at a time. On every item annotator j rated (and at least one other annotator
rated too), score how well the judge and how well annotator j agree with the remaining annotators
(``scoring``: "accuracy" -- the share of the others giving the same label -- for labels, "neg_rmse" --
minus the root mean squared difference -- for scores, or a function ``f(value, others) -> float``). The
judge *wins* item i if its score is at least annotator j's (W_f = 1), the annotator wins if theirs is
at least the judge's (W_h = 1; ties count for both). Annotator j's test is a one-sided one-sample t-test
of H0: mean(W_h − W_f) >= ε against "the judge is at most ε worse" (ε: the cost-benefit margin the
judge is granted, 0.1 for crowd workers, 0.15 for skilled annotators, 0.2 for experts). The p-values
of all annotators are corrected with the Benjamini-Yekutieli procedure at level ``fdr`` (0.05); the
**winning rate** is the share of annotators whose null is rejected, and the judge passes when it is at
least 0.5. The **advantage probability** (the mean of W_f over annotators) estimates how often the judge
is as good as a random annotator, for comparing judges. As in the paper, items need at least
``min_annotators_per_item`` (2) annotators and an annotator needs ``min_items_per_annotator`` (30)
items to be tested; fewer are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.judgments import distinct_text, is_scored
from judgelab.stats.corrected.ppi import CorrectionError
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["Scoring", "alt_test", "benjamini_yekutieli", "scoring_function"]

Scoring = Literal["accuracy", "neg_rmse"] | Callable[[Any, Sequence[Any]], float]


def _accuracy(value: Any, others: Sequence[Any]) -> float:
    return float(np.mean([value == o for o in others]))


def _neg_rmse(value: Any, others: Sequence[Any]) -> float:
    return -float(np.sqrt(np.mean([(float(value) - float(o)) ** 2 for o in others])))


def scoring_function(scoring: Scoring) -> Callable[[Any, Sequence[Any]], float]:
    """The alignment score of a value against the other annotators' values."""
    if callable(scoring):
        return scoring
    table = {"accuracy": _accuracy, "neg_rmse": _neg_rmse}
    if scoring not in table:
        raise CorrectionError(f"scoring must be 'accuracy', 'neg_rmse' or a function, not {scoring!r}")
    return table[scoring]


def benjamini_yekutieli(p_values: Sequence[float], fdr: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at false-discovery rate ``fdr``."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if not m:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    below = p[order] <= np.arange(1, m + 1) / m * fdr / harmonic
    rejected = np.zeros(m, dtype=bool)
    if below.any():
        rejected[order[: int(np.flatnonzero(below).max()) + 1]] = True
    return rejected


def _wide(table: pd.DataFrame, raters: list[str], value: str | None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Item x rater values of the scored rows, and each rater's count of unscored rows left out."""
    rows = table[table["judge"].isin(raters)]
    missing = [r for r in raters if r not in set(rows["judge"])]
    if missing:
        judges = sorted(distinct_text(table["judge"]))
        raise CorrectionError(f"rater(s) {missing} have no rows in the table (judges: {', '.join(judges[:12])})")
    if value is None:
        scored = rows[is_scored(rows)]
        value = next((c for c in ("score", "verdict", "winner") if scored[c].notna().any()), None)
        if value is None:
            raise CorrectionError("no scored row has a score, verdict or winner; name the column with value=")
    unscored = {r: int((~is_scored(rows[rows["judge"] == r])).sum()) for r in raters}
    scored = rows[is_scored(rows)]
    dup = scored.duplicated(subset=["item_id", "judge"], keep=False)
    if dup.any():
        first = scored.loc[dup, ["item_id", "judge"]].iloc[0].tolist()
        raise CorrectionError(f"{int(dup.sum())} scored rows share an item and rater (first {first}); one rating "
                              "per rater and item: filter to one criterion, condition and repeat")
    values = scored[value].astype(object).where(scored[value].notna(), None)
    wide = scored.assign(_v=values).pivot(index="item_id", columns="judge", values="_v")
    return wide.reindex(columns=raters), unscored


def alt_test(
    table: pd.DataFrame,
    *,
    judge: str,
    annotators: Sequence[str],
    epsilon: float = 0.2,
    scoring: Scoring = "accuracy",
    value: str | None = None,
    fdr: float = 0.05,
    min_annotators_per_item: int = 2,
    min_items_per_annotator: int = 30,
) -> pd.DataFrame:
    """The Alt-Test of ``judge`` against ``annotators`` (rows of a judgments table; see the module docstring).

    Returns one ``alt_test_annotator`` row per tested annotator (estimate: the judge's advantage
    probability against them, with a t interval; ``p_value``: the one-sided t-test; ``rejected`` after
    Benjamini-Yekutieli; ``annotator_advantage``: mean W_h), then ``winning_rate`` (the note says PASSED
    or FAILED) and ``advantage_probability``. Unscored rows are left out of the ratings (counted per rater).
    """
    if len(annotators) < 2:
        raise CorrectionError("the Alt-Test needs at least 2 annotators (the paper recommends 3 or more)")
    if not 0 <= epsilon < 1:
        raise CorrectionError(f"epsilon must be in [0, 1), not {epsilon}")
    score = scoring_function(scoring)
    annotators = list(annotators)
    wide, unscored = _wide(table, [judge, *annotators], value)
    has_judge = wide[judge].notna()
    n_humans = wide[annotators].notna().sum(axis=1)
    keep = has_judge & (n_humans >= min_annotators_per_item)
    dropped_items = int((~keep).sum())
    wide = wide[keep]
    tested, skipped = [], []
    for person in annotators:
        items = wide[wide[person].notna()]
        if len(items) < min_items_per_annotator:
            skipped.append(f"{person} ({len(items)} items)")
            continue
        w_f, w_h = np.empty(len(items)), np.empty(len(items))
        for k, (_, row) in enumerate(items.iterrows()):
            others = [row[o] for o in annotators if o != person and row[o] is not None and not _na(row[o])]
            s_f, s_h = score(row[judge], others), score(row[person], others)
            w_f[k], w_h[k] = float(s_f >= s_h), float(s_h >= s_f)
        d = w_h - w_f
        note = ""
        if np.ptp(d) == 0:
            p = 0.0 if d[0] < epsilon else 1.0
            note = "every item gives the same W_h − W_f: the t-test is degenerate, p set to 0 or 1 by its sign"
        else:
            p = float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        tested.append((person, w_f, w_h, p, note))
    if not tested:
        raise CorrectionError(f"no annotator has {min_items_per_annotator} items shared with the judge and another "
                              f"annotator (skipped: {', '.join(skipped)}); lower min_items_per_annotator")
    rejected = benjamini_yekutieli([t[3] for t in tested], fdr)
    scoring_name = scoring if isinstance(scoring, str) else getattr(scoring, "__name__", "custom")
    method = (f"Alt-Test (Calderon et al. 2025): leave-one-annotator-out, scoring={scoring_name}, ε={epsilon}; "
              f"one-sided one-sample t-test of mean(W_h − W_f) < ε; Benjamini-Yekutieli at FDR {fdr}")
    rows = []
    base_note = join_notes(
        f"{dropped_items} item(s) without a judge value or with fewer than {min_annotators_per_item} annotators "
        "left out" if dropped_items else "",
        f"annotators skipped for fewer than {min_items_per_annotator} items: {', '.join(skipped)}" if skipped else "",
        "unscored rows left out: " + ", ".join(f"{r} {c}" for r, c in unscored.items() if c)
        if any(unscored.values()) else "")
    for (person, w_f, w_h, p, note), rej in zip(tested, rejected, strict=True):
        n = len(w_f)
        half = float(stats.t.ppf(0.975, n - 1) * np.std(w_f, ddof=1) / np.sqrt(n)) if n > 1 else np.nan
        rows.append(result_row("alt_test_annotator", float(w_f.mean()), n=n, ci_low=w_f.mean() - half,
                               ci_high=w_f.mean() + half, p_value=p, method=method + "; 95% t interval of W_f",
                               judge=judge, annotator=person, annotator_advantage=float(w_h.mean()),
                               rejected=bool(rej), epsilon=epsilon, note=note))
    winning = float(rejected.mean())
    verdict = "PASSED: the judge can replace the annotators" if winning >= 0.5 else "FAILED"
    rows.append(result_row("winning_rate", winning, n=len(tested), method=method + "; pass at >= 0.5",
                           judge=judge, epsilon=epsilon, note=join_notes(verdict, base_note)))
    rows.append(result_row("advantage_probability", float(np.mean([t[1].mean() for t in tested])), n=len(tested),
                           method="mean over annotators of P(judge at least as aligned as the left-out annotator)",
                           judge=judge, epsilon=epsilon, note=base_note))
    return tidy_frame(rows)


def _na(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
