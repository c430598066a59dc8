"""Latent-truth judge reliability: each judge's accuracy estimated from the judges' agreement pattern alone.

With several judges and no (or few) reference labels, a model of how judges err (Dawid-Skene and its
relatives, long used for crowd workers; fitted by the ``crowd-kit`` library) estimates both the unobserved
true label of each item and each judge's reliability. :func:`latent_truth` returns the reliabilities in the
tidy vocabulary with bootstrap intervals over items; :func:`latent_truth_labels` adds the estimated truth as
a new rater ``latent:<method>`` so every statistic can compare a judge with it.

What ``accuracy`` means per method (the model's probability that a judge gives the latent true label):

- ``dawid_skene``: sum over classes k of prior(k) x confusion[k, k] (each judge has a full confusion matrix;
  its rows are reported too, metric ``confusion``, ``true_label`` / ``given_label`` columns, P(given | true)).
- ``one_coin``: the judge's skill (one probability of answering correctly, errors spread evenly).
- ``glad``, ``mace`` and ``majority``: these models' judge parameters are not an accuracy (GLAD's alpha is an
  unbounded expertise, MACE's is a probability of not spamming), so the reported accuracy is the
  posterior-expected agreement: the mean, over the items the judge scored, of the fitted posterior probability
  that the judge's label is the true one. For ``majority`` the posterior is the plurality label (split evenly
  among tied labels), so the accuracy is the judge's agreement with the plurality.

Labels are categories: verdicts and pairwise winners (A/B/TIE) as given; scores (``value="score"``) are
treated as unordered categories, one per distinct score -- the models ignore their order and distance.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.errors import ConfigError, JudgelabError, user_errors
from judgelab.judgments import distinct_text, is_scored, make_table
from judgelab.stats.question import check_design, check_value_column, default_raters, rows_read
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["LatentMethod", "latent_truth", "latent_truth_labels"]

LatentMethod = Literal["majority", "dawid_skene", "one_coin", "glad", "mace"]
LatentValue = Literal["verdict", "winner", "score"]
_METHODS = ("majority", "dawid_skene", "one_coin", "glad", "mace")
_N_ITER = 100  # EM iterations per fit (crowd-kit's default); each bootstrap resample refits
_DESIGN_FIX = "filter the table to one (latent_truth answers one question per call; call it once per value)"


class LatentTruthError(JudgelabError, ValueError):
    """A latent-truth model that cannot be fitted to the table as given."""


def _crowdkit() -> Any:
    try:
        from crowdkit import aggregation  # imported here: an optional extra, and it loads slowly
    except ImportError as exc:
        raise LatentTruthError("latent-truth models need the crowd-kit library: pip install 'judgelab[latent]'") \
            from exc
    return aggregation


class _Labels:
    """The judges' labels of one question: integer codes in a long frame (task, worker, label)."""

    def __init__(self, table: pd.DataFrame, judges: Sequence[str] | None, value: str) -> None:
        if table.empty:
            raise LatentTruthError("the judgments table is empty: latent_truth needs the rows of two or more judges")
        for col in ("item_id", "judge", "status"):
            if col not in table.columns:
                raise LatentTruthError(f"the table has no {col!r} column: pass a judgments table "
                                       "(judgelab.judgments.make_table)")
        present = list(dict.fromkeys(table["judge"].dropna().astype(str)))
        if judges is None:
            # an earlier latent_truth_labels' rater is an aggregate of the judges, never one of them
            chosen, _ = default_raters([p for p in present if not p.startswith("latent:")], statistic="latent_truth")
            judges = [str(j) for j in chosen]
        if isinstance(judges, str) or not all(isinstance(j, str) for j in judges):
            raise ConfigError(f"judges={judges!r}: pass a list of judge names, e.g. judges={present[:3]!r}")
        judges = list(dict.fromkeys(judges))
        missing = [j for j in judges if j not in present]
        if missing:
            raise LatentTruthError(f"judge(s) {missing!r} not in this table (its judges: {present[:8]!r}): "
                                   "pass judges= from those")
        if len(judges) < 2:
            raise LatentTruthError(f"latent_truth needs at least two judges and got {judges!r}: pass judges=[...] "
                                   "with two or more")
        rows = table[table["judge"].astype(object).isin(judges)]
        rows = rows_read(rows, value)
        check_value_column(rows, value, who=f"judges {judges!r}")
        check_design(rows, rater="judge", fix=_DESIGN_FIX, statistic="latent_truth")
        scored_mask = is_scored(rows).to_numpy(dtype=bool) & rows[value].notna().to_numpy(dtype=bool)
        scored = rows[scored_mask]
        self.unscored = {j: int(((rows["judge"].astype(object) == j).to_numpy() & ~scored_mask).sum())
                         for j in judges}
        dup = scored.duplicated(["item_id", "judge"], keep=False)
        if dup.any():
            first = scored[dup].iloc[0]
            raise LatentTruthError(f"judge {first['judge']!r} has {int(dup.sum())} rows for item "
                                   f"{first['item_id']!r} and others: one label per judge and item is needed; "
                                   "merge repeats first (judgelab.judgments.aggregate_repeats)")
        if scored.empty:
            raise LatentTruthError(f"no scored {value!r} label from judges {judges!r} ({sum(self.unscored.values())} "
                                   "unscored rows): nothing to fit")
        raw = scored[value].astype(object).tolist()
        self.classes: list[Any] = sorted(dict.fromkeys(raw), key=lambda v: (str(type(v)), v))
        if len(self.classes) < 2:
            raise LatentTruthError(f"the judges gave only one label ({self.classes[0]!r}) over {len(raw)} ratings: "
                                   "a model of their errors needs at least two labels")
        code = {c: i for i, c in enumerate(self.classes)}
        self.judges = judges
        self.value = value
        self.rows = rows
        self.long = pd.DataFrame({"task": scored["item_id"].astype(str).to_numpy(),
                                  "worker": scored["judge"].astype(str).to_numpy(),
                                  "label": [code[v] for v in raw]})
        self.items = np.array(list(dict.fromkeys(self.long["task"])), dtype=object)
        self.all_items = list(dict.fromkeys(rows["item_id"].astype(str)))
        where = pd.Series(np.arange(len(self.long))).groupby(self.long["task"].to_numpy(), sort=False).indices
        self._rows = [np.asarray(where[t]) for t in self.items]  # long-frame rows of each item

    def resample(self, draw: np.ndarray) -> pd.DataFrame:
        """The long frame of a bootstrap draw of items (indices into ``items``), each copy a task of its own."""
        take = np.concatenate([self._rows[i] for i in draw])
        copy = np.repeat(np.arange(len(draw)), [len(self._rows[i]) for i in draw])
        return pd.DataFrame({"task": copy.astype(str), "worker": self.long["worker"].to_numpy()[take],
                             "label": self.long["label"].to_numpy()[take]})


def _fit(long: pd.DataFrame, method: str, n_classes: int, seed: int) -> dict[str, Any]:
    """Fit one model; returns the posterior (tasks x classes frame) and the per-judge accuracy, plus DS's
    confusion matrices and priors."""
    if method == "majority":
        counts = pd.crosstab(long["task"], long["label"]).reindex(columns=range(n_classes), fill_value=0)
        top = counts.to_numpy() == counts.to_numpy().max(axis=1, keepdims=True)
        post = pd.DataFrame(top / top.sum(axis=1, keepdims=True), index=counts.index, columns=range(n_classes))
        return {"posterior": post, "accuracy": _expected_agreement(long, post)}
    agg = _crowdkit()
    with warnings.catch_warnings():  # crowd-kit's own pandas deprecation warnings say nothing about the data
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        model = _fit_model(agg, long, method, seed)
    post = model.probas_.reindex(columns=range(n_classes), fill_value=0.0).astype(float)
    out: dict[str, Any] = {"posterior": post}
    if method == "dawid_skene":
        priors = model.priors_.reindex(range(n_classes), fill_value=0.0).astype(float)
        errors = model.errors_  # index (worker, given label), columns true label: P(given | true)
        conf: dict[str, np.ndarray] = {}
        for worker in long["worker"].unique():
            m = errors.loc[worker].reindex(index=range(n_classes), columns=range(n_classes), fill_value=0.0)
            conf[worker] = m.to_numpy(dtype=float).T  # rows true label, columns given label
        out["confusion"] = conf
        out["accuracy"] = {w: float(np.dot(priors.to_numpy(), np.diag(c))) for w, c in conf.items()}
    elif method == "one_coin":
        out["accuracy"] = {str(w): float(s) for w, s in model.skills_.items()}
    else:
        out["accuracy"] = _expected_agreement(long, post)
    return out


def _fit_model(agg: Any, long: pd.DataFrame, method: str, seed: int) -> Any:
    if method == "dawid_skene":
        return agg.DawidSkene(n_iter=_N_ITER).fit(long)
    if method == "one_coin":
        return agg.OneCoinDawidSkene(n_iter=_N_ITER).fit(long)
    if method == "glad":
        return agg.GLAD(n_iter=_N_ITER, silent=True).fit(long)
    return agg.MACE(n_iter=_N_ITER, random_state=seed).fit(long)


def _expected_agreement(long: pd.DataFrame, post: pd.DataFrame) -> dict[str, float]:
    """Per worker: the mean posterior probability that its label is the true one, over its tasks."""
    p = post.to_numpy(dtype=float)
    row = post.index.get_indexer(long["task"])
    hit = p[row, long["label"].to_numpy(dtype=int)]
    return {str(w): float(v) for w, v in pd.Series(hit).groupby(long["worker"].to_numpy()).mean().items()}


def _gold_labels(table: pd.DataFrame, labels: _Labels, gold: str | bool) -> tuple[str | None, dict[str, Any]]:
    """The reference rater's labels by item (empty when there is none)."""
    present = distinct_text(table["judge"])
    if gold is False:
        return None, {}
    if gold is True:
        name = next((g for g in ("gold", "human") if g in present and g not in labels.judges), None)
        if name is None:
            return None, {}
    else:
        if gold not in present:
            raise LatentTruthError(f"gold={gold!r} is not a rater of this table: pass gold=False, or a rater's name")
        if gold in labels.judges:
            raise LatentTruthError(f"gold={gold!r} is also one of judges=: the reference cannot be a modelled judge")
        name = gold
    rows = table[(table["judge"].astype(object) == name) & is_scored(table)]
    rows = rows[rows[labels.value].notna()] if labels.value in rows.columns else rows.iloc[0:0]
    if rows["item_id"].duplicated().any():
        raise LatentTruthError(f"the reference rater {name!r} has several labels for some items: keep one per item")
    return name, dict(zip(rows["item_id"].astype(str), rows[labels.value].astype(object), strict=True))


def _actual(labels: _Labels, gold: dict[str, Any], items: Sequence[str]) -> dict[str, tuple[float, int]]:
    code = {c: i for i, c in enumerate(labels.classes)}
    ref = pd.Series({t: code.get(v, -1) for t, v in gold.items()}, dtype="int64")
    out = {}
    weight = pd.Series(items).value_counts()
    long = labels.long[labels.long["task"].isin(weight.index) & labels.long["task"].isin(ref.index)]
    for j in labels.judges:
        mine = long[long["worker"] == j]
        w = weight.reindex(mine["task"]).to_numpy(dtype=float)
        hit = (mine["label"].to_numpy() == ref.reindex(mine["task"]).to_numpy()).astype(float)
        out[j] = (float(np.dot(w, hit) / w.sum()) if w.sum() else float("nan"), int(w.sum()))
    return out


@user_errors
def latent_truth(
    table: pd.DataFrame,
    judges: Sequence[str] | None = None,
    *,
    method: LatentMethod = "dawid_skene",
    value: LatentValue = "verdict",
    gold: str | bool = True,
    n_resamples: int = 200,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Each judge's accuracy against the latent true label, estimated from the judges' agreement alone.

    ``table``: a judgments table holding one question (one criterion, side, condition, repeat, rubric per
    judge; else the call refuses and says which column to filter). ``judges``: two or more judges to model
    (default: every model judge, or every human annotator, when the table holds only one kind; reference
    raters, aggregates and ``latent:`` raters are never included by default). ``method``:
    "dawid_skene" (default), "one_coin", "glad", "mace" or "majority"; see the module docstring for what each
    method's ``accuracy`` is. ``value``: the column holding the labels ("verdict", "winner" or "score";
    scores are unordered categories).

    Returns a tidy frame: one ``accuracy`` row per judge (``judge`` column); for Dawid-Skene, the ``confusion``
    rows (``true_label``, ``given_label``: P(given | true)). Intervals: bootstrap percentile over items,
    ``n_resamples`` refits (200 by default: each refit runs EM, so keep it modest; 0 for none). ``n`` is the
    number of items the judge labelled; its unscored rows are left out of the fit and counted in
    ``n_unscored`` and the note. ``gold``: True finds a reference rater ("gold", else "human") not among the
    judges and adds ``actual_accuracy`` rows (agreement with it, over the items both labelled, with a CI from
    the same resamples); a rater's name uses that one; False adds none.
    """
    if method not in _METHODS:
        raise ConfigError(f"method={method!r}: use one of {', '.join(_METHODS)}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 0:
        raise ConfigError(f"n_resamples={n_resamples!r}: pass a whole number >= 0 (0 for no intervals)")
    if not 0 < ci_level < 1:
        raise ConfigError(f"ci_level={ci_level!r}: pass a level between 0 and 1, e.g. 0.95")
    labels = _Labels(table, judges, value)
    gold_name, gold_labels = _gold_labels(table, labels, gold)
    k = len(labels.classes)
    fit = _fit(labels.long, method, k, seed)
    rng = np.random.default_rng(seed)
    n_items = len(labels.items)
    boot_acc: dict[str, list[float]] = {j: [] for j in labels.judges}
    boot_act: dict[str, list[float]] = {j: [] for j in labels.judges}
    boot_conf: dict[str, list[np.ndarray]] = {j: [] for j in labels.judges}
    for _ in range(n_resamples):
        draw = rng.integers(0, n_items, n_items)
        res = _fit(labels.resample(draw), method, k, seed)
        for j in labels.judges:
            boot_acc[j].append(res["accuracy"].get(j, np.nan))
            if "confusion" in res:
                boot_conf[j].append(res["confusion"].get(j, np.full((k, k), np.nan)))
        if gold_labels:
            act = _actual(labels, gold_labels, list(labels.items[draw]))
            for j in labels.judges:
                boot_act[j].append(act[j][0])
    alpha = (1 - ci_level) / 2

    def ci(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
        arr = np.asarray(values, dtype=float)
        arr = arr[~np.isnan(arr)]
        if arr.size == 0:
            return float("nan"), float("nan")
        return float(np.quantile(arr, alpha)), float(np.quantile(arr, 1 - alpha))

    per_judge_n = labels.long.groupby("worker")["task"].nunique()
    context = {"ci_level": ci_level, "n_resamples": n_resamples}
    base_note = f"{method}: {_MEANING[method]}; labels {labels.classes!r} as unordered categories"
    rows: list[dict[str, Any]] = []
    for j in labels.judges:
        n_j = int(per_judge_n.get(j, 0))
        unscored = labels.unscored[j]
        note = join_notes(base_note, f"{unscored} unscored row(s) of {j!r} left out of the fit" if unscored else "")
        low, high = ci(boot_acc[j])
        rows.append(result_row("accuracy", fit["accuracy"].get(j, np.nan), n=n_j, method=method, ci_low=low,
                               ci_high=high, judge=j, n_unscored=unscored, **context, note=note))
        if gold_name is not None:
            est, n_both = _actual(labels, gold_labels, list(labels.items))[j]
            low, high = ci(boot_act[j])
            rows.append(result_row("actual_accuracy", est, n=n_both, method=f"agreement with {gold_name!r}",
                                   ci_low=low, ci_high=high, judge=j, n_unscored=unscored, **context,
                                   note=f"share of the items both {j!r} and {gold_name!r} labelled where they agree"))
    if "confusion" in fit:
        for j in labels.judges:
            stack = np.array(boot_conf[j]) if boot_conf[j] else None
            for a, true in enumerate(labels.classes):
                for b, given in enumerate(labels.classes):
                    low, high = ci(stack[:, a, b]) if stack is not None else (float("nan"), float("nan"))
                    rows.append(result_row("confusion", fit["confusion"][j][a, b], n=int(per_judge_n.get(j, 0)),
                                           method=method, ci_low=low, ci_high=high, judge=j, true_label=true,
                                           given_label=given, n_unscored=labels.unscored[j], **context,
                                           note="P(judge gives given_label | latent truth is true_label)"))
    return tidy_frame(rows, defaults={"judge": ""})


_MEANING = {
    "dawid_skene": "accuracy = sum over classes of prior x confusion diagonal",
    "one_coin": "accuracy = the judge's skill",
    "glad": "accuracy = mean posterior probability that the judge's label is the truth",
    "mace": "accuracy = mean posterior probability that the judge's label is the truth",
    "majority": "accuracy = agreement with the plurality label (ties split evenly)",
}


@user_errors
def latent_truth_labels(
    table: pd.DataFrame,
    judges: Sequence[str] | None = None,
    *,
    method: LatentMethod = "dawid_skene",
    value: LatentValue = "verdict",
    seed: int = 0,
) -> pd.DataFrame:
    """``table`` with the latent truth per item added as a new rater ``latent:<method>``.

    One row per item of the judges' rows: the posterior's most probable label in the ``value`` column,
    status "ok", its posterior probability in ``confidence`` and the whole posterior in ``detail``. An item
    no judge scored, or whose posterior ties between labels (majority with a split vote), gets an unscored
    row (status "missing", the reason said) rather than a label picked arbitrarily. The design columns
    (criterion, side, condition, rubric) are those of the judges' rows, so every statistic pairs the new
    rater with them.
    """
    if method not in _METHODS:
        raise ConfigError(f"method={method!r}: use one of {', '.join(_METHODS)}")
    labels = _Labels(table, judges, value)
    name = f"latent:{method}"
    if name in distinct_text(table["judge"]):
        raise LatentTruthError(f"the table already has rater {name!r}: drop its rows first")
    post = _fit(labels.long, method, len(labels.classes), seed)["posterior"]
    src = labels.rows

    def common(col: str, default: Any) -> Any:
        if col not in src.columns:
            return default
        vals = src[col].dropna()
        return vals.astype(object).mode().iloc[0] if len(vals) else default

    base = {"run_id": name, "rubric": common("rubric", "latent"), "criterion": common("criterion", "overall"),
            "condition": common("condition", "original"), "judge": name}
    side = common("side", None)
    if side is not None:
        base["side"] = side
    new = []
    for item in labels.all_items:
        row: dict[str, Any] = {**base, "item_id": item}
        if item not in post.index:
            row.update(status="missing", unscored_reason=f"no judge of {labels.judges!r} scored this item")
        else:
            p = post.loc[item].to_numpy(dtype=float)
            best = np.flatnonzero(p == p.max())
            shown = {str(labels.classes[i]): round(float(p[i]), 6) for i in range(len(p))}
            if len(best) > 1:
                row.update(status="missing", unscored_reason=f"{method} posterior ties between labels "
                           f"{[labels.classes[i] for i in best]!r}")
            else:
                label = labels.classes[int(best[0])]
                row.update(status="ok", confidence=float(p[best[0]]),
                           **{value: float(label) if value == "score" else str(label)})
            row["detail"] = json.dumps({"posterior": shown, "method": method, "judges": labels.judges})
        new.append(row)
    return pd.concat([table, make_table(new)], ignore_index=True).pipe(make_table)
