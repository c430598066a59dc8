"""LLMBar's published ``statistics.json`` numbers, and its kappa encoding quirk made explicit.

LLMBar's evaluation script reports Cohen's kappa after encoding each judge winner as an
integer with a rule that keeps "1" as 1 but maps "2" (and an unreadable verdict) to 0, while the
gold labels stay 1/2. The "kappa" between judge and gold therefore compares a {0, 1} series
with a {1, 2} series: the label 2 can never agree, so these numbers are not Cohen's kappa of
the verdicts. :func:`llmbar_kappa_as_published` reproduces them to show exactly what they
are; :func:`llmbar_kappa` gives the correct Cohen's kappa beside them.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd

from judgelab.datasets.llmbar import FOLDER, _evaluator_dir, resolve_split
from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import DataFormatError, fetch_files
from judgelab.errors import ConfigError

__all__ = ["cohen_kappa_point", "llmbar_kappa", "llmbar_kappa_as_published", "llmbar_kappa_comparison",
           "llmbar_published_statistics"]

_COUNT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*=\s*([\d.]+)%\s*$")
_PERCENT = re.compile(r"^\s*([\d.]+)%\s*$")


def llmbar_published_statistics(
    split: str,
    judge: str,
    strategy: str,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
) -> dict[str, float | int]:
    """The numbers of one ``statistics.json``, parsed: counts, n, percentages and kappas.

    Keys: ``<field>_count``, ``<field>_n`` and ``<field>_percent`` for the "k / n = p%" fields
    (correct_False, correct_True, correct_both, equal), ``correct_average_percent``, and the
    four kappa fields as published.
    """
    split = resolve_split(split, data_dir)
    path = f"{_evaluator_dir(split, judge, strategy)}/statistics.json"
    files, _ = fetch_files(FOLDER, [path], data_dir=data_dir, cache_dir=cache_dir, base_url=base_url)
    raw = json.loads(files[path].read_text(encoding="utf-8"))
    parsed: dict[str, float | int] = {}
    for key, value in raw.items():
        if isinstance(value, int | float):
            parsed[key] = float(value)
            continue
        if m := _COUNT.match(str(value)):
            parsed[f"{key}_count"], parsed[f"{key}_n"] = int(m.group(1)), int(m.group(2))
            parsed[f"{key}_percent"] = float(m.group(3))
        elif m := _PERCENT.match(str(value)):
            parsed[f"{key}_percent"] = float(m.group(1))
        else:
            raise DataFormatError(f"{path}: cannot read field {key!r} = {value!r}")
    return parsed


def _orders(result: DatasetResult) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judge winners per order and gold, in LLMBar's "1"/"2"/None encoding, item-aligned."""
    t = result.table
    judge_rows = t[t["judge"] != "gold"]
    judges = sorted(set(judge_rows["judge"].astype(str)))
    if len(judges) != 1:
        raise ConfigError(f"LLMBar's published statistics describe one judge; this result holds {judges}: load each "
                          "judge on its own (datasets.llmbar(split, judge, strategy))")
    wide = judge_rows.pivot(index="item_id", columns="condition", values="winner")
    gold = t[t["judge"] == "gold"].set_index("item_id")["winner"]
    order = result.items["item_id"]
    to_label = {"A": "1", "B": "2"}

    def encode(series: pd.Series) -> np.ndarray:
        return np.array(
            [to_label.get(x) if isinstance(x, str) else None for x in series.reindex(order)], dtype=object
        )

    return encode(wide["original"]), encode(wide["swapped"]), encode(gold)


def llmbar_kappa_as_published(result: DatasetResult) -> dict[str, float]:
    """LLMBar's four kappa fields, reproduced with its encoding quirk (see the module docstring).

    The judge winner is encoded "1" -> 1 and anything else ("2", unreadable) -> 0; gold stays
    1/2. kappa_False/kappa_True compare each order's encoded winners with gold, kappa_average
    is their mean, kappa_agreement compares the two encoded orders with each other. Load the
    Rating* strategies with ``rating_winner="as_published"`` to match the published files.
    """
    original, swapped, gold = _orders(result)

    def quirk(x: np.ndarray) -> np.ndarray:
        return np.array([1 if v == "1" else 0 for v in x])

    gold_int = np.array([int(g) for g in gold])
    k_false = cohen_kappa_point(quirk(original), gold_int)
    k_true = cohen_kappa_point(quirk(swapped), gold_int)
    return {
        "kappa_False": k_false,
        "kappa_True": k_true,
        "kappa_average": (k_false + k_true) / 2,
        "kappa_agreement": cohen_kappa_point(quirk(original), quirk(swapped)),
    }


def llmbar_kappa(result: DatasetResult) -> dict[str, float]:
    """Cohen's kappa of the verdicts as they are: judge vs gold per order, their mean, and order vs order.

    An unscored verdict (or a tie) is its own category, so it counts as disagreement.
    """
    original, swapped, gold = _orders(result)
    t = result.table
    wide = t[t["judge"] != "gold"].pivot(index="item_id", columns="condition", values="winner")
    wide = wide.reindex(result.items["item_id"])

    def as_category(series: pd.Series) -> np.ndarray:
        return np.array([x if isinstance(x, str) else "unscored" for x in series], dtype=object)

    gold_cat = np.array([{"1": "A", "2": "B"}[g] for g in gold], dtype=object)
    k_orig = cohen_kappa_point(as_category(wide["original"]), gold_cat)
    k_swap = cohen_kappa_point(as_category(wide["swapped"]), gold_cat)
    return {
        "kappa_original": k_orig,
        "kappa_swapped": k_swap,
        "kappa_mean": (k_orig + k_swap) / 2,
        "kappa_between_orders": cohen_kappa_point(
            as_category(wide["original"]), as_category(wide["swapped"])
        ),
    }


def llmbar_kappa_comparison(result: DatasetResult) -> pd.DataFrame:
    """LLMBar's published-encoding kappas beside the correct Cohen's kappa, one row per comparison."""
    quirk, correct = llmbar_kappa_as_published(result), llmbar_kappa(result)
    pairs = [
        ("judge vs gold, original order", "kappa_False", "kappa_original"),
        ("judge vs gold, swapped order", "kappa_True", "kappa_swapped"),
        ("judge vs gold, mean of orders", "kappa_average", "kappa_mean"),
        ("original vs swapped order", "kappa_agreement", "kappa_between_orders"),
    ]
    return pd.DataFrame(
        [
            {
                "comparison": label,
                "published_field": q,
                "published_encoding": quirk[q],
                "cohen_kappa": correct[c],
            }
            for label, q, c in pairs
        ]
    )


def cohen_kappa_point(a: np.ndarray, b: np.ndarray) -> float:
    """Unweighted Cohen's kappa (point estimate) over the union of both sequences' categories.

    Only the point estimate is needed to match the published files; for an interval and a test
    use :func:`judgelab.stats.agreement.cohen_kappa`. Returns NaN when expected agreement is 1 (both raters constant on the same category).
    """
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ConfigError("cohen_kappa_point needs two non-empty label sequences of the same length")
    categories = sorted(set(a.tolist()) | set(b.tolist()), key=str)
    index = {c: i for i, c in enumerate(categories)}
    confusion = np.zeros((len(categories), len(categories)))
    np.add.at(confusion, ([index[x] for x in a], [index[x] for x in b]), 1)
    confusion /= confusion.sum()
    observed = np.trace(confusion)
    expected = float(confusion.sum(axis=1) @ confusion.sum(axis=0))
    return float("nan") if expected == 1 else float((observed - expected) / (1 - expected))
