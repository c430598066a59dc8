"""Verbosity bias: pad a candidate with content-preserving text at several lengths and rejudge.

Padding is either a restatement of the candidate's own sentences or irrelevant-but-true filler
(:mod:`judgelab.probes.perturbations`), at each requested number of added words; condition names
read ``restatement+50w`` / ``filler+50w``. Direct rubrics: the change of the score; pairwise
rubrics: candidate A is padded and the change of A's points (win 1, tie 0.5, loss 0) is measured.
Each condition is compared with the original by the mean paired change (bootstrap CI) and a
Wilcoxon signed-rank test; the trend is the Spearman correlation between words added and the
change, resampled by item. On pairwise data the length-controlled win rate of
``judgelab.stats.length`` is added when the items (with both candidates' texts) are given.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from judgelab.errors import ConfigError
from judgelab.judgments import scored
from judgelab.probes.experiment import (
    PAIR_POLICY,
    candidate_field,
    check_one_run,
    paired_changes,
    run_perturbed,
)
from judgelab.probes.perturbations import padding_perturbations, word_count
from judgelab.probes.result import ProbeResult, from_stats_frame, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES, length_controlled_win_rate, spearman
from judgelab.stats.tidy import result_row

__all__ = ["DEFAULT_LENGTHS", "analyze", "length", "length_controlled_rows", "words_added"]

DEFAULT_LENGTHS: tuple[int, ...] = (25, 50, 100)
_ADDED = re.compile(r"\+(\d+)w$")


def length(
    items: Any, rubric: Rubric | str, model: str,
    *,
    lengths: tuple[int, ...] = DEFAULT_LENGTHS,
    field: str | None = None,
    other_field: str | None = None,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the original items and padded copies (one condition per padding kind x length).

    ``field``: the candidate to pad (default the rubric's first candidate field); ``other_field``
    (pairwise): the other candidate, for the length-controlled win rate.
    """
    run = run_perturbed(items, rubric, model, padding_perturbations(tuple(lengths)), field=field, seed=seed, **run_kw)
    pairwise = run.rubric.mode == "pairwise"
    fields = (run.field, candidate_field(run.rubric, other_field, which=1)) if pairwise else None
    result = analyze(run.table, criterion=criterion, items=run.items if pairwise else None, fields=fields, seed=seed)
    result.meta.update(model=model, rubric=run.rubric.name, field=run.field, lengths=list(lengths))
    return result


def words_added(condition: str) -> int | None:
    """The nominal number of added words encoded in a condition name (``filler+50w`` -> 50)."""
    m = _ADDED.search(condition)
    return int(m.group(1)) if m else None


def analyze(
    table: pd.DataFrame,
    *,
    criterion: str = "overall",
    judge: str | None = None,
    items: pd.DataFrame | None = None,
    fields: tuple[str, ...] | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> ProbeResult:
    """Length statistics from a table (no calls).

    Padded conditions (``filler+50w`` ...) next to "original" give the paired changes and the trend.
    On pairwise data with ``items`` (and ``fields``, the two candidate columns), the length-controlled
    win rate of A is computed on the original condition -- that alone works on released judge outputs
    (e.g. LLMBar: ``fields=("output_1", "output_2")``).
    """
    changes = paired_changes(table, _padded, criterion=criterion, judge=judge, seed=seed, n_resamples=n_resamples)
    wide, padded = changes.wide, changes.conditions
    length_controlled = changes.mode == "pairwise" and items is not None
    if not padded and not length_controlled:
        raise ConfigError("the table has no padded conditions (names like 'filler+50w'; run judgelab.probes.length), "
                          "and no pairwise items were given for the length-controlled win rate")
    rows = list(changes.rows)
    trend = pd.DataFrame(columns=["item_id", "words_added", "change"])
    if padded:
        long = [(i, words_added(c), wide.at[i, c] - wide.at[i, "original"]) for c in padded for i in wide.index]
        trend = pd.DataFrame(long, columns=["item_id", "words_added", "change"]).dropna()
        rows.append(_trend_row(trend, changes.metric, seed, n_resamples))
    if length_controlled:
        rows += length_controlled_rows(table[table["judge"] != "gold"], items, fields, criterion=criterion,
                                       judge=judge)
    return ProbeResult("length", table, summary_frame(rows), details={"changes": trend},
                       meta={"criterion": criterion, "mode": changes.mode, "n_items": int(len(wide))})


def _padded(conditions: list[str]) -> list[str]:
    """The padded conditions, by words added."""
    return sorted((c for c in conditions if words_added(c) is not None), key=lambda c: (words_added(c), c))


def _trend_row(trend: pd.DataFrame, metric: str, seed: int, n_resamples: int) -> dict[str, Any]:
    """Spearman correlation of words added with the change, resampling items (each has several lengths)."""
    name = f"{metric}_vs_words_added"
    if len(trend) < 3 or trend["words_added"].nunique() < 2:
        return result_row(name, math.nan, n=len(trend), method="Spearman", policy=PAIR_POLICY,
                          note="needs >= 3 complete pairs over >= 2 padding lengths")
    frame = spearman(trend["words_added"].to_numpy(float), trend["change"].to_numpy(float),
                     cluster=trend["item_id"].to_numpy(), seed=seed, n_resamples=n_resamples)
    return from_stats_frame(frame, metric=name, policy=PAIR_POLICY)[0]


def length_controlled_rows(table: pd.DataFrame, items: pd.DataFrame, fields: tuple[str, ...] | None, *,
                           criterion: str, judge: str | None) -> list[dict[str, Any]]:
    """AlpacaEval-style length-controlled win rate of A on the ORIGINAL condition (judgelab.stats.length)."""
    field_a, field_b = (fields or ("response_a", "response_b"))[:2]
    for f in (field_a, field_b):
        if f not in items.columns:
            raise ConfigError(f"items have no column {f!r} for the length-controlled win rate")
    original = table[(table["condition"] == "original") & (table["criterion"] == criterion) & table["side"].isna()]
    if judge is not None:
        original = original[original["judge"] == judge]
    judges = sorted(map(str, original["judge"].dropna().unique()))
    if len(judges) > 1:
        raise ConfigError(f"the table holds several judges {judges}; pass judge=<one of them>")
    check_one_run(original)
    if original["item_id"].duplicated().any():  # several repeats would enter as separate comparisons
        found = sorted(original["repeat"].dropna().astype(int).unique()) if "repeat" in original else []
        raise ConfigError(f"the length-controlled win rate reads one verdict per item, and the table has repeats "
                          f"{found}: filter it to one repeat")
    texts = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    ok = scored(original)
    dropped = len(original) - len(ok)
    ids = ok["item_id"].astype(str)
    frame = length_controlled_win_rate(
        ok["winner"].astype(object).to_numpy(),
        ids.map(texts[field_a].map(lambda t: word_count(str(t)))).to_numpy(float),
        ids.map(texts[field_b].map(lambda t: word_count(str(t)))).to_numpy(float),
    )
    note = f"{dropped} unscored verdict(s) excluded" if dropped else ""
    return from_stats_frame(frame, condition="original", policy="ties count half; unscored excluded", note=note)
