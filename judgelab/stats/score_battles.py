"""Pairwise battles derived from direct scores: within one cluster (a document, a prompt), each pair of systems
that both have a score is one battle, won by the higher score and tied when the scores are equal.

This is how a study that scored every system's output on the same inputs (SummEval: 12 systems x 100
documents) becomes a battles frame that :func:`judgelab.stats.rank_systems` fits, so that a ranking from
scores and a ranking from pairwise verdicts can be drawn side by side. A pair is only compared inside its
cluster (the same source document): two systems never meet across documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats.pairing import EmptyInputError, StatsInputError, is_judgments_table
from judgelab.stats.ranking_tables import by_columns, frame_groups, group_rows, stack_blocks, table_scores

__all__ = ["battles_from_scores"]

BATTLE_COLUMNS = ("system_a", "system_b", "score_a", "score_b", "winner")


def _pairs(frame: pd.DataFrame, *, system: str, score: str, cluster: str, where: str) -> pd.DataFrame:
    """Every within-cluster pair of systems (first by name as A) with its two scores and the winner."""
    values = pd.to_numeric(frame[score], errors="coerce")
    bad = values.isna() & frame[score].notna()
    if bad.any() or values.isna().any():
        shown = frame.loc[bad | values.isna(), score].iloc[0]
        raise StatsInputError(f"{where}column {score!r} holds {shown!r}, which is not a number: battles compare "
                              f"numeric scores (fill or drop the row first)")
    if frame[system].isna().any() or frame[cluster].isna().any():
        column = system if frame[system].isna().any() else cluster
        raise StatsInputError(f"{where}a row has no {column!r} value: every score needs its system and its cluster")
    data = pd.DataFrame({"cluster": frame[cluster].to_numpy(), "system": frame[system].astype(str).to_numpy(),
                         "score": values.to_numpy(float)})
    twice = data.duplicated(["cluster", "system"], keep=False)
    if twice.any():
        first = data[twice].iloc[0]
        raise StatsInputError(f"{where}system {first['system']!r} has {int(twice.sum())} scores in {cluster} "
                              f"{first['cluster']!r} and others: one score per system and {cluster} (average "
                              f"repeats or split them with by= first)")
    both = data.merge(data, on="cluster", suffixes=("_a", "_b"))
    both = both[both["system_a"] < both["system_b"]]
    winner = np.where(both["score_a"] > both["score_b"], "A", np.where(both["score_a"] < both["score_b"], "B", "tie"))
    out = pd.DataFrame({cluster: both["cluster"].to_numpy(), "system_a": both["system_a"].to_numpy(),
                        "system_b": both["system_b"].to_numpy(), "score_a": both["score_a"].to_numpy(),
                        "score_b": both["score_b"].to_numpy(), "winner": winner})
    return out.sort_values([cluster, "system_a", "system_b"], kind="stable").reset_index(drop=True)


def battles_from_scores(
    table: pd.DataFrame,
    *,
    system: str = "system",
    cluster: str = "document_id",
    score: str = "score",
    judge: str | None = None,
    by: str | Sequence[str] | None = None,
    unscored: Literal["drop"] | None = None,
) -> pd.DataFrame:
    """A battles frame from direct scores: one battle per pair of systems scored in the same ``cluster``.

    ``table``: a judgments table (one row per item and judge; ``system`` names the item's system, ``cluster``
    the unit the systems share, e.g. ``document_id``) or a plain frame with those columns. On a judgments table
    ``judge=`` picks one judge when there are several, or ``by="judge"`` derives battles per judge side by side;
    several criteria, repeats or rubrics are refused unless ``by=`` splits on them; unscored rows are refused
    unless ``unscored="drop"`` (their pairs are then absent; the count is in ``frame.attrs["n_unscored"]``).

    Returns columns ``by`` keys (and ``judge`` on a judgments table), ``cluster``, ``system_a`` (first by name),
    ``system_b``, ``score_a``, ``score_b`` and ``winner`` ("A", "B" or "tie"), ready for
    ``rank_systems(battles, system_a="system_a", system_b="system_b", winner="winner", cluster=cluster)``.
    """
    if not isinstance(table, pd.DataFrame):
        raise StatsInputError(f"battles_from_scores needs a pandas DataFrame, got {type(table).__name__}")
    for name, value in (("system", system), ("cluster", cluster), ("score", score)):
        if not isinstance(value, str) or not value:
            raise StatsInputError(f"{name}= names a column; got {value!r}")
    if len({system, cluster, score}) < 3:
        raise StatsInputError(f"system={system!r}, cluster={cluster!r} and score={score!r} must name three "
                              f"different columns")
    sources: list[tuple[dict[str, Any], pd.DataFrame]] = []
    n_unscored = 0
    if is_judgments_table(table):
        for keys, rows in group_rows(table, judge=judge, by=by, value=score):
            read = table_scores(rows, system=system, score=score, unscored=unscored, carry=[cluster])
            n_unscored += read.n_unscored
            sources.append((keys, read.frame))
    else:
        if judge is not None or unscored is not None:
            raise StatsInputError("judge= and unscored= read a judgments table (item_id, judge, criterion, status "
                                  "columns); for a plain frame of scores, filter it first and leave them out")
        missing = [c for c in (system, cluster, score, *by_columns(by)) if c not in table.columns]
        if missing:
            raise StatsInputError(f"the frame has no column {missing[0]!r} (its columns: "
                                  f"{', '.join(map(str, list(table.columns)[:16]))})")
        if table.empty:
            raise EmptyInputError("the frame has no rows: no scores to compare")
        sources = frame_groups(table, by)
    blocks = []
    for keys, frame in sources:
        where = ", ".join(f"{k}={v!r}" for k, v in keys.items())
        blocks.append((keys, _pairs(frame, system=system, score=score, cluster=cluster,
                                    where=f"{where}: " if where else "")))
    out = stack_blocks(blocks)
    if out.empty:
        raise EmptyInputError(f"no {cluster} holds scores of two systems: there is no battle to derive")
    out.attrs["n_unscored"] = n_unscored
    return out
