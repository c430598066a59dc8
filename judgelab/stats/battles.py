"""Reading a battles frame (one row per pairwise battle between two systems) for the ranking statistics.

A battle names the system shown as A, the system shown as B and the winner: ``A``, ``B`` or ``tie``
(case-insensitive), or Chatbot Arena's spellings ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``.
Every other winner value, a missing system name, a system on both sides of one battle, a missing
cluster label or a non-numeric covariate is refused in one sentence: no battle is ever dropped
silently (``ties="drop"`` drops ties by name and counts them).

The battles are put in a canonical form before anything is computed: each battle is oriented so that
its first system comes first by name (the winner flipped and the covariates negated when it is turned
round), and the battles are sorted. Results therefore do not depend on the frame's row order nor on which
system was shown first; only :func:`judgelab.stats.ranking.elo_ratings`, which is order-dependent by
definition, reads the frame's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from judgelab.stats.pairing import EmptyInputError, StatsInputError

__all__ = ["Battles", "TiePolicy", "read_battles", "winner_outcomes"]

TiePolicy = Literal["half", "davidson", "drop"]
TIE_POLICIES: tuple[str, ...] = ("half", "davidson", "drop")
_WINNERS = {"a": 1.0, "model_a": 1.0, "b": 0.0, "model_b": 0.0, "tie": 0.5, "tie (bothbad)": 0.5}


@dataclass(frozen=True)
class Battles:
    """Battles in canonical form: system codes, outcomes for the first system, covariates, clusters."""

    systems: list[str]  # names, sorted; codes index this list
    a: np.ndarray  # int code of the first system (first by name)
    b: np.ndarray  # int code of the second system
    outcome: np.ndarray  # 1.0 first system wins, 0.0 second wins, 0.5 tie
    covariates: np.ndarray  # (n, P): value for the first system minus the second
    covariate_names: list[str]
    cluster: np.ndarray | None  # int cluster code per battle
    cluster_name: str | None
    n_ties_dropped: int
    cluster_names: tuple[str, ...] = ()  # the label of each cluster code, sorted

    @property
    def n(self) -> int:
        return len(self.a)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def battles_of(self, code: int) -> int:
        """How many battles the system took part in."""
        return int(np.sum((self.a == code) | (self.b == code)))


def _check_columns(battles: pd.DataFrame, columns: Sequence[str]) -> None:
    if not isinstance(battles, pd.DataFrame):
        raise StatsInputError(f"battles must be a pandas DataFrame with one row per battle, got "
                              f"{type(battles).__name__}")
    missing = [c for c in columns if c not in battles.columns]
    if missing:
        shown = ", ".join(map(str, list(battles.columns)[:12])) or "none"
        raise StatsInputError(f"the battles frame has no column {missing[0]!r} (its columns: {shown}); name the "
                              f"right column with system_a=, system_b=, winner=, cluster= or covariates=")
    if len(battles) == 0:
        raise EmptyInputError("the battles frame has no rows: there is nothing to rank")


def _system_names(values: pd.Series, column: str) -> np.ndarray:
    missing = values.isna().to_numpy()
    if missing.any():
        rows = list(values.index[missing][:5])
        raise StatsInputError(f"{int(missing.sum())} battles have no system name in column {column!r} (rows "
                              f"{rows}); fill in the system or remove those battles")
    return values.astype(str).to_numpy()


def winner_outcomes(values: pd.Series, column: str) -> np.ndarray:
    """1.0 (A wins), 0.0 (B wins), 0.5 (tie) per battle; any other value is refused, naming it."""
    keys = values.map(lambda v: v.strip().lower() if isinstance(v, str) else v)
    known = keys.isin(list(_WINNERS))
    if not known.all():
        bad = values[~known]
        counts = bad.astype(object).where(bad.notna(), "<missing>").astype(str).value_counts()
        shown = ", ".join(f"{v!r} ({c} battles)" for v, c in counts.head(5).items())
        raise StatsInputError(f"column {column!r} holds winners that are not A, B or tie (nor model_a, model_b, "
                              f"'tie (bothbad)'): {shown}; recode or remove those battles")
    return keys.map(_WINNERS).to_numpy(dtype=float)


def _covariate_matrix(battles: pd.DataFrame, covariates: Sequence[str]) -> np.ndarray:
    columns = []
    for name in covariates:
        values = battles[name]
        if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
            raise StatsInputError(f"covariate {name!r} is not numeric (dtype {values.dtype}); style control needs "
                                  f"a number per battle (the value for A minus the value for B)")
        numbers = values.to_numpy(dtype=float, na_value=np.nan)
        if not np.isfinite(numbers).all():
            raise StatsInputError(f"covariate {name!r} is missing or infinite in {int((~np.isfinite(numbers)).sum())}"
                                  f" battles; fill it in or remove those battles")
        columns.append(numbers)
    return np.column_stack(columns) if columns else np.zeros((len(battles), 0))


def read_battles(
    battles: pd.DataFrame,
    *,
    system_a: str,
    system_b: str,
    winner: str,
    cluster: str | None = None,
    covariates: Sequence[str] = (),
    ties: TiePolicy = "half",
) -> Battles:
    """Validate the battles frame and put it in canonical form (see the module)."""
    if ties not in TIE_POLICIES:
        raise StatsInputError(f"ties must be 'half', 'davidson' or 'drop', got {ties!r}")
    if isinstance(covariates, str):
        covariates = [covariates]
    covariates = list(covariates)
    if len(set(covariates)) != len(covariates):
        raise StatsInputError(f"covariates names a column twice: {covariates}")
    _check_columns(battles, [system_a, system_b, winner, *([cluster] if cluster is not None else []), *covariates])
    first = _system_names(battles[system_a], system_a)
    second = _system_names(battles[system_b], system_b)
    same = first == second
    if same.any():
        raise StatsInputError(f"{int(same.sum())} battles name one system on both sides ({first[same][0]!r} "
                              f"at row {battles.index[same][0]!r}); a system cannot battle itself: remove them")
    outcome = winner_outcomes(battles[winner], winner)
    x = _covariate_matrix(battles, covariates)
    labels = None
    if cluster is not None:
        if battles[cluster].isna().any():
            raise StatsInputError(f"{int(battles[cluster].isna().sum())} battles have no {cluster!r} (the cluster "
                                  f"column); fill it in or remove those battles")
        labels = battles[cluster].astype(str).to_numpy()
    n_ties = 0
    if ties == "drop":
        keep = outcome != 0.5
        n_ties = int((~keep).sum())
        if not keep.any():
            raise EmptyInputError(f"all {n_ties} battles are ties and ties='drop' drops them; use ties='half' or "
                                  f"ties='davidson'")
        only_ties = sorted(set(np.concatenate([first, second])) - set(np.concatenate([first[keep], second[keep]])))
        if only_ties:
            raise StatsInputError(f"system(s) {', '.join(map(repr, only_ties))} have only ties, which ties='drop' "
                                  f"drops, leaving them unranked; use ties='half' or ties='davidson'")
        first, second, outcome, x = first[keep], second[keep], outcome[keep], x[keep]
        labels = None if labels is None else labels[keep]
    # canonical orientation: the first system by name comes first
    turn = first > second
    first, second = np.where(turn, second, first), np.where(turn, first, second)
    outcome = np.where(turn, 1.0 - outcome, outcome)
    x = np.where(turn[:, None], -x, x)
    systems = sorted(set(first) | set(second))
    code = {s: i for i, s in enumerate(systems)}
    a = np.array([code[s] for s in first], dtype=np.int64)
    b = np.array([code[s] for s in second], dtype=np.int64)
    cluster_codes = None
    names: list[str] = []
    if labels is not None:
        names = sorted(set(labels))
        cluster_code = {c: i for i, c in enumerate(names)}
        cluster_codes = np.array([cluster_code[c] for c in labels], dtype=np.int64)
    # canonical row order: identical battles are interchangeable, so resampling ignores the frame's order
    keys = [*(x[:, j] for j in range(x.shape[1]) if x.size), outcome, b, a]
    if cluster_codes is not None:
        keys.append(cluster_codes)
    order = np.lexsort(keys)  # the last key sorts first: cluster, then systems, outcome, covariates
    return Battles(
        systems=systems, a=a[order], b=b[order], outcome=outcome[order], covariates=x[order],
        covariate_names=covariates, cluster=None if cluster_codes is None else cluster_codes[order],
        cluster_name=cluster, n_ties_dropped=n_ties, cluster_names=tuple(names),
    )
