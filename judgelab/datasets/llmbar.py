"""LLMBar (Zeng et al. 2024): instruction-following output pairs with gold labels, plus the released
GPT-4 / ChatGPT judge verdicts for every prompting strategy, in both presentation orders.

Layout (relative to the ``LLMBar/`` folder)::

    Dataset/<split>/dataset.json                                  [{input, output_1, output_2, label}]
    Dataset/<split>/evaluators/<judge>/<strategy>/result.json     the same items + "results"
    Dataset/<split>/evaluators/<judge>/<strategy>/statistics.json the published numbers

``<split>`` is e.g. ``LLMBar/Natural``, ``LLMBar/Adversarial/Neighbor``, ``Processed/FairEval``,
``CaseStudy/Negation``. In ``result.json`` the verdict that counts is ``results[-1]``: earlier
entries are auxiliary generations (self-generated metrics, a reference output) or, for the
Swap strategies, the first round before the judge synthesised its two conflicting explanations.
``"swap = False"`` is the original order, ``"swap = True"`` the swapped one; both winners are
already in ORIGINAL labels ("1" = output_1), which map to "A"/"B" here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, Literal

import pandas as pd

from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import (
    DataFormatError,
    DataNotFoundError,
    available_paths,
    data_location,
    fetch_files,
    local_root,
)
from judgelab.errors import ConfigError
from judgelab.judgments import OK
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.verdict_text import read_score, read_winner

__all__ = ["FOLDER", "llmbar", "llmbar_combinations", "llmbar_splits", "resolve_split"]

FOLDER = "LLMBar"
_PREFIX = "Dataset/"
_WINNER = {"1": "A", "2": "B"}
_CONDITIONS = (("swap = False", "original"), ("swap = True", "swapped"))
_RATING_SCALE = (0, 9)  # LLMBar's rating prompts: "an integer between 0 and 9"
RatingWinner = Literal["from_scores", "as_published"]


def llmbar_combinations(data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Every (split, judge, strategy) folder present, with whether its judge outputs are released.

    Columns: split, judge, strategy, has_result, has_statistics. Some CaseStudy folders hold only
    ``statistics.json`` (no ``result.json``); they are listed with ``has_result=False``.
    """
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for path in available_paths(FOLDER, data_dir):
        if not path.startswith(_PREFIX) or "/evaluators/" not in path:
            continue
        head, tail = path[len(_PREFIX) :].split("/evaluators/", 1)
        parts = tail.split("/")
        if len(parts) != 3 or parts[2] not in ("result.json", "statistics.json"):
            continue
        key = (head, parts[0], parts[1])
        row = rows.setdefault(key, {"split": head, "judge": parts[0], "strategy": parts[1], "has_result": False,
                                    "has_statistics": False})
        row["has_result" if parts[2] == "result.json" else "has_statistics"] = True
    df = pd.DataFrame(
        list(rows.values()), columns=["split", "judge", "strategy", "has_result", "has_statistics"]
    )
    # every row starts False (no fillna: pandas 2.2 warns that fillna's downcast of object columns will change)
    df[["has_result", "has_statistics"]] = df[["has_result", "has_statistics"]].astype(bool)
    return df.sort_values(["split", "judge", "strategy"]).reset_index(drop=True)


def llmbar_splits(data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Every split that has a ``dataset.json``."""
    return sorted(
        p[len(_PREFIX) : -len("/dataset.json")]
        for p in available_paths(FOLDER, data_dir)
        if p.startswith(_PREFIX) and p.endswith("/dataset.json")
    )


def resolve_split(split: str, data_dir: str | os.PathLike[str] | None = None) -> str:
    """The full split path for a full or unambiguous short name ("Natural", "Neighbor", "FairEval")."""
    wanted = split.strip("/")
    root = local_root(FOLDER, data_dir)
    if root is not None and (root / f"{_PREFIX}{wanted}/dataset.json").is_file():
        return wanted  # fast path: an exact split name in a local copy needs no folder scan
    splits = llmbar_splits(data_dir)
    if wanted in splits:
        return wanted
    matches = [s for s in splits if s.endswith("/" + wanted)]
    if len(matches) == 1:
        return matches[0]
    if not splits:
        raise DataNotFoundError(
            f"no LLMBar split in {data_location(FOLDER, data_dir)}: looked for {_PREFIX}<split>/dataset.json there (e.g. "
            f"{_PREFIX}LLMBar/Natural/dataset.json); see help(judgelab.datasets.llmbar) for the layout")
    if not matches:
        raise DataNotFoundError(f"unknown LLMBar split {split!r}; available: {', '.join(splits)}")
    raise ConfigError(f"LLMBar split {split!r} is ambiguous: {', '.join(matches)}; pass the full name")


def _evaluator_dir(split: str, judge: str, strategy: str) -> str:
    return f"{_PREFIX}{split}/evaluators/{judge}/{strategy}"


def llmbar(
    split: str,
    judge: str | Sequence[str],
    strategy: str,
    data_dir: str | os.PathLike[str] | None = None,
    *,
    rating_winner: RatingWinner = "from_scores",
    cache_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
) -> DatasetResult:
    """Load one LLMBar (split, judge, strategy) as a judgments table plus item metadata.

    ``data_dir`` (else ``$JUDGELAB_DATA_DIR``; else the files are downloaded) holds an ``LLMBar/`` folder
    laid out as the release (princeton-nlp/LLMBar)::

        <data_dir>/LLMBar/Dataset/<split>/dataset.json
        <data_dir>/LLMBar/Dataset/<split>/evaluators/<judge>/<strategy>/result.json

    e.g. ``Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json``; :func:`llmbar_combinations`
    lists what is there. ``split`` may be a full name ("LLMBar/Adversarial/Neighbor") or an unambiguous
    last part ("Neighbor").

    ``judge``: one judge ("GPT-4"), or several (``["GPT-4", "ChatGPT"]``) loaded with the same strategy
    into ONE table with one copy of the gold rows (:func:`judgelab.judgments.combine`), ready for
    :func:`judgelab.stats.compare_pairwise_judges`.

    The table holds one ``judge="gold"`` row per item (the dataset label) and one judge row per
    item and order (condition "original"/"swapped"), winner "A" = output_1, "B" = output_2.
    The comparison verdicts are LLMBar's own parse (``winner`` in result.json); one the LLMBar parser
    could not read (winner null) is a ``parse_error`` row whose reason adds why judgelab's parser
    (:func:`judgelab.rubrics.verdict_text.read_winner`) cannot read it either.

    ``rating_winner`` only matters for the Rating* strategies, where each output was scored
    0-9 on its own (the scale of LLMBar's rating prompt): "from_scores" (default) derives the winner
    from the two scores (equal scores -> "TIE"; a reply that is not a score on 0-9, e.g. "" or
    "10", -> ``parse_error`` naming it); "as_published" keeps the winners
    LLMBar recorded, which break a tie towards the output shown second and an unreadable score
    towards the output shown first (needed to reproduce the published statistics).
    """
    if rating_winner not in ("from_scores", "as_published"):
        raise ConfigError(f"rating_winner must be 'from_scores' or 'as_published', not {rating_winner!r}")
    if not isinstance(judge, str):
        judges = list(dict.fromkeys(judge))
        if not judges or not all(isinstance(j, str) for j in judges):
            raise ConfigError(f"judge must be a judge name or a list of names, not {judge!r}")
        loads = [llmbar(split, j, strategy, data_dir, rating_winner=rating_winner, cache_dir=cache_dir,
                        base_url=base_url) for j in judges]
        return DatasetResult.combined(f"llmbar:{loads[0].notes['split']}:{'+'.join(judges)}:{strategy}", loads,
                                      split=loads[0].notes["split"], judge=judges, strategy=strategy,
                                      rating_winner=rating_winner)
    split = resolve_split(split, data_dir)
    ev = _evaluator_dir(split, judge, strategy)
    dataset_path = f"{_PREFIX}{split}/dataset.json"
    result_path = f"{ev}/result.json"
    root = local_root(FOLDER, data_dir)
    if root is None or not (root / result_path).is_file():
        _explain_missing_result(split, judge, strategy, data_dir)
    paths, source = fetch_files(
        FOLDER, [dataset_path, result_path], data_dir=data_dir, cache_dir=cache_dir, base_url=base_url
    )
    dataset = _read_json(paths[dataset_path], dataset_path)
    results = _read_json(paths[result_path], result_path)
    if len(dataset) != len(results):
        raise DataFormatError(f"{result_path} has {len(results)} items but {dataset_path} has {len(dataset)}")

    run_id = f"llmbar:{split}:{judge}:{strategy}"
    rubric = f"llmbar:{strategy}"
    items, rows = [], []
    for index, (item, judged) in enumerate(zip(dataset, results, strict=True)):
        if judged.get("input") != item["input"] or judged.get("label") != item["label"]:
            raise DataFormatError(
                f"{result_path} item {index} does not match {dataset_path} (input or label differ)"
            )
        item_id = f"{split}#{index}"
        gold = _WINNER.get(str(item["label"]))
        if gold is None:
            raise DataFormatError(f"{dataset_path} item {index} has label {item['label']!r}; expected 1 or 2")
        items.append(
            {
                "item_id": item_id,
                "split": split,
                "index": index,
                "input": item["input"],
                "output_1": item["output_1"],
                "output_2": item["output_2"],
                "label": int(item["label"]),
                "gold_winner": gold,
            }
        )
        base = {"run_id": run_id, "item_id": item_id, "rubric": rubric, "criterion": "overall", "repeat": 0}
        rows.append(
            {
                **base,
                "judge": "gold",
                "condition": "original",
                "status": OK,
                "winner": gold,
                "detail": {"source": "dataset.json label"},
            }
        )
        rows.extend(_judge_rows(base, judge, judged["results"], rating_winner, f"{result_path} item {index}"))
    return DatasetResult.from_rows(run_id, rows, items, source, split=split, judge=judge, strategy=strategy,
                                   rating_winner=rating_winner)


def _explain_missing_result(
    split: str, judge: str, strategy: str, data_dir: str | os.PathLike[str] | None
) -> None:
    """Raise a clear error when (split, judge, strategy) has no result.json; return if it has one."""
    combos = llmbar_combinations(data_dir)
    here = combos[(combos.split == split) & (combos.judge == judge) & (combos.strategy == strategy)]
    if here.empty:
        options = combos[combos.split == split]
        listed = ", ".join(f"{j}/{s}" for j, s in zip(options.judge, options.strategy, strict=True))
        raise DataNotFoundError(
            f"no LLMBar evaluator folder {judge}/{strategy} for split {split!r}: looked for "
            f"{_evaluator_dir(split, judge, strategy)}/result.json in {data_location(FOLDER, data_dir)}; "
            + (f"available: {listed}" if listed else f"this split has no {_PREFIX}{split}/evaluators/ folder")
        )
    if not bool(here.has_result.iloc[0]):
        raise DataNotFoundError(
            f"LLMBar releases only statistics.json (no result.json) for {split} {judge}/{strategy}; "
            "its per-item verdicts cannot be loaded"
        )


def _read_json(path: os.PathLike[str], name: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"{name} is not valid JSON: {exc}") from exc


def _judge_rows(
    base: dict[str, Any], judge: str, results: list[Any], rating_winner: RatingWinner, where: str
) -> list[dict[str, Any]]:
    if not results or not isinstance(results[-1], dict):
        raise DataFormatError(f"{where}: 'results' does not end with a verdict object")
    final = results[-1]
    shared: dict[str, Any] = {}
    auxiliary = [r[0] for r in results[:-1] if isinstance(r, list) and r]
    if auxiliary:  # self-generated metrics questions and/or reference output the verdict was conditioned on
        shared["auxiliary_generations"] = auxiliary
    if len(results) > 1 and isinstance(results[0], dict):  # Swap strategies: first round disagreed
        shared["first_round_winners"] = {
            cond: results[0][key].get("winner") for key, cond in _CONDITIONS if key in results[0]
        }
        shared["synthesized_second_round"] = True
    rating = "score_1" in final
    if rating:
        shared["score_1"], shared["score_2"] = final["score_1"][0], final["score_2"][0]
    derived = _winner_from_scores(final) if rating and rating_winner == "from_scores" else None

    rows = []
    for key, condition in _CONDITIONS:
        verdict = final.get(key)
        if verdict is None:
            raise DataFormatError(f"{where}: final verdict lacks {key!r}")
        completion = verdict.get("completion")
        raw = completion[0] if isinstance(completion, list) and completion else None
        detail = dict(shared)
        if isinstance(completion, list) and len(completion) > 1:
            detail["finish_reason"] = completion[1]
        recorded = verdict.get("winner")
        detail["published_winner"] = recorded
        row = {**base, "judge": judge, "condition": condition, "raw_output": raw, "detail": detail}
        if rating:
            row["raw_output"] = f"score_1: {shared['score_1']}\nscore_2: {shared['score_2']}"
        if derived is not None:
            winner, reason = derived
        elif rating:
            winner, reason = _WINNER.get(str(recorded)), None
            detail["published_tiebreak"] = _published_tiebreak(final)
        else:
            winner = _WINNER.get(str(recorded)) if recorded is not None else None
            reason = None if winner else _why_unread(raw, detail.get("finish_reason"))
        if winner is None:
            rows.append(
                {**row, "status": "parse_error", "unscored_reason": reason or f"unknown winner {recorded!r}"}
            )
        else:
            rows.append({**row, "status": OK, "winner": winner})
    return rows


def _why_unread(raw: str | None, finish_reason: Any) -> str:
    reason = "the LLMBar parser found no 'Output (a)'/'Output (b)' verdict in the completion"
    try:
        read = read_winner(raw or "")
    except ParseFailure as failure:
        stopped = f"; the provider stopped it: {finish_reason!r}" if finish_reason not in (None, "", "stop") else ""
        return f"{reason} ({failure.reason}{stopped})"
    return f"{reason} (judgelab's parser reads {read.value} from {read.matched!r})"


def _winner_from_scores(final: dict[str, Any]) -> tuple[str | None, str | None]:
    scores = []
    for key in ("score_1", "score_2"):
        try:
            scores.append(read_score(str(final[key][0]), _RATING_SCALE, field=f"rating {key}").value)
        except ParseFailure as failure:
            return None, failure.reason
    if scores[0] == scores[1]:
        return "TIE", None
    return ("A" if scores[0] > scores[1] else "B"), None


def _published_tiebreak(final: dict[str, Any]) -> str | None:
    try:
        s1, s2 = int(str(final["score_1"][0])), int(str(final["score_2"][0]))
    except ValueError:
        return "unreadable score: LLMBar recorded the output shown first as winner"
    if s1 == s2:
        return "equal scores: LLMBar recorded the output shown second as winner"
    return None
