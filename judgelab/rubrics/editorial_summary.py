"""Seed 004 (Appendix A): one call per editorial criterion, output {score, explanation}.

Few-shot examples (``few_shot=k``, ``few_shot_pool=...``) carry HUMAN scores and never come from
the items being judged:
  * ``judged_items=[ids]`` at load time -> RubricSpecError if any pool example has one of those ids;
  * at request time -> ValueError if the judged item's own item_id is in the pool;
  * pool examples sharing the judged item's ``doc_id`` (same source article) are skipped, so an
    example never shows the judge the very document it is about to score.
Selection is deterministic: eligible examples are ordered by a seeded hash of their item_id and
taken round-robin across human-score levels (lowest first), so k examples span the scale, as the
paper's few-shot set did.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from judgelab.rubrics import parsing
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.spec import FewShot, RubricSpec, RubricSpecError
from judgelab.rubrics.spec_rubric import SpecRubric, is_missing, item_text

__all__ = ["EditorialSummaryRubric", "load_pool", "pool_from_frame"]


def load_pool(pool: Any) -> list[dict[str, Any]]:
    """A few-shot pool from a JSONL path, a list of dicts, or a DataFrame (records)."""
    if pool is None:
        return []
    if isinstance(pool, str | Path):
        path = Path(pool)
        if not path.exists():
            raise RubricSpecError(f"few-shot pool file not found: {path}")
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    elif hasattr(pool, "to_dict"):
        rows = pool.to_dict(orient="records")
    else:
        rows = [dict(r) for r in pool]
    for i, r in enumerate(rows):
        for f in ("item_id", "document", "summary"):
            if r.get(f) in (None, ""):
                raise RubricSpecError(f"few-shot pool row {i} lacks field {f!r}")
    return rows


def pool_from_frame(
    frame: Any,
    scores: Mapping[str, str],
    *,
    document: str = "document",
    summary: str = "summary",
    doc_id: str | None = None,
) -> list[dict[str, Any]]:
    """A few-shot pool from any items table with human scores, e.g. SummEval's items from
    ``judgelab.datasets.summeval`` (``document="source_text"``, ``doc_id="document_id"``,
    ``scores={"coherence": "expert_coherence", ...}``). Rows missing a text are skipped."""
    rows = []
    for record in frame.to_dict(orient="records"):
        if is_missing(record.get(document)) or is_missing(record.get(summary)):
            continue
        row = {"item_id": str(record["item_id"]), "document": record[document], "summary": record[summary]}
        if doc_id is not None and not is_missing(record.get(doc_id)):
            row["doc_id"] = record[doc_id]
        for criterion, column in scores.items():
            row[criterion] = None if is_missing(record.get(column)) else float(record[column])
        rows.append(row)
    return rows


def _human_score(example: Mapping[str, Any], criterion: str) -> float | None:
    for key in (criterion, f"score_{criterion}", f"human_{criterion}"):
        v = example.get(key)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            return float(v)
    return None


class EditorialSummaryRubric(SpecRubric):
    kind = "editorial_summary"
    code_version = "1"
    variant_keywords = SpecRubric.variant_keywords | {"scale", "justification", "few_shot"}
    extra_params = frozenset({"few_shot", "few_shot_pool", "judged_items", "few_shot_seed", "criteria"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        self.pool = load_pool(params.get("few_shot_pool"))
        self.few_shot_seed = int(params.get("few_shot_seed", 0))
        update: dict[str, Any] = {}
        if "few_shot" in params:
            update["few_shot"] = FewShot(k=int(params["few_shot"]), slot=spec.few_shot.slot)
        if "criteria" in params:
            wanted = [params["criteria"]] if isinstance(params["criteria"], str) else list(params["criteria"])
            known = [c.name for c in spec.criteria]
            unknown = [w for w in wanted if w not in known]
            if unknown:
                raise RubricSpecError(f"unknown editorial criteria {unknown}; known: {known}")
            update["criteria"] = [c for c in spec.criteria if c.name in wanted]
        spec = spec.model_copy(update=update) if update else spec
        if spec.few_shot.k > 0 and not self.pool:
            raise RubricSpecError(f"few_shot={spec.few_shot.k} needs few_shot_pool= (rows with item_id, document, summary and human scores)")
        self.pool_ids = {str(r["item_id"]) for r in self.pool}
        if "judged_items" in params:
            self.exclude_judged_items(params["judged_items"])
        return spec

    def validate_options(self) -> None:
        """Every anchored level needs a name (``options.levels``, or ``options.level_names`` per criterion)."""
        levels = self.spec.options.get("levels", {})
        for c in self.spec.criteria:
            named = {**levels, **self.spec.options.get("level_names", {}).get(c.name, {})}
            unnamed = sorted(level for level in c.anchors if level not in named)
            if unnamed:
                raise RubricSpecError(f"rubric {self.spec.name!r}: options.levels names no level {unnamed} of "
                                      f"criterion {c.name!r}; give the names, e.g. variant(options={{'levels': "
                                      "{level: name, ...}})")

    def rescale_options(self, options: dict[str, Any], levels: Mapping[int, int]) -> dict[str, Any]:
        """Level names move with the levels that land exactly on the new scale; the others are dropped."""
        options["levels"] = {levels[k]: v for k, v in options.get("levels", {}).items() if k in levels}
        options["level_names"] = {c: {levels[k]: v for k, v in names.items() if k in levels}
                                  for c, names in options.get("level_names", {}).items()}
        return options

    def exclude_judged_items(self, item_ids: Iterable[Any]) -> None:
        """Declare the items to be judged; raise if any of them is in the few-shot pool."""
        overlap = sorted(self.pool_ids & {str(i) for i in item_ids})
        if overlap:
            raise RubricSpecError(f"few-shot pool contains items being judged: {overlap[:10]}; remove them from the pool")

    def fingerprint_extra(self) -> Any:
        pool_blob = json.dumps(self.pool, sort_keys=True, default=str, ensure_ascii=False)
        return {"pool": hashlib.sha256(pool_blob.encode()).hexdigest(), "seed": self.few_shot_seed}

    # ------------------------------------------------------------------ few-shot selection
    def select_examples(self, criterion: str, item: Mapping[str, Any]) -> list[dict[str, Any]]:
        k = self.spec.few_shot.k
        if k == 0:
            return []
        item_id = str(item.get("item_id", ""))
        if item_id in self.pool_ids:
            raise ValueError(f"item {item_id!r} is in the few-shot pool; an example must never be a judged item")
        doc_id = None if is_missing(item.get("doc_id")) else item.get("doc_id")
        eligible = [
            ex for ex in self.pool
            if _human_score(ex, criterion) is not None and (doc_id is None or ex.get("doc_id") != doc_id)
        ]
        if len(eligible) < k:
            raise ValueError(f"few-shot pool has {len(eligible)} examples with a human {criterion} score "
                             f"(excluding the judged item's document); {k} requested")
        by_level: dict[int, list[dict[str, Any]]] = {}
        for ex in sorted(eligible, key=lambda e: self._order_key(e, criterion)):
            by_level.setdefault(round(_human_score(ex, criterion)), []).append(ex)  # type: ignore[arg-type]
        chosen: list[dict[str, Any]] = []
        levels = sorted(by_level)
        while len(chosen) < k:
            for level in levels:
                if by_level[level] and len(chosen) < k:
                    chosen.append(by_level[level].pop(0))
        return chosen

    def _order_key(self, example: Mapping[str, Any], criterion: str) -> str:
        return hashlib.sha256(f"{self.few_shot_seed}:{criterion}:{example['item_id']}".encode()).hexdigest()

    def _render_example_output(self, example: Mapping[str, Any], criterion: str) -> str:
        score = _human_score(example, criterion)
        shown = int(round(score))  # type: ignore[arg-type]  # the paper's scale is integer
        explanation = example.get(f"explanation_{criterion}") or example.get(f"{criterion}_explanation")
        if not explanation:
            explanation = f"Human expert rating for {criterion}: {shown} out of {self.spec.scale.max}."  # type: ignore[union-attr]
        pair = {"score": shown, "explanation": explanation}
        if self.spec.justification == "before":  # the example answers in the order the prompt asks for
            pair = {"explanation": explanation, "score": shown}
        return json.dumps(pair, ensure_ascii=False)

    # ------------------------------------------------------------------ requests and parsing
    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        out = []
        placeholders = self.spec.options.get("explanation_placeholder", {})
        lang = self.spec.language.lower()
        placeholder = placeholders.get(lang) or placeholders.get("en", "explanation")
        if lang not in placeholders:
            placeholder = f"{placeholder} (in {self.language_name})"
        for crit in self.criteria_context():
            examples = self.select_examples(crit["name"], item)
            context = {
                "criterion": crit,
                "document": item_text(item, "document"),
                "summary": item_text(item, "summary"),
                "explanation_placeholder": placeholder,
                "examples": [
                    {"document": ex["document"], "summary": ex["summary"],
                     "output": self._render_example_output(ex, crit["name"])}
                    for ex in examples
                ],
            }
            out.append(
                self.make_request(
                    context,
                    (RowKey(crit["name"]),),
                    logprob_criterion=crit["name"],
                    meta={"criterion": crit["name"], "few_shot_ids": [str(ex["item_id"]) for ex in examples]},
                )
            )
        return out

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        obj = parsing.extract_json_object(raw)
        criterion = request.meta["criterion"]
        lo, hi = self.scale or (1, 5)
        score = parsing.as_integer_score(parsing.require(obj, "score"), lo, hi, "score")
        explanation = parsing.as_text(parsing.require(obj, "explanation"), "explanation")
        if not explanation or explanation.startswith("<"):
            raise ParseFailure("explanation is empty or still the template placeholder")
        detail = {"explanation": explanation, "language": self.spec.language,
                  "few_shot_ids": list(request.meta.get("few_shot_ids", []))}
        return [ParsedRow(RowKey(criterion), score=float(score), detail=detail)]
