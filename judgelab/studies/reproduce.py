"""`judgelab reproduce`: regenerate every figure and table the notebooks show, from data, without notebooks.

Each figure is written as PNG and PDF with a sidecar ``<name>.json`` (the notebook that shows it,
its caption, the data's source repository and commit, the command and every parameter); each
table as CSV. Resampling is seeded, so a rerun on the same data gives the same numbers. The live
parts of the notebooks (the embedded SmolLM2 plumbing judge) are shown as tables there and are
deliberately not figures: they demonstrate mechanics, not judge quality.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# No matplotlib.use() here: importing this module in Jupyter must not switch the notebook's backend.
# Every figure is only ever saved and then closed, so no window opens on any backend.
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from judgelab.errors import ConfigError
from judgelab.stats import DEFAULT_RESAMPLES
from judgelab.studies import figures, llmbar_study, openqa_study, ranking_study, summeval_study
from judgelab.studies.paper import PAPER_CITATION, PAPER_SHORT, paper_table1
from judgelab.viz import plots, ranking_plots
from judgelab.viz.style import DPI, FIG_WIDTH, finish, use_style

__all__ = ["COMMAND", "GROUPS", "Artifact", "Settings", "reproduce"]

COMMAND = "judgelab reproduce"


@dataclass
class Artifact:
    """One output: a figure (PNG+PDF+sidecar) or a table (CSV), and where it is shown."""

    name: str
    notebook: str  # the notebook(s) that show it, comma-separated
    caption: str
    sources: list[dict[str, str]]
    figure: Figure | None = None
    table: pd.DataFrame | None = None
    tables: list[str] = field(default_factory=list)  # CSV names a figure is drawn from
    parameters: dict[str, Any] = field(default_factory=dict)  # settings of this figure beyond the command's


@dataclass(frozen=True)
class Settings:
    data_dir: str | None
    n_resamples: int
    seed: int


def _ci(settings: Settings) -> str:
    return f"95% percentile bootstrap CIs, {settings.n_resamples} resamples, seed {settings.seed}"


def _src_text(sources: list[dict[str, str]]) -> str:
    return "; ".join(f"{s['repo']}@{s['commit'][:12]}" for s in sources)


def summeval_artifacts(settings: Settings) -> list[Artifact]:
    """01_editorial_summary (and 00_quickstart): the paper's meta-evaluation redone on SummEval."""
    study = summeval_study.load_study(settings.data_dir)
    src = summeval_study.sources(study)
    paper_src = [{"repo": PAPER_SHORT, "commit": "Table 1 as printed", "license": "quoted numbers",
                  "location": PAPER_CITATION}]
    nb = "01_editorial_summary"
    kw = dict(n_resamples=settings.n_resamples, seed=settings.seed)
    pooled = summeval_study.meta_evaluation_table(study, **kw)
    per_criterion = summeval_study.meta_evaluation_table(study, by_criterion=True, **kw)
    meta = pd.concat([pooled, per_criterion], ignore_index=True)
    wide = summeval_study.meta_wide(pooled)
    paper = paper_table1()
    dist = summeval_study.score_distribution_table(study)
    bias = summeval_study.positive_bias_table(study, **kw)
    agreement = summeval_study.model_agreement_table(study, **kw)
    base = f"SummEval (1,200 summaries x 4 criteria; human = mean of 3 experts); data {_src_text(src)}."
    ci = _ci(settings) + ", documents resampled"
    quick = dist[(dist["judge"] == "gpt-3.5-turbo-0301") & (dist["criterion"] == "coherence")]
    quick_stat = per_criterion[(per_criterion["judge"] == "gpt-3.5-turbo-0301") & (per_criterion["criterion"] ==
                                                                             "coherence")]
    return [
        Artifact("summeval_meta", nb, "Per-judge MAE and Spearman rho (pooled and per criterion).", src, table=meta),
        Artifact("summeval_meta_forest", nb, f"Table-1 style: MAE and rho vs the expert mean, pooled over criteria. "
                 f"{base} {ci}.", src, figure=plots.plot_meta_forest(pooled, caption_text=f"{base} {ci}."),
                 tables=["summeval_meta"]),
        Artifact("summeval_meta_by_criterion", nb, f"MAE and rho per criterion. {base} {ci}.", src,
                 figure=plots.plot_meta_forest(per_criterion, title="Judges vs human experts, per criterion",
                                               caption_text=f"{base} {ci}."), tables=["summeval_meta"]),
        Artifact("summeval_mae_vs_rho", nb, f"Figure-1 style. {base} {ci}.", src,
                 figure=figures.plot_mae_vs_rho(wide, title="SummEval: MAE vs Spearman's ρ",
                                                caption_text=f"{base} {ci}.").figure, tables=["summeval_meta"]),
        Artifact("summeval_metric_vs_size", nb, f"Figures-2/3 style. {base} {ci}.", src,
                 figure=figures.plot_metric_vs_size(wide, title="SummEval: MAE and ρ vs judge size",
                                                    caption_text=f"{base} {ci}."), tables=["summeval_meta"]),
        Artifact("paper_table1", nb, f"{PAPER_SHORT}'s Table 1 as printed: {PAPER_CITATION}.", paper_src,
                 table=paper),
        Artifact("paper_vs_summeval", nb, f"Left: {PAPER_CITATION} (no CIs published; hollow = p >= 0.05). "
                 f"Right: the same plot for the SummEval redo. {base} {ci}.", paper_src + src,
                 figure=figures.plot_paper_side_by_side(paper, wide, caption_text=f"Left: {PAPER_SHORT}, Table 1 as "
                                                        f"printed. Right: {base} {ci}."),
                 tables=["paper_table1", "summeval_meta"]),
        Artifact("paper_metric_vs_size", nb, f"Figures 2-3 from the paper's Table 1: {PAPER_CITATION}.", paper_src,
                 figure=figures.plot_metric_vs_size(paper.rename(columns={"spearman_rho": "rho", "model": "judge"}),
                                                    title="Paper Table 1: MAE and ρ vs judge size",
                                                    caption_text=f"{PAPER_SHORT}, Table 1 as printed (no CIs published)."),
                 tables=["paper_table1"]),
        Artifact("summeval_score_distributions", nb, "Score shares per judge and criterion.", src, table=dist),
        Artifact("summeval_score_distributions_fig", nb, f"Figures-4/5/6 style. {base} Human bars pool the 3 "
                 "experts' individual ratings.", src,
                 figure=plots.plot_score_distributions(dist, caption_text=f"{base} Human bars pool the 3 experts' "
                                                       "individual 1-5 ratings."),
                 tables=["summeval_score_distributions"]),
        Artifact("summeval_positive_bias", nb, "Positive-bias tests per judge and criterion.", src, table=bias),
        Artifact("summeval_positive_bias_fig", f"{nb}, 06_sycophancy_and_positive_bias", f"Mean judge - human per criterion. {base} {ci}; t-test, "
                 "Wilcoxon and sign tests in the CSV.", src,
                 figure=plots.plot_positive_bias_forest(bias, caption_text=f"{base} {ci}.").figure,
                 tables=["summeval_positive_bias"]),
        Artifact("summeval_model_agreement", nb, "Spearman rho between every pair of judges.", src, table=agreement),
        Artifact("summeval_model_agreement_fig", nb, f"Model-to-model agreement. {base} Bands: {PAPER_SHORT}'s "
                 "(Negligible < 0.3 <= Low < 0.5 <= Medium < 0.7 <= High).", src,
                 figure=plots.plot_agreement_heatmap(agreement, caption_text=f"{base} Labels: agreement bands "
                                                     "(Negligible < .3 <= Low < .5 <= Medium < .7 <= High).").figure,
                 tables=["summeval_model_agreement"]),
        Artifact("quickstart_statistic", "00_quickstart", "gpt-3.5-turbo vs experts on coherence.", src,
                 table=quick_stat),
        Artifact("quickstart_coherence", "00_quickstart", f"gpt-3.5-turbo vs human experts, coherence. {base}",
                 src, figure=plots.plot_score_shares(quick, title="SummEval coherence: gpt-3.5-turbo vs experts",
                                                     caption_text=base).figure, tables=["summeval_score_distributions"]),
    ]


def llmbar_artifacts(settings: Settings) -> list[Artifact]:
    """05_position_and_length_bias: LLMBar accuracy, position consistency and length."""
    runs = llmbar_study.load_runs(settings.data_dir)
    src = llmbar_study.sources(runs)
    nb = "05_position_and_length_bias"
    accuracy = llmbar_study.accuracy_table(runs, n_resamples=settings.n_resamples, seed=settings.seed)
    length = llmbar_study.length_table(runs)
    base = f"LLMBar released GPT-4/ChatGPT verdicts, both orders; data {_src_text(src)}."
    acc_ci = ("unreadable verdicts count as ties (LLMBar's convention); mean accuracy: " + _ci(settings) +
              ", items resampled; consistency: exact Clopper-Pearson 95%")
    return [
        Artifact("llmbar_accuracy", nb, "pairwise_accuracy per split x judge x strategy.", src, table=accuracy),
        Artifact("llmbar_accuracy_fig", nb, f"{base} {acc_ci}.", src,
                 figure=plots.plot_pairwise_accuracy_grid(accuracy, row="judge", y="split", hue="strategy",
                                                          caption_text=f"{base} {acc_ci}."),
                 tables=["llmbar_accuracy"]),
        Artifact("llmbar_length", nb, "Length GLM per judge x strategy and for the gold labels.", src, table=length),
        Artifact("llmbar_length_fig", nb, f"{base} Logistic GLM, Wald 95% CIs, cluster-robust by item.", src,
                 figure=plots.plot_length_effect(length, by=("judge", "strategy"),
                                                 caption_text=f"{base} 5 LLMBar splits pooled; logistic GLM "
                                                 "of choosing output 1 on the word-count difference; Wald 95% CIs, "
                                                 "cluster-robust by item (judges).").figure, tables=["llmbar_length"]),
    ]


def openqa_artifacts(settings: Settings) -> list[Artifact]:
    """04_reference_gold: OpenQA-eval judges against the human annotators."""
    results = openqa_study.load_judges(settings.data_dir)
    src = openqa_study.sources(results)
    nb = "04_reference_gold"
    agreement = openqa_study.agreement_table(results, n_resamples=settings.n_resamples, seed=settings.seed)
    errors = openqa_study.error_counts(results)
    base = f"OpenQA-eval NQ301 (1,490 question/answer pairs); data {_src_text(src)}."
    ci = _ci(settings) + ", questions resampled"
    return [
        Artifact("openqa_agreement", nb, "Agreement and Cohen's kappa with the human verdict.", src, table=agreement),
        Artifact("openqa_agreement_fig", nb, f"{base} {ci}.", src,
                 figure=plots.plot_agreement_forest(agreement, caption_text=f"{base} {ci}."),
                 tables=["openqa_agreement"]),
        Artifact("openqa_errors", nb, "Outcome counts per judge.", src, table=errors),
        Artifact("openqa_errors_fig", nb, f"{base} Unscored: the reply starts with neither Yes nor No.", src,
                 figure=plots.plot_error_breakdown(errors, caption_text=f"{base} Unscored = the reply starts with "
                                                   "neither Yes nor No.").figure, tables=["openqa_errors"]),
    ]


def variants_artifacts(settings: Settings) -> list[Artifact]:
    """09_rubric_variants: SummEval's released prompt styles compared as rubric variants, held out."""
    from judgelab.studies import variants_study

    styles = variants_study.load_prompt_styles(settings.data_dir)
    src = styles.sources
    nb = "09_rubric_variants"
    table = variants_study.prompt_style_table(styles.table, n_resamples=settings.n_resamples, seed=settings.seed)
    base = (f"SummEval, {variants_study.STYLE_JUDGE}'s {len(styles.styles)} released prompt styles vs the expert "
            f"mean; selected on half of the 100 documents, reported on the other half; data {_src_text(src)}.")
    ci = (f"95% percentile bootstrap CIs resampling whole documents, {settings.n_resamples} resamples, seed "
          f"{settings.seed}; p_adj: Holm over the styles vs {variants_study.BASE_STYLE}")
    pooled = table[table["criterion"] == "pooled"]
    per_criterion = table[table["criterion"] != "pooled"]
    return [
        Artifact("variants_prompt_styles", nb, "compare_rubrics per criterion and pooled: each style's held-out "
                 "Spearman rho and its difference from rts.", src, table=table),
        Artifact("variants_prompt_styles_fig", nb, f"Pooled over the 4 criteria. {base} {ci}.", src,
                 figure=plots.plot_rubric_comparison(pooled, title="SummEval prompt styles (gpt-3.5), held out",
                                                     caption_text=f"{base} {ci}.").figure,
                 tables=["variants_prompt_styles"]),
        Artifact("variants_prompt_styles_by_criterion", nb, f"Per criterion. {base} {ci}.", src,
                 figure=plots.plot_rubric_comparison(per_criterion, group="criterion",
                                                     title="SummEval prompt styles per criterion, held out",
                                                     caption_text=f"{base} {ci}.").figure,
                 tables=["variants_prompt_styles"]),
    ]


def corrected_artifacts(settings: Settings) -> list[Artifact]:
    """08_how_good_is_my_system: judge-corrected means checked against the all-human value on released data."""
    from judgelab.studies import corrected_study as cs

    cases = cs.load_cases(settings.data_dir)
    src = cs.sources(cases)
    nb = "08_how_good_is_my_system"
    n_draws, alpha = 500, 0.15
    draws = pd.concat([cs.hidden_label_draws(case, n_labels=cs.HIDDEN_LABELS[name], n_draws=n_draws,
                                             seed=settings.seed) for name, case in cases.items()], ignore_index=True)
    coverage = cs.coverage_table(draws)
    one = pd.concat([cs.one_draw(case, n_labels=cs.HIDDEN_LABELS[name], seed=settings.seed)
                     for name, case in cases.items()], ignore_index=True)
    budget = pd.concat([cs.budget_curve(cases[name], n_grid=(50, 100, 200, 400, 800), n_draws=100, seed=settings.seed)
                        for name in ("SummEval coherence", "OpenQA")], ignore_index=True)
    cascade = cs.llmbar_cascade(settings.data_dir, alpha=alpha, delta=0.1, n_splits=200, seed=settings.seed,
                                n_resamples=settings.n_resamples)
    alt = cs.alt_test_table(settings.data_dir, epsilons=(0.1, 0.2))
    base = (f"Released data where every item has a human label (SummEval coherence, OpenQA, LLMBar); data "
            f"{_src_text(src)}.")
    hidden = ", ".join(f"{k} {v}" for k, v in cs.HIDDEN_LABELS.items())
    draw_text = (f"All but n labels hidden at random ({hidden}), {n_draws} draws, seed {settings.seed}; 95% intervals "
                 "(t, cluster-robust by document/question where the case has clusters); coverage: share of draws "
                 "whose interval holds the all-human value, Wilson 95% interval")
    arts = [
        Artifact("corrected_coverage", nb, f"Coverage of the all-human value per case and method. {draw_text}.",
                 src, table=coverage),
        Artifact("corrected_coverage_fig", nb, f"{base} {draw_text}.", src,
                 figure=plots.plot_corrected_coverage(coverage, title="Corrected intervals vs the all-human value",
                                                      caption_text=f"{base} {draw_text}.").figure,
                 tables=["corrected_coverage"]),
        Artifact("corrected_one_draw", nb, "corrected_mean on one draw per case (seeded), with the all-human value.",
                 src, table=one),
    ]
    for name, case in cases.items():
        slug = name.split()[0].lower()
        text = (f"{case.description}. {cs.HIDDEN_LABELS[name]} labels visible (one seeded draw, seed "
                f"{settings.seed}); dashed: the all-human value. Data {_src_text([case.source])}.")
        arts.append(Artifact(f"corrected_one_draw_{slug}", nb, text, [case.source],
                             figure=plots.plot_corrected_intervals(one[one["case"] == name], title=name,
                                                                   caption_text=text).figure,
                             tables=["corrected_one_draw"]))
    arts.append(Artifact("corrected_label_budget", nb, "Interval width vs number of labels: projected from a "
                         "100-label pilot and measured over 100 draws per size.", src, table=budget))
    for name in ("SummEval coherence", "OpenQA"):
        slug = name.split()[0].lower()
        text = (f"{name}: 95% interval width vs gold labels; lines projected from one 100-label pilot "
                f"(stats.projected_width), points the mean width over 100 draws, seed {settings.seed}. {base}")
        arts.append(Artifact(f"corrected_label_budget_{slug}", nb, text, src,
                             figure=plots.plot_label_budget(budget[budget["case"] == name], title=f"{name}: label "
                                                            "budget", caption_text=text).figure,
                             tables=["corrected_label_budget"]))
    cascade_text = (f"LLMBar (419 pairs): ChatGPT (position consistency) -> GPT-4 (votes over 6 strategies x 2 "
                    f"orders) -> humans; Learn-then-Test thresholds (alpha {alpha}, delta 0.1) certified on a random "
                    f"half, checked on the other, 200 splits, seed {settings.seed}. {base}")
    arts += [
        Artifact("corrected_cascade_first_split", nb, "The cascade report of the first split (agreement CI: "
                 f"{_ci(settings)}).", src, table=cascade["first_split"]),
        Artifact("corrected_cascade_splits", nb, f"Every split. {cascade_text}", src, table=cascade["splits"]),
        Artifact("corrected_cascade_fig", nb, cascade_text, src,
                 figure=plots.plot_cascade_splits(cascade["splits"], alpha=alpha, caption_text=cascade_text).figure,
                 tables=["corrected_cascade_splits"]),
        Artifact("corrected_alt_test", nb, "The Alt-Test (Calderon et al. 2025) of each judge against SummEval's 3 "
                 "experts and OpenQA's 3 annotators at epsilon 0.1 and 0.2.", src, table=alt),
    ]
    return arts


def _per_criterion(draw: Callable[[str, Any], None], caption_text: str, *, height: float) -> Figure:
    """A 2 x 2 figure, one panel per SummEval criterion, each drawn by ``draw(criterion, ax)``."""
    with use_style():
        fig, axes = plt.subplots(2, 2, figsize=(FIG_WIDTH * 1.9, height))
        for criterion, ax in zip(ranking_study.CRITERIA, axes.ravel(), strict=True):
            draw(criterion, ax)
        fig.tight_layout()
        return finish(fig, caption_text)


def ranking_artifacts(settings: Settings) -> list[Artifact]:
    """10_which_system_is_best: SummEval's 12 systems ranked by the experts and by each judge."""
    study = summeval_study.load_study(settings.data_dir)
    src = summeval_study.sources(study)
    nb = "10_which_system_is_best"
    kw = dict(n_resamples=settings.n_resamples, seed=settings.seed)
    by_score = ranking_study.score_rankings(study, **kw)
    battles = ranking_study.summeval_battles(study)
    by_battles = ranking_study.battle_rankings(battles, study, **kw)
    agreement = ranking_study.ranking_agreements(study, **kw)
    win_rates = ranking_study.expert_win_rates(battles, "relevance", **kw)
    base = (f"SummEval: 12 systems x 100 documents; human = mean of 3 experts; judges' rate-then-explain scores; "
            f"data {_src_text(src)}.")
    ci = _ci(settings) + ", documents resampled; rank intervals: the ranks taken in the central 95% of resamples"
    human = by_score[by_score["judge"] == summeval_study.HUMAN]
    bt_human = by_battles[by_battles["judge"] == summeval_study.HUMAN]

    def leaderboard(frame: pd.DataFrame, what: str) -> Callable[[str, Any], None]:
        def draw(criterion: str, ax: Any) -> None:
            ranking_plots.plot_leaderboard(frame[frame["criterion"] == criterion], ax=ax, title=f"{criterion} ({what})")
        return draw

    def bump(criterion: str, ax: Any) -> None:
        ranking_plots.plot_ranking_by_judge(by_score[by_score["criterion"] == criterion], ax=ax, title=criterion)

    return [
        Artifact("ranking_by_score", nb, f"Each rater's ranking by mean score, per criterion. {base} {ci}.", src,
                 table=by_score),
        Artifact("ranking_by_battles", nb, f"Bradley-Terry rankings of the per-document battles (ties as half a win), "
                 f"per rater and criterion. {base} {ci}.", src, table=by_battles),
        Artifact("ranking_agreement", nb, "Kendall's tau between the experts' and each judge's score ranking, per "
                 f"criterion, and each ranking's probability of a changed top-3 set. {base} {ci}.", src,
                 table=agreement),
        Artifact("ranking_win_rates_relevance", nb, f"The experts' pairwise win rates on relevance. {base} {ci}.",
                 src, table=win_rates),
        Artifact("ranking_leaderboard_experts", nb, f"Leaderboard from the experts' mean scores. {base} {ci}.", src,
                 figure=_per_criterion(leaderboard(human, "expert mean score"), f"{base} {ci}.", height=9.5),
                 tables=["ranking_by_score"]),
        Artifact("ranking_leaderboard_experts_battles", nb, "Leaderboard from Bradley-Terry fits to the experts' "
                 f"per-document battles. {base} {ci}.", src,
                 figure=_per_criterion(leaderboard(bt_human, "Bradley-Terry, expert battles"), f"{base} {ci}.",
                                       height=9.5), tables=["ranking_by_battles"]),
        Artifact("ranking_by_judge", nb, f"How the ranking by mean score moves with the judge. {base} {ci}.", src,
                 figure=_per_criterion(bump, f"{base} {ci}.", height=11), tables=["ranking_by_score"]),
        Artifact("ranking_win_rates_relevance_fig", nb, f"The experts' pairwise win rates on relevance. {base} {ci}.",
                 src, figure=ranking_plots.plot_win_rate_heatmap(
                     win_rates, order=bt_human[(bt_human["criterion"] == "relevance")
                                               & (bt_human["metric"] == "bt_coefficient")]["system"].tolist(),
                     title="Experts, relevance: win rate of row vs column", caption_text=f"{base} {ci}.").figure,
                 tables=["ranking_win_rates_relevance"]),
    ]


LATENT_RESAMPLES = 100  # each resample refits the latent model by EM: 100 refits keep a reproduce run short


def latent_artifacts(settings: Settings) -> list[Artifact]:
    """10_which_system_is_best: judge accuracy estimated without labels (OpenQA), against the human verdicts."""
    from judgelab.ensembles import latent_truth

    results = openqa_study.load_judges(settings.data_dir)
    src = openqa_study.sources(results)
    table = openqa_study.combined_table(results)
    frames = [latent_truth(table, judges=list(openqa_study.OPENQA_JUDGES), method=method, gold=openqa_study.HUMAN,
                           n_resamples=LATENT_RESAMPLES, seed=settings.seed)
              for method in ("majority", "dawid_skene", "one_coin")]
    latent = pd.concat(frames, ignore_index=True)
    base = (f"OpenQA-eval (NQ-open, 1,490 question/answer pairs): GPT-4, text-davinci-003 and BEM verdicts; the "
            f"models see only the 3 judges' verdicts; actual = agreement with the human majority verdict; data "
            f"{_src_text(src)}.")
    ci = (f"95% percentile bootstrap CIs, {LATENT_RESAMPLES} resamples of question/answer pairs (each refits the "
          f"model), seed {settings.seed}")
    nb = "10_which_system_is_best"
    return [
        Artifact("latent_reliability", nb, f"Estimated (latent truth) and actual judge accuracy. {base} {ci}.", src,
                 table=latent),
        Artifact("latent_reliability_fig", nb, f"Judge accuracy estimated without labels vs measured. {base} {ci}.",
                 src, figure=ranking_plots.plot_judge_reliability(latent, caption_text=f"{base} {ci}.").figure,
                 tables=["latent_reliability"], parameters={"latent_refits": LATENT_RESAMPLES}),
    ]


GROUPS: dict[str, Callable[[Settings], list[Artifact]]] = {
    "summeval": summeval_artifacts,
    "llmbar": llmbar_artifacts,
    "openqa": openqa_artifacts,
    "variants": variants_artifacts,
    "corrected": corrected_artifacts,
    "ranking": ranking_artifacts,
    "latent": latent_artifacts,
}


def _write_figure(artifact: Artifact, out: Path, params: dict[str, Any]) -> list[Path]:
    assert artifact.figure is not None
    png, pdf, side = (out / f"{artifact.name}{ext}" for ext in (".png", ".pdf", ".json"))
    # explicit bbox/dpi: the style's rc settings are no longer active here; no version/date stamps
    artifact.figure.savefig(png, dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    artifact.figure.savefig(pdf, bbox_inches="tight", metadata={"CreationDate": None, "Producer": None})
    plt.close(artifact.figure)
    sidecar = {
        "figure": artifact.name,
        "files": [png.name, pdf.name],
        "notebooks": [f"notebooks/{nb.strip()}.ipynb" for nb in artifact.notebook.split(",")],
        "caption": artifact.caption,
        "data_sources": [{k: v for k, v in s.items() if k != "location"} for s in artifact.sources],
        "tables": [f"{t}.csv" for t in artifact.tables],
        "command": params["command"],
        "parameters": {**{k: v for k, v in params.items() if k != "command"}, **artifact.parameters},
    }
    side.write_text(json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return [png, pdf, side]


def reproduce(out: str | os.PathLike[str] = "figures", data_dir: str | os.PathLike[str] | None = None, *,
              n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
              groups: tuple[str, ...] | None = None) -> list[Path]:
    """Regenerate every figure (PNG, PDF, sidecar JSON) and table (CSV) into ``out``; return the paths written.

    ``data_dir``: the folder with LLMBar/, LLM_summeval/, OpenQA-eval/ (default ``$JUDGELAB_DATA_DIR``,
    else the loaders download the pinned files). ``groups``: a subset of ``GROUPS`` (default all).
    """
    from judgelab import __version__

    unknown = sorted(set(groups or ()) - set(GROUPS))
    if unknown:
        raise ConfigError(f"unknown reproduce group(s) {unknown}; available: {', '.join(GROUPS)}")
    if n_resamples < 100:
        raise ConfigError(f"n_resamples must be at least 100 for a usable interval, not {n_resamples}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(None if data_dir is None else str(data_dir), n_resamples, seed)
    written: list[Path] = []
    index: list[Artifact] = []
    for name in groups or tuple(GROUPS):
        params = {"command": f"{COMMAND} --out {out_dir} --n-resamples {n_resamples} --seed {seed}",
                  "group": name, "n_resamples": n_resamples, "seed": seed, "ci_level": 0.95,
                  "judgelab_version": __version__}
        for artifact in GROUPS[name](settings):
            index.append(artifact)
            if artifact.figure is not None:
                written += _write_figure(artifact, out_dir, params)
            if artifact.table is not None:
                path = out_dir / f"{artifact.name}.csv"
                artifact.table.to_csv(path, index=False, float_format="%.6g")
                written.append(path)
    partial = groups is not None and set(groups) != set(GROUPS)
    written.append(_write_index(index, out_dir, n_resamples, seed, keep_others=partial))
    return written


_INDEX_HEADER = ("| file | shown in | what it is |", "|---|---|---|")


def _write_index(artifacts: list[Artifact], out: Path, n_resamples: int, seed: int, *,
                 keep_others: bool = False) -> Path:
    """README.md in the output folder: every file, the notebook that shows it, and its caption.

    ``keep_others`` (some groups regenerated): rows of the existing index for files not regenerated now
    are kept, in their place; the regenerated files' rows are replaced and new ones appended.
    """
    rows: dict[str, str] = {}
    path = out / "README.md"
    if keep_others and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("| `"):
                rows[line.split(" | ", 1)[0]] = line
    for a in artifacts:
        files = f"`{a.name}.png` / `.pdf`" if a.figure is not None else f"`{a.name}.csv`"
        caption_text = a.caption.replace("|", "/").replace("\n", " ")
        rows[f"| {files}"] = f"| {files} | {a.notebook} | {caption_text} |"
    lines = ["# Figures and tables", "",
             f"Written by `{COMMAND} --out {out.name} --n-resamples {n_resamples} --seed {seed}` from the released data "
             "(never by running notebooks). Each figure has a PNG, a PDF and a sidecar JSON naming the data's "
             "repository and commit, the command and every parameter.", "", *_INDEX_HEADER, *rows.values()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
