"""The generic judges of seed 002: weighted direct scoring and pairwise comparison.

Direct: one call scores every criterion; per criterion the judge gives evidence, a
justification (before the score), the score and one improvement. The library computes the
overall score as the weighted mean of the criterion scores.

Pairwise: one call compares A and B per criterion and overall, with the seed's anti-bias
instructions; the overall winner and confidence are the judge's (the seed has no formula
deriving them), mapped back to original labels when the prompt was swapped. The library also
computes a weighted per-criterion vote and flags a disagreement with the stated winner.
Two passes (original + swapped) are consolidated by :func:`judgelab.verdicts.combine_swapped_passes`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from judgelab import parsing, verdicts
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.common import SpecRubric, item_text
from judgelab.rubrics.spec import Criterion, RubricSpec, RubricSpecError, Scale, validate_spec_data

SEED_SCALES = {(1, 3), (1, 5), (1, 10)}


def coerce_criteria(value: Any) -> list[Criterion]:
    """criteria=... as names, {name: definition}, or dicts with name/definition(description)/weight."""
    if isinstance(value, Mapping):
        value = [{"name": k, "definition": v} for k, v in value.items()]
    if not isinstance(value, list | tuple) or not value:
        raise RubricSpecError("criteria must be a non-empty list (names or {name, definition, weight} dicts)")
    out = []
    for i, c in enumerate(value):
        if isinstance(c, Criterion):
            out.append(c)
            continue
        if isinstance(c, str):
            c = {"name": c, "definition": c.replace("_", " ")}
        if not isinstance(c, Mapping):
            raise RubricSpecError(f"criteria[{i}] must be a name or a mapping, got {type(c).__name__}")
        c = dict(c)
        if "description" in c and "definition" not in c:
            c["definition"] = c.pop("description")
        try:
            out.append(Criterion.model_validate(c))
        except Exception as exc:  # pydantic's message names the bad field
            raise RubricSpecError(f"criteria[{i}]: {exc}") from None
    return out


def coerce_scale(value: Any) -> tuple[int, int]:
    """scale=5, "1-5", (1, 5) -> (1, 5); only the seed's 1-3, 1-5 and 1-10 scales."""
    if isinstance(value, int):
        bounds = (1, value)
    elif isinstance(value, str) and "-" in value:
        lo, hi = value.split("-", 1)
        bounds = (int(lo), int(hi))
    elif isinstance(value, list | tuple) and len(value) == 2:
        bounds = (int(value[0]), int(value[1]))
    else:
        raise RubricSpecError(f"scale {value!r} must be 3, 5, 10 or '1-5'-style")
    if bounds not in SEED_SCALES:
        raise RubricSpecError(f"scale {bounds[0]}-{bounds[1]} is not one of the seed's scales 1-3, 1-5, 1-10")
    return bounds


def _apply_criteria_params(spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
    update: dict[str, Any] = {}
    criteria = coerce_criteria(params["criteria"]) if "criteria" in params else list(spec.criteria)
    if "weights" in params:
        weights = dict(params["weights"])
        unknown = sorted(set(weights) - {c.name for c in criteria})
        if unknown:
            raise RubricSpecError(f"weights name unknown criteria {unknown}")
        criteria = [c.model_copy(update={"weight": float(weights.get(c.name, c.weight))}) for c in criteria]
    update["criteria"] = criteria
    if "scale" in params:
        lo, hi = coerce_scale(params["scale"])
        update["scale"] = Scale(min=lo, max=hi)
    data = spec.model_dump()
    data.update({k: v.model_dump() if hasattr(v, "model_dump") else [c.model_dump() for c in v]
                 for k, v in update.items()})
    return validate_spec_data(data, where=f"rubric {spec.name!r} with parameters")


class DirectScoreRubric(SpecRubric):
    kind = "direct_score"
    code_version = "2"  # 2: response schema tightened to the criteria and scale
    extra_params = frozenset({"criteria", "weights", "scale"})
    # "pattern": free text ending in "<label>: N" per criterion (label = the criterion name, or
    # options.score_label for a one-criterion rubric); the LAST such token counts, since the
    # justification comes first and may mention other numbers.
    output_formats = frozenset({"json", "pattern"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        if spec.scale is None:
            raise RubricSpecError(f"rubric {spec.name!r}: a direct_score rubric needs a scale")
        return _apply_criteria_params(spec, params)

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        context = {f: item_text(item, f) for f in self.required_fields + tuple(self.spec.optional_fields)}
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
        by_name = _match_entries(entries, self.spec.criteria)
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
        overall = verdicts.weighted_mean(scores, weights)
        rows.append(
            ParsedRow(
                RowKey("overall"),
                score=overall,
                detail={"weights": weights, "scores": scores, "summary": obj.get("summary"), "rule": "weighted_mean"},
            )
        )
        return rows

    def _parse_pattern(self, raw: str) -> list[ParsedRow]:
        if raw is None or not raw.strip():
            raise ParseFailure("empty output")
        lo, hi = self.scale or (1, 5)
        single = len(self.spec.criteria) == 1
        scores, rows = {}, []
        for c in self.spec.criteria:
            label = str(self.spec.options.get("score_label", "score")) if single else c.name
            score = parsing.last_score_token(raw, lo, hi, label)
            scores[c.name] = score
            rows.append(ParsedRow(RowKey(c.name), score=float(score), detail={"justification": raw.strip()}))
        weights = {c.name: c.weight for c in self.spec.criteria}
        rows.append(ParsedRow(RowKey("overall"), score=verdicts.weighted_mean(scores, weights),
                              detail={"weights": weights, "scores": scores, "rule": "weighted_mean"}))
        return rows


def _match_entries(entries: list[Any], criteria: list[Criterion]) -> dict[str, Mapping[str, Any]]:
    """Entries by criterion name (matched on name or label, case-insensitive); strict."""
    lookup = {}
    for c in criteria:
        lookup[c.name.lower()] = c.name
        lookup[c.label.lower()] = c.name
        lookup[c.name.replace("_", " ").lower()] = c.name
    found: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ParseFailure(f"scores[{i}] is not a JSON object")
        if len(criteria) == 1 and "criterion" not in entry:
            name = criteria[0].name
        else:
            label = str(parsing.require(entry, "criterion", f"scores[{i}]")).strip().lower()
            if label not in lookup:
                raise ParseFailure(f"scores[{i}].criterion={entry['criterion']!r} is not a criterion of this rubric")
            name = lookup[label]
        if name in found:
            raise ParseFailure(f"criterion {name!r} is scored twice")
        found[name] = entry
    missing = [c.name for c in criteria if c.name not in found]
    if missing:
        raise ParseFailure(f"no score for criterion {', '.join(missing)}")
    return found


class PairwiseRubric(SpecRubric):
    kind = "pairwise"
    code_version = "1"
    extra_params = frozenset({"criteria", "weights"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        return _apply_criteria_params(spec, params)

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        field_a, field_b = self.candidate_fields
        context = {f: item_text(item, f) for f in self.required_fields + tuple(self.spec.optional_fields)}
        shown_a, shown_b = (context[field_b], context[field_a]) if swapped else (context[field_a], context[field_b])
        keys = tuple(RowKey(c.name) for c in self.spec.criteria) + (RowKey("overall"),)
        return [self.make_request({"item": context, "response_a": shown_a, "response_b": shown_b}, keys,
                                  swapped=swapped)]

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        obj = parsing.extract_json_object(raw)
        comparison = parsing.require(obj, "comparison")
        if not isinstance(comparison, list):
            raise ParseFailure("comparison is not a list")
        by_name = _match_entries(comparison, self.spec.criteria)

        def original(label: str) -> str:
            return verdicts.swap_label(label) if request.swapped else label  # type: ignore[return-value]

        rows, winners = [], {}
        for c in self.spec.criteria:
            entry = by_name[c.name]
            where = f"comparison[{c.name}]"
            shown = parsing.as_choice(parsing.require(entry, "winner", where), ("A", "B", "TIE"), f"{where}.winner")
            winners[c.name] = original(shown)
            detail = {k: v for k, v in entry.items() if k not in {"criterion", "winner"}}
            detail["shown_winner"] = shown
            rows.append(ParsedRow(RowKey(c.name), winner=winners[c.name], detail=detail))
        shown_overall = parsing.as_choice(parsing.require(obj, "winner"), ("A", "B", "TIE"), "winner")
        confidence = parsing.as_number(parsing.require(obj, "confidence"), 0.0, 1.0, "confidence")
        winner = original(shown_overall)
        vote = verdicts.weighted_vote(winners, {c.name: c.weight for c in self.spec.criteria})
        detail = {"reasoning": obj.get("reasoning"), "shown_winner": shown_overall, "criteria_vote_winner": vote,
                  "disagreements": []}
        if vote != winner:
            detail["disagreements"].append(f"stated winner {winner} differs from the weighted criterion vote {vote}")
        rows.append(ParsedRow(RowKey("overall"), winner=winner, confidence=confidence, detail=detail))
        return rows
