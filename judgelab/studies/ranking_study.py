"""SummEval's 12 summarisation systems ranked by the experts and by each released LLM judge.

Three rankings per rater and criterion (coherence, consistency, fluency, relevance): by mean score
(:func:`judgelab.stats.rank_by_score`), and by a Bradley-Terry fit (:func:`judgelab.stats.rank_systems`) to the
per-document battles the scores imply (:func:`judgelab.stats.battles_from_scores`: two systems' summaries of
one document, the higher score wins, equal scores tie). "human" is the mean of the 3 expert ratings. Every
interval and rank interval resamples documents (the 12 summaries of one article share their source), and
:func:`judgelab.stats.ranking_agreement` gives Kendall's tau between the experts' and each judge's ranking.
Criteria are never pooled: each criterion is its own question.
"""

from __future__ import annotations

import pandas as pd

from judgelab import stats
from judgelab.errors import ConfigError
from judgelab.studies.summeval_study import HUMAN, SummEvalStudy

__all__ = ["CRITERIA", "RANKERS", "battle_rankings", "corrected_battles", "expert_win_rates", "ranking_agreements", "score_rankings",
           "summeval_battles"]

CRITERIA: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")
RANKERS = "human (mean of 3 experts) and each released judge"


def _rows(study: SummEvalStudy) -> pd.DataFrame:
    """The expert mean and every judge's rows (the individual experts are left to the expert mean)."""
    table = study.table
    return table[table["judge"].astype(str).isin([HUMAN, *study.judges])]


def _order(frame: pd.DataFrame, study: SummEvalStudy) -> pd.DataFrame:
    """Rows with the raters in a fixed order (experts first, then the judges as the study lists them)."""
    rank = {name: k for k, name in enumerate([HUMAN, *study.judges])}
    return frame.sort_values(["criterion", "judge"], key=lambda c: c.map(rank) if c.name == "judge" else c,
                             kind="stable").reset_index(drop=True)


def score_rankings(study: SummEvalStudy, *, n_resamples: int, seed: int) -> pd.DataFrame:
    """Each rater's ranking of the systems by mean score, per criterion, documents resampled."""
    out = stats.rank_by_score(_rows(study), system="system", cluster="document_id", by=["judge", "criterion"],
                              n_resamples=n_resamples, seed=seed)
    return _order(out, study)


def summeval_battles(study: SummEvalStudy) -> pd.DataFrame:
    """The per-document battles every rater's scores imply (judge, criterion, document_id, systems, winner)."""
    return stats.battles_from_scores(_rows(study), system="system", cluster="document_id", by=["judge", "criterion"])


def battle_rankings(battles: pd.DataFrame, study: SummEvalStudy, *, n_resamples: int, seed: int) -> pd.DataFrame:
    """Bradley-Terry rankings (ties as half a win) of each rater's per-document battles, per criterion."""
    out = stats.rank_systems(battles, system_a="system_a", system_b="system_b", winner="winner",
                             cluster="document_id", by=["judge", "criterion"], n_resamples=n_resamples, seed=seed)
    return _order(out, study)


def expert_win_rates(battles: pd.DataFrame, criterion: str, *, n_resamples: int, seed: int) -> pd.DataFrame:
    """The experts' pairwise win-rate matrix for one criterion, documents resampled."""
    part = battles[(battles["judge"] == HUMAN) & (battles["criterion"] == criterion)]
    return stats.win_rate_matrix(part, system_a="system_a", system_b="system_b", winner="winner",
                                 cluster="document_id", n_resamples=n_resamples, seed=seed)


def ranking_agreements(study: SummEvalStudy, *, n_resamples: int, seed: int, top_k: int = 3) -> pd.DataFrame:
    """Kendall's tau between the experts' and each judge's score ranking, per criterion, documents resampled
    for both at once; and each one's probability of a changed top-k set."""
    rows = _rows(study)
    frames = []
    for criterion in CRITERIA:
        part = rows[rows["criterion"] == criterion]
        for judge in study.judges:
            result = stats.ranking_agreement(part, [HUMAN, judge], score="score", system="system",
                                             cluster="document_id", top_k=top_k, n_resamples=n_resamples, seed=seed)
            result.insert(0, "criterion", criterion)
            frames.append(result)
    return pd.concat(frames, ignore_index=True)


def corrected_battles(battles: pd.DataFrame, judge: str, criterion: str, *, n_labelled: int,
                      seed: int) -> pd.DataFrame:
    """One criterion's battles with the judge's verdict on every battle (``winner``) and the experts' verdict
    (``human``) kept on ``n_labelled`` battles drawn at random (seeded), as a study that paid for that many human
    comparisons would have them; ``labelled`` marks them."""
    part = battles[battles["criterion"] == criterion]
    key = ["document_id", "system_a", "system_b"]
    judged = part[part["judge"] == judge][[*key, "winner"]]
    human = part[part["judge"] == HUMAN][[*key, "winner"]].rename(columns={"winner": "human"})
    both = judged.merge(human, on=key, how="inner", validate="one_to_one")
    if len(both) < n_labelled:
        raise ConfigError(f"only {len(both)} battles hold both verdicts; cannot label {n_labelled}")
    chosen = both.sample(n=n_labelled, random_state=seed).index
    both["labelled"] = both.index.isin(chosen)
    both.loc[~both["labelled"], "human"] = None
    return both.reset_index(drop=True)
