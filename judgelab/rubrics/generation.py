"""Rubric generation (seed 002): ask a model for level descriptions, characteristics and edge
cases for one criterion, and validate the answer into a direct_score rubric spec.

The generated spec uses the built-in direct_score templates, so it can be saved as YAML
(:func:`save_rubric_yaml`) and loaded with ``load_rubric(path)`` like any user rubric.
The model is called through litellm (``completion`` / ``acompletion``); pass ``mock_response=``
to script it. Every problem in the answer ends in :class:`RubricGenerationError` naming the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from judgelab.engine.sync import sync_twin
from judgelab.errors import JudgelabError
from judgelab.rubrics import parsing
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.spec import RubricSpec, RubricSpecError, validate_spec_data

__all__ = [
    "SCALES", "STRICTNESS", "agenerate_rubric", "generate_rubric", "generation_messages",
    "rubric_from_answer", "RubricGenerationError", "save_rubric_yaml", "slug",
]

STRICTNESS = {
    "lenient": "Lenient: lower bar for passing scores, appropriate for encouraging iteration.",
    "balanced": "Balanced: fair, typical expectations for production use.",
    "strict": "Strict: high standards, appropriate for safety-critical or high-stakes evaluation.",
}
SCALES = {"1-3": (1, 3), "1-5": (1, 5), "1-10": (1, 10)}


class RubricGenerationError(JudgelabError, ValueError):
    """The model's answer could not be turned into a rubric; the message says which field failed."""


def generation_messages(criterion: str, description: str, domain: str, scale: str, strictness: str) -> list[dict[str, str]]:
    """The prompt asking for the seed's rubric components as JSON."""
    lo, hi = _scale(scale)
    levels = ", ".join(str(i) for i in range(lo, hi + 1))
    user = f"""Write a scoring rubric for one evaluation criterion.

Criterion name: {criterion}
Criterion description: {description}
Domain: {domain}
Scale: {lo}-{hi}
Strictness: {STRICTNESS[strictness]}

A well-defined rubric has:
1. Level descriptions: clear boundaries for each score level
2. Characteristics: observable features that define each level
3. Edge cases: guidance for ambiguous situations
4. Scoring guidelines: general principles for consistent application
Use the domain's own terminology (a "code readability" rubric mentions variables, functions and
comments; a "medical accuracy" rubric references clinical terminology and evidence standards).

Return ONLY a JSON object of this shape, with one entry in "levels" for EVERY score {levels}:
{{"levels": [{{"score": <integer>, "label": "<short name>", "description": "<what this level means>",
  "characteristics": ["<observable feature>", "..."]}}],
 "edgeCases": [{{"situation": "<ambiguous situation>", "guidance": "<how to score it>"}}],
 "scoringGuidelines": ["<general principle>", "..."]}}"""
    return [
        {"role": "system", "content": "You are an expert in evaluation design who writes precise scoring rubrics."},
        {"role": "user", "content": user},
    ]


def _scale(scale: str | tuple[int, int]) -> tuple[int, int]:
    if isinstance(scale, tuple):
        if scale not in SCALES.values():
            raise ValueError(f"scale {scale} must be one of 1-3, 1-5, 1-10")
        return scale
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r} must be one of {', '.join(SCALES)}")
    return SCALES[scale]


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if not s or not s[0].isalpha():
        s = "c_" + s
    return s


def rubric_from_answer(
    raw: str,
    *,
    criterion: str,
    description: str,
    domain: str,
    scale: str = "1-5",
    strictness: str = "balanced",
    name: str | None = None,
) -> RubricSpec:
    """Validate a model's rubric JSON into a direct_score RubricSpec (strict: every level present)."""
    lo, hi = _scale(scale)
    try:
        obj = parsing.extract_json_object(raw)
    except ParseFailure as exc:
        raise RubricGenerationError(f"generated rubric for {criterion!r}: {exc.reason}") from None

    def fail(msg: str) -> RubricGenerationError:
        return RubricGenerationError(f"generated rubric for {criterion!r}: {msg}")

    levels = obj.get("levels")
    if not isinstance(levels, list) or not levels:
        raise fail("missing field levels (a non-empty list)")
    anchors: dict[int, list[str]] = {}
    for i, level in enumerate(levels):
        if not isinstance(level, dict):
            raise fail(f"levels[{i}] is not an object")
        try:
            score = parsing.as_integer_score(level.get("score"), lo, hi, f"levels[{i}].score")
        except ParseFailure as exc:
            raise fail(exc.reason) from None
        if score in anchors:
            raise fail(f"levels[{i}].score={score} appears twice")
        label = level.get("label")
        desc = level.get("description")
        chars = level.get("characteristics")
        if not isinstance(label, str) or not label.strip():
            raise fail(f"levels[{i}].label is missing or empty")
        if not isinstance(desc, str) or not desc.strip():
            raise fail(f"levels[{i}].description is missing or empty")
        if not isinstance(chars, list) or not chars or not all(isinstance(c, str) and c.strip() for c in chars):
            raise fail(f"levels[{i}].characteristics must be a non-empty list of strings")
        anchors[score] = [f"{label.strip()}: {desc.strip()}", "Characteristics: " + "; ".join(c.strip() for c in chars)]
    missing = [s for s in range(lo, hi + 1) if s not in anchors]
    if missing:
        raise fail(f"no level description for score(s) {missing} on the {lo}-{hi} scale")
    edge = obj.get("edgeCases", obj.get("edge_cases"))
    if not isinstance(edge, list) or not edge:
        raise fail("missing field edgeCases (a non-empty list of {situation, guidance})")
    edge_cases = []
    for i, e in enumerate(edge):
        if not isinstance(e, dict) or not str(e.get("situation", "")).strip() or not str(e.get("guidance", "")).strip():
            raise fail(f"edgeCases[{i}] needs non-empty situation and guidance")
        edge_cases.append({"situation": str(e["situation"]).strip(), "guidance": str(e["guidance"]).strip()})
    guidelines = obj.get("scoringGuidelines", obj.get("scoring_guidelines", []))
    if not isinstance(guidelines, list) or not all(isinstance(g, str) for g in guidelines):
        raise fail("scoringGuidelines must be a list of strings")
    crit_name = slug(criterion)
    data = {
        "name": name or f"{crit_name}_rubric",
        "version": "1.0",
        "kind": "direct_score",
        "mode": "direct",
        "source": f"generated by judgelab.rubrics.generation (level descriptions, characteristics, edge cases): domain={domain}, strictness={strictness}",
        "description": f"Generated rubric for {criterion}: {description}",
        "required_fields": ["prompt", "response"],
        "candidate_fields": ["response"],
        "scale": {"min": lo, "max": hi},
        "criteria": [
            {
                "name": crit_name,
                "title": criterion,
                "definition": description,
                "anchors": anchors,
                "edge_cases": edge_cases,
                "guidelines": [g.strip() for g in guidelines if g.strip()],
            }
        ],
        "output": {"format": "json", "description": "direct_score JSON (justification before score)"},
        "templates": {"system": "builtin:direct_score.system.j2", "user": "builtin:direct_score.user.j2"},
        "verdict": {"rule": "weighted_mean of criterion scores"},
        "max_tokens": 1024,
    }
    try:
        return validate_spec_data(data, where=f"generated rubric for {criterion!r}")
    except RubricSpecError as exc:
        raise RubricGenerationError(str(exc)) from None


def _check_inputs(criterion: str, description: str, scale: str, strictness: str) -> None:
    if not criterion.strip() or not description.strip():
        raise ValueError("criterion and description must be non-empty")
    _scale(scale)
    if strictness not in STRICTNESS:
        raise ValueError(f"strictness {strictness!r} must be one of {', '.join(STRICTNESS)}")


async def agenerate_rubric(
    criterion: str,
    description: str,
    domain: str,
    scale: str = "1-5",
    strictness: str = "balanced",
    model: str = "gpt-4o-mini",
    *,
    name: str | None = None,
    temperature: float = 0.0,
    **completion_kwargs: Any,
) -> RubricSpec:
    """Ask ``model`` (via litellm.acompletion) for a rubric and validate it into a RubricSpec."""
    from judgelab.backends.pricing import offline_litellm

    litellm = offline_litellm()

    _check_inputs(criterion, description, scale, strictness)
    messages = generation_messages(criterion, description, domain, scale, strictness)
    response = await litellm.acompletion(model=model, messages=messages, temperature=temperature, **completion_kwargs)
    raw = response.choices[0].message.content or ""
    return rubric_from_answer(raw, criterion=criterion, description=description, domain=domain, scale=scale,
                              strictness=strictness, name=name)


def save_rubric_yaml(spec: RubricSpec, path: str | Path) -> Path:
    """Write a spec as YAML that ``load_rubric(path)`` reads back."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = spec.model_dump(exclude_none=True)  # python mode keeps integer anchor levels as YAML ints
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
    return path


generate_rubric = sync_twin(agenerate_rubric, "generate_rubric")
