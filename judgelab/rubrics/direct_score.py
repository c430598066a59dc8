"""Seed 002's direct scoring: one call scores every criterion; the library computes the overall score.

Per criterion the judge gives evidence, a justification (before the score), the score and one
improvement. The overall score is the weighted mean of the criterion scores (:func:`weighted_mean`),
computed by the library, never taken from the judge.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from judgelab.rubrics import parsing, verdict_text
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.spec import RubricSpec, RubricSpecError, apply_criteria_params
from judgelab.rubrics.spec_rubric import SpecRubric, item_text

__all__ = ["DirectScoreRubric", "weighted_mean"]


# ---------------------------------------------------------------- the verdict rule
def weighted_mean(scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Weighted mean of criterion scores (on the criterion scale); weights need not sum to 1."""
    total_weight = sum(weights[c] for c in scores)
    if total_weight <= 0:
        raise ValueError("criterion weights sum to zero")
    return sum(scores[c] * weights[c] for c in scores) / total_weight


class DirectScoreRubric(SpecRubric):
    kind = "direct_score"
    code_version = "2"  # 2: response schema tightened to the criteria and scale
    variant_keywords = SpecRubric.variant_keywords | {"scale", "justification"}
    extra_params = frozenset({"criteria", "weights", "scale"})
    # "pattern": free text. One criterion: verdict_text.read_score (an explicit score phrase such as
    # "Score: 4/5", "<score_label>: 4", "Rating: [[4]]", "[RESULT] 4", then "4 out of 5", then a final
    # standalone number), or the option letter when options.letters maps letters to scale points
    # ({"A": 1, ..., "E": 5}, an MCQ-style prompt). Several criteria: the LAST "<criterion name>: N" each.
    output_formats = frozenset({"json", "pattern"})

    def validate_options(self) -> None:
        letters = self.spec.options.get("letters")
        if letters is None:
            return
        lo, hi = self.scale or (1, 5)
        if (self.spec.output.format != "pattern" or len(self.spec.criteria) != 1 or not isinstance(letters, Mapping)
                or not letters or any(not isinstance(v, int) or not lo <= v <= hi for v in letters.values())):
            raise RubricSpecError(f"rubric {self.spec.name!r}: field 'options.letters' must map option letters to "
                                  f"integers on the scale {lo}-{hi}, for a one-criterion 'pattern' rubric")

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        if spec.scale is None:
            raise RubricSpecError(f"rubric {spec.name!r}: a direct_score rubric needs a scale")
        return apply_criteria_params(spec, params)

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        context = {f: item_text(item, f, conversations=True)
                   for f in self.required_fields + tuple(self.spec.optional_fields)}
        keys = tuple(RowKey(c.name) for c in self.spec.criteria) + (RowKey("overall"),)
        single = self.spec.criteria[0].name if len(self.spec.criteria) == 1 else None
        return [self.make_request({"item": context}, keys, logprob_criterion=single)]

    def response_schema(self) -> dict[str, Any] | None:
        """The spec's schema tightened to this rubric's criteria and scale.

        Constrained decoders (llama.cpp grammars, structured outputs) then cannot emit placeholder
        criterion names, out-of-range scores or endless evidence lists; the parser still checks all of it.
        """
        schema = self.spec.output.json_schema
        if schema is None or self.spec.output.format != "json" or self.spec.scale is None:
            return schema
        # tightened once per spec and shared by every request, as the untightened spec schema is: a deep copy per
        # request took 9.5 of 73 s of a 10^5-item dry run (nothing changes a request's schema once it is made)
        done = getattr(self, "_tightened", None)
        if done is not None and done[0] is self.spec:
            return done[1]
        tightened = self._tighten(schema)
        self._tightened = (self.spec, tightened)
        return tightened

    def _tighten(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema = copy.deepcopy(schema)
        entry = schema.get("properties", {}).get("scores", {})
        fields = entry.get("items", {}).get("properties", {})
        if not fields:
            return schema
        n = len(self.spec.criteria)
        entry.update(minItems=n, maxItems=n)
        fields["criterion"] = {"type": "string", "enum": [c.name for c in self.spec.criteria]}
        fields["score"] = {"type": "integer", "minimum": self.spec.scale.min, "maximum": self.spec.scale.max}
        for name in ("justification", "improvement"):
            if name in fields:
                fields[name] = {"type": "string", "maxLength": 400}
        if "evidence" in fields:
            fields["evidence"] = {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 3}
        if "summary" in schema.get("properties", {}):
            schema["properties"]["summary"] = {"type": "string", "maxLength": 400}
        return schema

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        if self.spec.output.format == "pattern":
            return self._parse_pattern(raw)
        obj = parsing.extract_json_object(raw)
        entries = obj.get("scores")
        if entries is None and "score" in obj and len(self.spec.criteria) == 1:
            entries = [obj]  # the seed's single-criterion example output shape
        if not isinstance(entries, list):
            raise ParseFailure("missing field scores (a list with one entry per criterion)")
        lo, hi = self.scale or (1, 5)
        by_name = parsing.match_criterion_entries(entries, self.spec.criteria)
        rows, scores = [], {}
        for c in self.spec.criteria:
            entry = by_name[c.name]
            where = f"scores[{c.name}]"
            justification = parsing.as_text(parsing.require(entry, "justification", where), f"{where}.justification")
            score = parsing.as_integer_score(parsing.require(entry, "score", where), lo, hi, f"{where}.score")
            evidence = entry.get("evidence", [])
            evidence = [evidence] if isinstance(evidence, str) else list(evidence or [])
            detail: dict[str, Any] = {
                "justification": justification,
                "evidence": evidence,
                "improvement": entry.get("improvement"),
            }
            flags = []
            keys = list(entry)
            if keys.index("score") < keys.index("justification"):
                flags.append("score given before justification")
            if not evidence:
                flags.append("no evidence given")
            if not entry.get("improvement"):
                flags.append("no improvement suggested")
            if flags:
                detail["flags"] = flags
            scores[c.name] = score
            rows.append(ParsedRow(RowKey(c.name), score=float(score), detail=detail))
        weights = {c.name: c.weight for c in self.spec.criteria}
        overall = weighted_mean(scores, weights)
        rows.append(
            ParsedRow(
                RowKey("overall"),
                score=overall,
                detail={"weights": weights, "scores": scores, "summary": obj.get("summary"), "rule": "weighted_mean"},
            )
        )
        return rows

    def _parse_pattern(self, raw: str) -> list[ParsedRow]:
        answer = parsing.answer_text(raw)
        lo, hi = self.scale or (1, 5)
        single = len(self.spec.criteria) == 1
        scores, rows = {}, []
        for c in self.spec.criteria:
            detail: dict[str, Any] = {"justification": answer}
            letters = self.spec.options.get("letters")
            if single and letters:
                found = verdict_text.read_choice(answer, letters)
                score = int(found.value)
                detail.update(matched=found.matched, parse_rule=found.rule)
            elif single:
                label = str(self.spec.options.get("score_label", "score"))
                found = verdict_text.read_score(answer, (lo, hi), labels=(label, c.name), field=c.name)
                score = int(found.value)
                detail.update(matched=found.matched, parse_rule=found.rule)
            else:
                score = parsing.last_score_token(answer, lo, hi, c.name)
            scores[c.name] = score
            rows.append(ParsedRow(RowKey(c.name), score=float(score), detail=detail))
        weights = {c.name: c.weight for c in self.spec.criteria}
        rows.append(ParsedRow(RowKey("overall"), score=weighted_mean(scores, weights),
                              detail={"weights": weights, "scores": scores, "rule": "weighted_mean"}))
        return rows
