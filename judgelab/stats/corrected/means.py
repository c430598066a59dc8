"""How good is my system, really? A judge's scores on every item, corrected with gold labels on a few.

:func:`corrected_mean` reads a judgments table holding the judge's rows for every item and gold (or
human) rows for the labelled subset; items without a gold row form the unlabelled set. It returns
the mean gold value (pass rate, mean score, win rate) estimated five ways:

=================  ==================================================================================
``classical``      the mean of the gold labels alone (the judge is ignored)
``ppi``            prediction-powered inference, λ = 1 (:mod:`judgelab.stats.corrected.ppi`)
``ppi++``          PPI with power-tuned λ (never worse than classical asymptotically; an
                   anti-correlated judge gets λ = 0, i.e. the classical estimate, and the row says so)
``rogan_gladen``   binary judge and gold: the pass rate corrected by the judge's sensitivity and
                   specificity, interval carrying their uncertainty (:mod:`judgelab.stats.corrected.rogan_gladen`)
``calibrated``     judge scores mapped to gold by cross-fitted isotonic regression, then PPI; the
                   interval adds the calibrator's own variance (:mod:`judgelab.stats.corrected.calibrated_mean`)
=================  ==================================================================================

``cluster=`` (documents, questions) makes every interval cluster-robust; ``strata=`` estimates per
stratum and combines with the strata's shares of all items (labels may be spread unevenly); ``by=``
repeats everything per system or criterion. Every estimate row reports ``n_labelled``,
``n_unlabelled``, ``effective_n`` (the number of gold labels the classical estimate would need for the
same variance) and ``ess_gain`` (effective_n / n_labelled); a ``judge_gold_correlation`` row per group
shows how much the judge can help, with a warning in its note when it is anti-correlated with gold.

:func:`corrected_difference` is the A/B question: the paired difference of two systems' corrected
means, with the covariance of the two estimates carried by the items (or clusters) they share.

Unscored judge rows (a failed call or parse) follow the named ``unscored=`` policy: ``"exclude"``
(default) leaves those items out of both sets and counts them (``n_unscored_excluded``; the estimate
is then for the items the judge could score), ``"error"`` raises, and a number imputes that judge
value (the correction stays valid: a constant is just a worse prediction, and the gold labels of
labelled items still correct it). An unscored gold row leaves its item unlabelled (``n_gold_unscored``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from judgelab.judgments import distinct_text, is_scored
from judgelab.stats.corrected.calibrated_mean import calibrated_estimate
from judgelab.stats.corrected.ppi import (
    CorrectionError,
    Estimate,
    Sample,
    classical_estimate,
    difference,
    ppi_estimate,
)
from judgelab.stats.corrected.rogan_gladen import RoganGladenInterval, rogan_gladen_estimate
from judgelab.stats.corrected.weighted import weighted_estimate
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["METHODS", "CorrectedInput", "CorrectionError", "Method", "Positive", "UnscoredPolicy", "check_sample",
           "corrected_difference", "corrected_inputs", "corrected_mean", "estimate_method"]

Method = Literal["classical", "ppi", "ppi++", "rogan_gladen", "calibrated"]
METHODS: tuple[str, ...] = ("classical", "ppi", "ppi++", "rogan_gladen", "calibrated")
UnscoredPolicy = Literal["exclude", "error"] | float
Positive = Any  # a label, a collection of labels, or a function of the value array returning booleans

_DESCRIPTIONS = {
    "classical": "mean of the gold labels (judge ignored)",
    "ppi": "PPI (λ = 1): mean judge value on unlabelled items + mean (gold − judge) on labelled items",
    "ppi++": "PPI++ (power-tuned λ, as ppi-python)",
    "rogan_gladen": "Rogan-Gladen pass rate corrected by the judge's sensitivity and specificity",
    "calibrated": "cross-fitted isotonic calibration of judge to gold, then PPI (λ = 1)",
}


@dataclass
class CorrectedInput:
    """One group's items as arrays, and what reading the table left out (with why)."""

    sample: Sample
    item_ids_l: np.ndarray
    item_ids_u: np.ndarray
    value_text: str
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cluster_name: str | None = None
    strata_name: str | None = None
    n_strata: int | None = None


# ----------------------------------------------------------------------------------------- reading the table


def _values(series: pd.Series, positive: Positive, who: str) -> tuple[np.ndarray, str]:
    """Numbers from a value column: as they are, or 1/0 for ``positive`` labels."""
    if positive is None:
        numeric = pd.to_numeric(series, errors="coerce")
        bad = numeric.isna() & series.notna()
        if bad.any():
            labels = sorted(map(str, series[bad].unique()))[:6]
            raise CorrectionError(f"{who} gives labels {labels}, not numbers: say which label counts as 1 with "
                                  f"positive= (e.g. positive={labels[0]!r})")
        return numeric.to_numpy(dtype="float64", na_value=np.nan), ""
    if callable(positive):
        hit = np.asarray(positive(series), dtype=bool)
        text = "1 where positive(value) holds, else 0"
    else:
        wanted = set(positive) if isinstance(positive, list | tuple | set | frozenset) else {positive}
        hit = series.isin(wanted).to_numpy(dtype=bool)
        text = f"1 for {sorted(map(str, wanted))}, 0 for every other value"
    out = np.where(hit, 1.0, 0.0)
    out[series.isna().to_numpy()] = np.nan
    return out, text


def _value_column(rows: pd.DataFrame, value: str | None, who: str) -> str:
    if value is not None:
        if value not in rows.columns:
            raise CorrectionError(f"value={value!r} is not a column of the table")
        return value
    ok = rows[is_scored(rows)]
    for col in ("score", "verdict", "winner"):
        if col in ok.columns and ok[col].notna().any():
            return col
    raise CorrectionError(f"{who} has no scored row with a score, verdict or winner; name the column with value=")


def _per_item(rows: pd.DataFrame, keys: list[str], source: Any, what: str) -> pd.Series:
    """A per-item value from a column of the judge rows or a mapping item_id -> value."""
    if isinstance(source, str):
        if source not in rows.columns:
            raise CorrectionError(f"{what}={source!r} is not a column of the table")
        values = rows.groupby(keys, sort=False, dropna=False)[source].nunique(dropna=False)
        if (values > 1).any():
            raise CorrectionError(f"{what} column {source!r} takes several values within one item "
                                  f"(first: {values[values > 1].index[0]}); it must be constant per item")
        return rows[source].reset_index(drop=True)
    mapping = dict(source)  # type: ignore[arg-type]
    return rows["item_id"].map(mapping).reset_index(drop=True)


def _codes(values: pd.Series, what: str, name: str | None) -> tuple[np.ndarray, int]:
    if values.isna().any():
        raise CorrectionError(f"{int(values.isna().sum())} item(s) have no {what} value ({name or 'mapping'}); "
                              f"every item needs one")
    codes, uniques = pd.factorize(values.astype(str), sort=True)
    return codes.astype(np.int64), len(uniques)


def corrected_inputs(table: pd.DataFrame, *, judge: str, gold: str | Mapping[str, Any], value: str | None = None,
                     positive: Positive = None, cluster: str | Mapping[str, Any] | None = None,
                     strata: str | Mapping[str, Any] | None = None, by: Sequence[str] = (),
                     unscored: UnscoredPolicy = "exclude") -> list[tuple[dict[str, Any], CorrectedInput]]:
    """The judge's and gold's values per item, one :class:`CorrectedInput` per ``by`` group."""
    for col in ("item_id", "judge", "status"):
        if col not in table.columns:
            raise CorrectionError(f"a judgments table needs an {col!r} column; build it with judgelab.make_table "
                                  "or judgelab.from_frame")
    if not isinstance(unscored, int | float) and unscored not in ("exclude", "error"):
        raise CorrectionError(f"unscored must be 'exclude', 'error' or a number to impute, not {unscored!r}")
    judges = sorted(distinct_text(table["judge"]))
    judge_rows = table[table["judge"] == judge]
    if judge_rows.empty:
        raise CorrectionError(f"judge {judge!r} has no rows in the table (judges: {', '.join(judges[:12])})")
    by = list(by)
    for col in by:
        if col not in table.columns:
            raise CorrectionError(f"by={col!r} is not a column of the table")
    keys = ["item_id", *by]
    value_col = _value_column(judge_rows, value, f"judge {judge!r}")
    dup = judge_rows.duplicated(subset=keys, keep=False)
    if dup.any():
        first = judge_rows.loc[dup].iloc[0]
        extra = [c for c in ("criterion", "condition", "repeat", "side") if c in judge_rows.columns
                 and judge_rows.loc[dup & (judge_rows["item_id"] == first["item_id"]), c].nunique(dropna=False) > 1]
        raise CorrectionError(
            f"judge {judge!r} has {int(dup.sum())} rows sharing an item (first {first['item_id']!r}, differing in "
            f"{extra or 'nothing'}); one row per item: filter the table, add by=[...] (e.g. by='criterion'), or "
            "consolidate the two orders (judgelab.ensembles.confidence.position_consistency)")
    judge_rows = judge_rows.reset_index(drop=True)
    ok = is_scored(judge_rows).to_numpy()
    yhat, map_text = _values(judge_rows[value_col].where(ok), positive, f"judge {judge!r}")
    n_unscored = int((~ok).sum())
    if n_unscored and unscored == "error":
        raise CorrectionError(f"judge {judge!r} has {n_unscored} unscored row(s) (unscored='error'); choose "
                              "unscored='exclude' or a value to impute")
    if n_unscored and not isinstance(unscored, str):
        yhat[~ok] = float(unscored)
    missing_value = ok & np.isnan(yhat)
    gold_values, gold_counts = _gold_values(table, judge_rows, gold, keys, value, positive)
    clusters = None if cluster is None else _per_item(judge_rows, keys, cluster, "cluster")
    strat = None if strata is None else _per_item(judge_rows, keys, strata, "strata")
    groups = [((), np.arange(len(judge_rows)))] if not by else [
        (k if isinstance(k, tuple) else (k,), np.asarray(idx))
        for k, idx in judge_rows.groupby(by, sort=True, dropna=False).indices.items()]
    out = []
    for key, idx in groups:
        use = np.zeros(len(judge_rows), dtype=bool)
        use[idx] = True
        excluded = use & ~ok & (unscored == "exclude") if isinstance(unscored, str) else np.zeros_like(use)
        dropped = use & missing_value
        use &= ~excluded & ~dropped
        labelled = use & ~np.isnan(gold_values)
        unlabelled = use & np.isnan(gold_values)
        cl_l = cl_u = st_l = st_u = None
        n_strata = None
        if clusters is not None:
            codes, _ = _codes(clusters[use], "cluster", cluster if isinstance(cluster, str) else None)
            full = np.full(len(judge_rows), -1)
            full[use] = codes
            cl_l, cl_u = full[labelled], full[unlabelled]
        if strat is not None:
            codes, n_strata = _codes(strat[use], "strata", strata if isinstance(strata, str) else None)
            full = np.full(len(judge_rows), -1)
            full[use] = codes
            st_l, st_u = full[labelled], full[unlabelled]
        sample = Sample(gold_values[labelled], yhat[labelled], yhat[unlabelled], st_l, st_u, cl_l, cl_u)
        counts = {"n_unscored_excluded": int(excluded.sum()), "n_missing_dropped": int(dropped.sum()),
                  "n_unscored_imputed": int((use & ~ok).sum()), **gold_counts}
        notes = []
        if counts["n_unscored_excluded"]:
            notes.append(f"{counts['n_unscored_excluded']} item(s) with an unscored judge row excluded "
                         "(unscored='exclude'): the estimate is for the items the judge scored")
        if counts["n_unscored_imputed"]:
            notes.append(f"{counts['n_unscored_imputed']} unscored judge value(s) imputed as {unscored}")
        text = f"judge {value_col}" + (f" ({map_text})" if map_text else "")
        out.append((dict(zip(by, key, strict=True)), CorrectedInput(
            sample, judge_rows["item_id"].to_numpy()[labelled], judge_rows["item_id"].to_numpy()[unlabelled],
            text, counts, notes, cluster if isinstance(cluster, str) else ("mapping" if cluster is not None else None),
            strata if isinstance(strata, str) else ("mapping" if strata is not None else None), n_strata)))
    return out


def _gold_values(table: pd.DataFrame, judge_rows: pd.DataFrame, gold: str | Mapping[str, Any], keys: list[str],
                 value: str | None, positive: Positive) -> tuple[np.ndarray, dict[str, int]]:
    """Gold per judge row (NaN: unlabelled) and the counts of gold rows that could not be used."""
    if not isinstance(gold, str):
        series = judge_rows["item_id"].map(dict(gold))
        values, _ = _values(series, positive, "gold")
        return values, {"n_gold_unscored": 0, "n_gold_without_judge": 0}
    rows = table[table["judge"] == gold]
    if rows.empty:
        judges = sorted(distinct_text(table["judge"]))
        raise CorrectionError(f"no rows of gold {gold!r} in the table (judges: {', '.join(judges[:12])}); name the "
                              "gold or human rater with gold=")
    join = ["item_id"] + [k for k in keys[1:] if k in rows.columns and rows[k].notna().all()]
    ok = is_scored(rows)
    scored = rows[ok]
    gold_col = value if value is not None else _value_column(rows, None, f"gold {gold!r}")
    dup = scored.duplicated(subset=join, keep=False)
    if dup.any():
        raise CorrectionError(f"gold {gold!r} has {int(dup.sum())} scored rows sharing an item (first "
                              f"{scored.loc[dup, 'item_id'].iloc[0]!r}); one gold label per item")
    merged = judge_rows[join].merge(scored[[*join, gold_col]], on=join, how="left")
    values, _ = _values(merged[gold_col], positive, f"gold {gold!r}")
    judged = set(map(tuple, judge_rows[join].astype(str).to_numpy()))
    without = sum(1 for k in map(tuple, scored[join].astype(str).to_numpy()) if k not in judged)
    return values, {"n_gold_unscored": int((~ok).sum()), "n_gold_without_judge": int(without)}


# ---------------------------------------------------------------------------------------------- estimating


def estimate_method(sample: Sample, method: str, *, ci_level: float = 0.95, n_folds: int = 5, seed: int = 0,
                    rogan_gladen_interval: RoganGladenInterval = "adjusted") -> Estimate:
    """One method's :class:`Estimate` on arrays (checks the sample can support it)."""
    if method not in METHODS:
        raise CorrectionError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    check_sample(sample)
    if method == "classical":
        return classical_estimate(sample)
    if not sample.n_unlabelled:
        raise CorrectionError(f"every judged item has a gold label: nothing unlabelled: use method='classical' "
                              f"(asked for {method!r})")
    if method in ("ppi", "ppi++"):
        return ppi_estimate(sample, tuned=method == "ppi++")
    if method == "rogan_gladen":
        for name, arr in (("judge", np.concatenate([sample.yhat, sample.yhat_u])), ("gold", sample.y)):
            other = sorted(set(np.unique(arr)) - {0.0, 1.0})
            if other:
                shown = ", ".join(f"{v:g}" for v in other[:5])
                raise CorrectionError(f"rogan_gladen needs a binary (0/1) {name}; it has values {shown}: pass "
                                      "positive= (a label, labels, or e.g. lambda s: s >= 4) to make pass/fail")
        return rogan_gladen_estimate(sample, ci_level=ci_level, interval=rogan_gladen_interval)
    return calibrated_estimate(sample, n_folds=n_folds, seed=seed)


def check_sample(sample: Sample) -> None:
    """Raise when no interval can be computed: fewer than 2 labels, a thin stratum, a single cluster."""
    if sample.n < 2:
        raise CorrectionError(f"{sample.n} labelled item(s): an interval needs at least 2 gold labels")
    if sample.strata_l is not None:
        counts = np.bincount(sample.strata_l, minlength=int(max(sample.strata_l.max(), sample.strata_u.max(
            initial=0))) + 1)
        thin = [int(h) for h, c in enumerate(counts) if c < 2]
        if thin:
            raise CorrectionError(f"stratum(s) {thin} have fewer than 2 labelled items; every stratum needs at "
                                  "least 2 gold labels (merge thin strata)")
    if sample.n_clusters is not None and sample.n_clusters < 2:
        raise CorrectionError("every item is in one cluster: a cluster-robust interval needs at least 2 clusters")


def _correlation_row(sample: Sample, ci_level: float, context: dict[str, Any]) -> tuple[dict[str, Any], float]:
    y, yhat, n = sample.y, sample.yhat, sample.n
    if n < 3 or np.ptp(y) == 0 or np.ptp(yhat) == 0:
        why = "fewer than 3 labelled items" if n < 3 else "the judge or gold is constant on the labelled items"
        return result_row("judge_gold_correlation", np.nan, n=n, method="Pearson r on the labelled items",
                          note=f"undefined: {why}", **context), float("nan")
    r = float(np.corrcoef(y, yhat)[0, 1])
    z, half = np.arctanh(np.clip(r, -0.999999, 0.999999)), float(special.ndtri(0.5 + ci_level / 2)) / np.sqrt(n - 3)
    p = float(stats.pearsonr(y, yhat).pvalue)
    note = ""
    if r < 0:
        note = (f"warning: the judge is anti-correlated with gold on the labelled items (r = {r:.3f}); PPI++ falls "
                "back toward the classical estimate (λ clipped to 0) and PPI with λ = 1 is wider than classical")
    elif r < 0.1:
        note = f"the judge barely tracks gold (r = {r:.3f}): corrected intervals will be close to classical"
    return result_row("judge_gold_correlation", r, n=n, ci_low=np.tanh(z - half), ci_high=np.tanh(z + half),
                      p_value=p, method=f"Pearson r on the {n} labelled items; Fisher z interval "
                      f"{ci_level:.0%}; t-test p-value (assumes independent items)", note=note, **context), r


def _describe(method: str, est: Estimate, inp: CorrectedInput, ci_level: float,
              rg_interval: RoganGladenInterval) -> str:
    text = _DESCRIPTIONS[method]
    lam = est.detail.get("lambda")
    if method == "ppi++" and lam is not None:
        text += f" λ = {lam:.3f}" if isinstance(lam, float) else " λ per stratum " + ", ".join(
            f"{v:.3f}" for v in lam.values())
    if method == "rogan_gladen":
        text += ("; Lee et al. (2025) smoothed delta-method interval" if rg_interval == "adjusted" else
                 "; Wald delta-method interval")
    if method == "calibrated":
        text += f"; {est.detail['n_folds']} folds; interval adds the calibrator's jackknife variance"
    quantile = "normal" if not np.isfinite(est.df) else f"t ({est.df:.0f} df)"
    text += f"; {quantile} {ci_level:.0%} interval; {inp.value_text}"
    if inp.strata_name:
        text += f"; stratified by {inp.strata_name} ({inp.n_strata} strata)"
    if inp.cluster_name:
        text += f"; cluster-robust by {inp.cluster_name} ({inp.sample.n_clusters} clusters)"
    return text


def _estimate_rows(inp: CorrectedInput, methods: Sequence[str], context: dict[str, Any], ci_level: float,
                   n_folds: int, seed: int, rg_interval: RoganGladenInterval,
                   pi: np.ndarray | None = None) -> list[dict[str, Any]]:
    sample = inp.sample
    check_sample(sample)
    corr_row, r = _correlation_row(sample, ci_level, context)
    rows = [corr_row]
    if pi is None:
        classical_var = classical_estimate(sample).variance if sample.n >= 2 else np.nan
    else:
        classical_var = weighted_estimate(sample, pi, "classical").variance
    for method in methods:
        if pi is None:
            est = estimate_method(sample, method, ci_level=ci_level, n_folds=n_folds, seed=seed,
                                  rogan_gladen_interval=rg_interval)
        else:
            est = weighted_estimate(sample, pi, method)
        low, high = est.interval(ci_level)
        notes = list(inp.notes) + est.notes
        if method == "rogan_gladen" and (low < 0 or high > 1):
            low, high = max(low, 0.0), min(high, 1.0)
            notes.append("interval clipped to [0, 1]")
        if method == "ppi++" and est.detail.get("lambda") == 0.0 and np.isfinite(r) and r < 0:
            notes.append("the judge is anti-correlated with gold: λ = 0, so PPI++ fell back to the classical estimate")
        if sample.cluster_l is not None and sample.n_clusters == sample.n + sample.n_unlabelled:
            notes.append("every cluster holds one item: the clustered interval is the unclustered one")
        gain = classical_var / est.variance if est.variance > 0 else np.nan
        p = 2 * stats.t.sf(abs(est.center / est.std_error), est.df) if est.std_error > 0 else np.nan
        lam = est.detail.get("lambda")
        text = _describe(method, est, inp, ci_level, rg_interval)
        if pi is not None:
            text += (f"; labelled items reweighted by 1/(inclusion probability) (active statistical inference, "
                     f"Zrnic & Candès 2024; probabilities {pi.min():.3g} to {pi.max():.3g})")
        rows.append(result_row(
            "mean", est.estimate, n=sample.n if method == "classical" else sample.n + sample.n_unlabelled,
            ci_low=low, ci_high=high, p_value=p, method=text,
            estimator=method, **context, ci_level=ci_level, n_labelled=sample.n, n_unlabelled=sample.n_unlabelled,
            effective_n=sample.n * gain, ess_gain=gain, std_error=est.std_error,
            **{"lambda": lam if isinstance(lam, float) else np.nan}, n_clusters=sample.n_clusters,
            n_strata=inp.n_strata, **inp.counts, note=join_notes(*notes)))
    return rows


def _methods(method: str | Sequence[str]) -> list[str]:
    methods = [method] if isinstance(method, str) else list(method)
    if method == "all":
        methods = list(METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise CorrectionError(f"unknown method(s) {unknown}; known: {', '.join(METHODS)} (or 'all')")
    return methods


def _one_per_item(values: Any, name: str) -> pd.Series:
    if isinstance(values, pd.DataFrame) or np.ndim(values) != 1:
        raise CorrectionError(f"without a table, {name} must be one value per item (an array, list or Series), not "
                              f"{type(values).__name__}; with table=..., it names a judge")
    return pd.Series(values)


def _array_input(judge: Any, gold: Any, cluster: Any, strata: Any, positive: Positive) -> CorrectedInput:
    yhat, text = _values(_one_per_item(judge, "judge"), positive, "judge")
    gold_values, _ = _values(_one_per_item(gold, "gold"), positive, "gold")
    if len(yhat) != len(gold_values):
        raise CorrectionError(f"judge has {len(yhat)} values and gold {len(gold_values)}; give one per item "
                              "(gold NaN where unlabelled)")
    missing = np.isnan(yhat)
    labelled, unlabelled = ~missing & ~np.isnan(gold_values), ~missing & np.isnan(gold_values)
    ids = np.arange(len(yhat))
    cl_l = cl_u = st_l = st_u = None
    n_strata = None
    if cluster is not None:
        codes, _ = _codes(pd.Series(cluster), "cluster", None)
        cl_l, cl_u = codes[labelled], codes[unlabelled]
    if strata is not None:
        codes, n_strata = _codes(pd.Series(strata), "strata", None)
        st_l, st_u = codes[labelled], codes[unlabelled]
    sample = Sample(gold_values[labelled], yhat[labelled], yhat[unlabelled], st_l, st_u, cl_l, cl_u)
    return CorrectedInput(sample, ids[labelled], ids[unlabelled], "judge values" + (f" ({text})" if text else ""),
                          {"n_missing_dropped": int(missing.sum())},
                          [f"{int(missing.sum())} item(s) without a judge value dropped"] if missing.any() else [],
                          "cluster" if cluster is not None else None, "strata" if strata is not None else None,
                          n_strata)


def corrected_mean(
    table: pd.DataFrame | None = None,
    *,
    judge: Any,
    gold: Any = "gold",
    method: Method | Literal["all"] | Sequence[Method] = "ppi++",
    value: str | None = None,
    positive: Positive = None,
    cluster: Any = None,
    strata: Any = None,
    by: str | Sequence[str] | None = None,
    unscored: UnscoredPolicy = "exclude",
    rogan_gladen_interval: RoganGladenInterval = "adjusted",
    n_folds: int = 5,
    weights: Any = None,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The mean gold value of all judged items, from the judge's values corrected with the gold labels.

    ``table``: a judgments table with rows of ``judge`` (every item) and of ``gold`` (the labelled
    items; a judge name such as "gold" / "human", or a mapping item_id -> label). Without a table,
    ``judge`` is an array of judge values for every item and ``gold`` an array with NaN where an item
    is unlabelled (``cluster`` / ``strata`` then arrays too). ``value``: the column compared (default:
    score, else verdict, else winner); ``positive``: which label(s) count as 1 (needed for labels, e.g.
    positive="yes"; a function works too, e.g. ``lambda s: s >= 4``). ``method``: one of
    :data:`METHODS`, a list, or "all". ``cluster`` / ``strata``: a column of the judge rows or a mapping
    item_id -> value. ``by``: column(s) to estimate per group (system, criterion). ``unscored``: the
    policy for unscored judge rows (module docstring). ``rogan_gladen_interval``: "adjusted" (Lee et
    al.) or "wald". ``n_folds``, ``seed``: the calibrated method's cross-fitting. ``weights``: the labelled
    items' inclusion probabilities when they were not drawn uniformly -- ``stats.select_for_labelling``'s
    frame (``item_id``, ``inclusion_probability``, ``strategy``), a mapping item_id -> probability, or without a
    table an array of one probability per item -- so the estimate reweights each labelled item by 1/π
    (:mod:`judgelab.stats.corrected.weighted`; methods classical, ppi, ppi++; a "disagreement" selection is
    refused: it is no probability sample).

    Returns a tidy frame: per group a ``judge_gold_correlation`` row, then one ``mean`` row per method
    (``estimator`` names it) with its interval, ``n_labelled``, ``n_unlabelled``, ``effective_n``,
    ``ess_gain``, ``std_error``, ``lambda`` (PPI/PPI++) and the counts of rows left out. ``p_value``
    tests a mean of 0 and is rarely of interest.
    """
    methods = _methods(method)
    if not 0 < ci_level < 1:
        raise CorrectionError(f"ci_level must be in (0, 1), not {ci_level}")
    rows: list[dict[str, Any]] = []
    if table is None:
        inp = _array_input(judge, gold, cluster, strata, positive)
        pi = None if weights is None else _array_weights(weights, inp)
        rows += _estimate_rows(inp, methods, {}, ci_level, n_folds, seed, rogan_gladen_interval, pi)
        return tidy_frame(rows)
    probabilities = None if weights is None else _weights_by_item(weights)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    for key, inp in corrected_inputs(table, judge=judge, gold=gold, value=value, positive=positive, cluster=cluster,
                                     strata=strata, by=by_cols, unscored=unscored):
        context = {**key, "judge": judge, "gold": gold if isinstance(gold, str) else "mapping"}
        if inp.sample.n == 0:
            raise CorrectionError(f"no item{_where(key)} has both a scored judge row and a gold label "
                                  f"({inp.counts['n_gold_unscored']} gold row(s) unscored); label some items")
        pi = None if probabilities is None else _labelled_weights(probabilities, inp)
        rows += _estimate_rows(inp, methods, context, ci_level, n_folds, seed, rogan_gladen_interval, pi)
    return tidy_frame(rows)


def _weights_by_item(weights: Any) -> dict[str, float]:
    """item_id -> inclusion probability, from a selection frame or a mapping (a disagreement selection refused)."""
    if isinstance(weights, pd.DataFrame):
        missing = [c for c in ("item_id", "inclusion_probability") if c not in weights.columns]
        if missing:
            raise CorrectionError(f"weights= as a frame needs the columns item_id and inclusion_probability "
                                  f"(stats.select_for_labelling's result); it lacks {missing}")
        if "strategy" in weights.columns and (weights["strategy"] == "disagreement").any():
            raise CorrectionError("a 'disagreement' selection picks items for review, not a probability sample, so "
                                  "no corrected mean can be unbiased on it: label a 'random', 'stratified' or "
                                  "'active' selection for the estimate")
        pairs = zip(weights["item_id"].astype(str), weights["inclusion_probability"], strict=True)
    elif isinstance(weights, Mapping):
        pairs = ((str(k), v) for k, v in weights.items())
    else:
        raise CorrectionError(f"weights= is stats.select_for_labelling's frame or a mapping item_id -> inclusion "
                              f"probability, not {type(weights).__name__}")
    out: dict[str, float] = {}
    for item, value in pairs:
        try:
            out[item] = float(value)
        except (TypeError, ValueError) as exc:
            raise CorrectionError(f"the inclusion probability of item {item!r} is {value!r}, not a number") from exc
    return out


def _labelled_weights(probabilities: dict[str, float], inp: CorrectedInput) -> np.ndarray:
    ids = [str(i) for i in inp.item_ids_l]
    missing = [i for i in ids if i not in probabilities]
    if missing:
        raise CorrectionError(f"{len(missing)} labelled item(s) have no inclusion probability in weights= (first "
                              f"{missing[0]!r}); label only the selected items, or pass every labelled item's "
                              "probability")
    return np.array([probabilities[i] for i in ids])


def _array_weights(weights: Any, inp: CorrectedInput) -> np.ndarray:
    values = np.asarray(_one_per_item(weights, "weights"), dtype=float)
    if len(values) != len(inp.item_ids_l) + len(inp.item_ids_u) + inp.counts.get("n_missing_dropped", 0):
        raise CorrectionError(f"weights has {len(values)} values; give one inclusion probability per item")
    return values[inp.item_ids_l.astype(int)]


def _where(key: Mapping[str, Any]) -> str:
    return "" if not key else " (" + ", ".join(f"{k}={v!r}" for k, v in key.items()) + ")"


def corrected_difference(
    table: pd.DataFrame,
    *,
    judge: str,
    gold: str | Mapping[str, Any] = "gold",
    between: str = "system",
    a: Any = None,
    b: Any = None,
    pair: str = "item_id",
    method: Method | Literal["all"] | Sequence[Method] = "ppi++",
    value: str | None = None,
    positive: Positive = None,
    cluster: str | Mapping[str, Any] | None = None,
    by: str | Sequence[str] | None = None,
    unscored: UnscoredPolicy = "exclude",
    rogan_gladen_interval: RoganGladenInterval = "adjusted",
    n_folds: int = 5,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The paired difference a − b of two systems' corrected means (the A/B question), per method.

    ``between``: the column naming the system of each row; ``a`` / ``b``: its two values (default: the
    two values present, sorted). Items of the two systems are paired by ``pair`` (default ``item_id``: the
    same item id under both systems; e.g. "document_id" when each system's output has its own id), and
    the covariance of the two estimates is summed over pairs (over ``cluster`` when given, which must
    be at least as coarse). Each system's mean is estimated as in :func:`corrected_mean`; rows: per
    method the two ``mean`` rows and a ``mean_difference`` row whose p-value tests a difference of 0.
    """
    if between not in table.columns:
        raise CorrectionError(f"between={between!r} is not a column of the table")
    present = sorted(distinct_text(table.loc[table["judge"] == judge, between]))
    if a is None or b is None:
        if len(present) != 2:
            raise CorrectionError(f"{between!r} has values {present[:8]} for judge {judge!r}; name the two to "
                                  "compare with a= and b=")
        a, b = present
    for side in (a, b):
        if str(side) not in present:
            raise CorrectionError(f"{between}={side!r} has no rows of judge {judge!r} (values: {present[:8]})")
    if pair not in table.columns:
        raise CorrectionError(f"pair={pair!r} is not a column of the table")
    methods = _methods(method)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    unit = cluster if cluster is not None else pair
    sides = {}
    for side in (a, b):
        part = table[table[between].astype(str) == str(side)]
        if isinstance(gold, str):  # gold rows may lack the system column (one label per item id)
            part = pd.concat([part[part["judge"] != gold], table[(table["judge"] == gold) & (
                table[between].isna() | (table[between].astype(str) == str(side)))]])
        sides[side] = {tuple(k.items()): v for k, v in corrected_inputs(
            part, judge=judge, gold=gold, value=value, positive=positive, cluster=unit, by=by_cols,
            unscored=unscored)}
    rows: list[dict[str, Any]] = []
    for key in sides[a]:
        if key not in sides[b]:
            continue
        inp_a, inp_b = sides[a][key], sides[b][key]
        shared = _shared_units(table, unit, inp_a, inp_b)
        context = {**dict(key), "judge": judge, "gold": gold if isinstance(gold, str) else "mapping"}
        for method in methods:
            est = {}
            for side, inp in ((a, inp_a), (b, inp_b)):
                sample = inp.sample if cluster is not None else _unclustered(inp.sample)
                est[side] = estimate_method(sample, method, ci_level=ci_level, n_folds=n_folds, seed=seed,
                                            rogan_gladen_interval=rogan_gladen_interval)
                low, high = est[side].interval(ci_level)
                rows.append(result_row("mean", est[side].estimate, n=inp.sample.n + inp.sample.n_unlabelled,
                                       ci_low=low, ci_high=high, method=_describe(method, est[side], inp, ci_level,
                                                                                  rogan_gladen_interval),
                                       estimator=method, **context, **{between: side}, ci_level=ci_level,
                                       n_labelled=inp.sample.n, n_unlabelled=inp.sample.n_unlabelled,
                                       std_error=est[side].std_error, note=join_notes(*inp.notes, *est[side].notes)))
            diff, center, var, df = difference(est[a], est[b], shared)
            se = float(np.sqrt(var)) if var > 0 else float("nan")
            q = float(special.ndtri(0.5 + ci_level / 2)) if not np.isfinite(df) else float(
                stats.t.ppf(0.5 + ci_level / 2, df))
            p = 2 * stats.t.sf(abs(center / se), df) if se > 0 else np.nan
            n_units = len(np.unique(np.concatenate(shared)))
            rows.append(result_row(
                "mean_difference", diff, n=n_units, ci_low=center - q * se, ci_high=center + q * se, p_value=p,
                method=f"{a} − {b}, {_DESCRIPTIONS[method]}; paired by {unit} ({n_units} units), covariance "
                       f"summed over {unit}; {'normal' if not np.isfinite(df) else f't ({df:.0f} df)'} "
                       f"{ci_level:.0%} interval; two-sided test of no difference",
                estimator=method, **context, a=a, b=b, ci_level=ci_level, std_error=se,
                n_labelled=inp_a.sample.n + inp_b.sample.n,
                n_unlabelled=inp_a.sample.n_unlabelled + inp_b.sample.n_unlabelled))
    if not rows:
        raise CorrectionError(f"systems {a!r} and {b!r} share no group to compare")
    return tidy_frame(rows)


def _unclustered(sample: Sample) -> Sample:
    return Sample(sample.y, sample.yhat, sample.yhat_u, sample.strata_l, sample.strata_u)


def _shared_units(table: pd.DataFrame, unit: Any, inp_a: CorrectedInput,
                  inp_b: CorrectedInput) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pairing unit of every item of both systems, in one integer coding."""
    lookup: Callable[[np.ndarray], np.ndarray]
    if unit == "item_id":
        lookup = lambda ids: np.asarray(ids, dtype=str).astype(object)  # noqa: E731
    elif isinstance(unit, str):
        first = table.drop_duplicates("item_id").set_index("item_id")[unit]
        lookup = lambda ids: first.reindex(ids).astype(str).to_numpy()  # noqa: E731
    else:
        mapping = {k: str(v) for k, v in dict(unit).items()}
        lookup = lambda ids: np.array([mapping.get(i, "") for i in ids], dtype=object)  # noqa: E731
    parts = [lookup(ids) for ids in (inp_a.item_ids_l, inp_a.item_ids_u, inp_b.item_ids_l, inp_b.item_ids_u)]
    codes, _ = pd.factorize(np.concatenate(parts))
    cuts = np.cumsum([len(p) for p in parts])[:-1]
    a_l, a_u, b_l, b_u = np.split(codes, cuts)
    return a_l, a_u, b_l, b_u
