"""Rubric variants: ``rubric.variant(name=..., **changes)`` derives a new rubric from any spec-driven one.

A variant is rebuilt from the base rubric's file spec and parameters, then its prompt changes are
applied, so a variant of a variant accumulates changes and never drifts from its files. It gets its
own ``name`` (given, or made from the changes) and a ``version`` of ``<base version>+<8 hex of its
fingerprint>``, so judgments tables (columns ``rubric``, ``rubric_version``) and request caches keep
variants apart. The changes:

- ``scale=(lo, hi)``: 1-3, 1-5 or 1-10. Level anchors are **remapped where they land exactly** on the
  new scale under the linear map of the old ends onto the new ones (1-3 -> 1-5 sends 1, 2, 3 to 1, 3, 5;
  anchors at the two ends only always map); **otherwise they are required**: give the criterion's
  anchors for the new scale in the same call (``criteria={name: {"anchors": {...}}}``) or the variant
  fails naming the criterion and the levels. Score bounds in the JSON schema follow. Few-shot
  examples carry human scores on the old scale, so a scale change with ``few_shot > 0`` fails.
- ``justification="before" | "after"``: the judge's reasoning (justification, evidence, explanation,
  analysis) before or after its verdict (score, winner); the template's instructions, the JSON shape
  it shows and the response schema's field order (which constrained decoders follow) all change.
- ``language="it"``: the language the judge writes its reasoning in.
- ``few_shot=k`` (kinds with a few-shot slot; pass ``few_shot_pool=`` too if the base has none);
  ``few_shot=0`` removes the examples.
- ``system="..."`` replaces or adds the system prompt; ``system=None`` removes it.
- ``criteria={name: {"definition": ..., "anchors": {...}, ...}}``: new values for fields of existing
  criteria (``anchors`` replaces the whole set of levels); a plain string is a new definition.
- ``anchor_order="ascending" | "descending"``: the level anchors listed low-to-high or high-to-low.
- ``options={...}``: merged into ``spec.options``, mappings key by key (e.g. editorial_summary's level names
  for a new scale: ``options={"levels": {5: "Fair"}}``).
- any parameter ``load_rubric`` accepts for the rubric (``temperature=``, ``weights=``, ``few_shot_pool=``...).

A change this rubric cannot honour fails with one sentence: an unknown keyword, a criterion that
does not exist, an anchor outside the scale, a change the kind's parser or verdict rule cannot
follow (``variant_keywords`` of the rubric class), or one its templates never read.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from judgelab.rubrics.spec import (
    COMMON_PARAMS,
    RUBRIC_NAME,
    Criterion,
    RubricSpec,
    RubricSpecError,
    Scale,
    Templates,
    coerce_scale,
    validate_spec_data,
)

__all__ = [
    "CRITERION_FIELDS", "DerivableRubric", "REASON_KEYS", "VARIANT_KEYWORDS", "VERDICT_KEYS", "derive_variant",
    "exact_level_map", "order_schema", "rescale_schema", "variant_name",
]

VARIANT_KEYWORDS: tuple[str, ...] = (
    "scale", "justification", "language", "few_shot", "system", "criteria", "anchor_order", "options",
)
_UNSUPPORTED = {
    "scale": "its prompt text or verdict rule is written for its own scale",
    "justification": "its output has no justification to move",
    "few_shot": "it has no few-shot example slot (editorial_summary has one)",
}
# the name a template must use for a change to reach the prompt
_TEMPLATE_NAMES = {"justification": "justification_order", "anchor_order": "anchor_order",
                   "language": "language_name", "few_shot": "examples", "scale": "scale_max"}
# criterion fields a variant may replace, and the name a template must use for each to reach the prompt
CRITERION_FIELDS: dict[str, str | None] = {
    "definition": "definition", "title": "label", "anchors": "anchors", "sub_criteria": "sub_criteria",
    "edge_cases": "edge_cases", "guidelines": "guidelines", "weight": None,
}
# JSON fields that hold the judge's reasoning, and those that hold its verdict (ordered by ``justification``)
REASON_KEYS: tuple[str, ...] = ("evidence", "justification", "explanation", "analysis", "reasoning", "delta",
                                "decision_basis")
VERDICT_KEYS: tuple[str, ...] = ("score", "scores", "winner", "verdict", "confidence", "style_relevant")
_CHOICES = {"justification": ("before", "after"), "anchor_order": ("ascending", "descending")}


class DerivableRubric(Protocol):
    """What a variant needs from the rubric it derives from; every :class:`~judgelab.rubrics.spec_rubric.SpecRubric`
    is one. Declared here rather than imported, so the rubric class calls this module (``rubric.variant()``)
    without this module importing the class: the dependency runs one way."""

    kind: ClassVar[str]
    extra_params: ClassVar[frozenset[str]]
    variant_keywords: ClassVar[frozenset[str]]
    name: str
    spec: RubricSpec
    source_spec: RubricSpec  # as read from the file, before parameters: what a variant is rebuilt from
    base_dir: Path
    params: dict[str, Any]
    variant_of: str | None
    variant_spec: dict[str, Any]

    def __init__(self, spec: RubricSpec, base_dir: Path, **params: Any) -> None: ...

    def bind(self, spec: RubricSpec) -> None: ...

    def fingerprint(self) -> str: ...

    def template_text(self) -> str: ...

    def rescale_options(self, options: dict[str, Any], levels: Mapping[int, int]) -> dict[str, Any]: ...


R = TypeVar("R", bound=DerivableRubric)


def derive_variant(rubric: R, name: str | None, changes: Mapping[str, Any]) -> R:
    """The variant of ``rubric`` with ``changes`` (what :meth:`SpecRubric.variant` returns)."""
    cls = type(rubric)
    load_params = set(cls.extra_params) | COMMON_PARAMS
    where = f"variant of rubric {rubric.name!r}"
    if not changes:
        raise RubricSpecError(f"{where}: give at least one change ({', '.join(VARIANT_KEYWORDS)})")
    unknown = sorted(set(changes) - set(VARIANT_KEYWORDS) - load_params)
    if unknown:
        raise RubricSpecError(f"{where}: unknown change {unknown[0]!r}; "
                              f"known: {', '.join(sorted(set(VARIANT_KEYWORDS) | load_params))}")
    for key in changes:
        if key in VARIANT_KEYWORDS and key not in cls.variant_keywords:
            raise RubricSpecError(f"{where}: a {cls.kind} rubric cannot change {key} ({_UNSUPPORTED.get(key, '')})")
    merged = _merge(rubric.variant_spec, changes)
    root = rubric.variant_of or rubric.name
    name = variant_name(root, merged) if name is None else name
    where = f"variant {name!r} of rubric {root!r}"
    if not isinstance(name, str) or not re.match(RUBRIC_NAME, name):
        raise RubricSpecError(f"{where}: a variant name starts with a letter and holds letters, digits, _ and -")
    if name in (root, rubric.name):
        raise RubricSpecError(f"{where}: a variant needs a name of its own, not the name of the rubric it comes from")
    params = {**rubric.params, **{k: v for k, v in changes.items() if k not in _SPEC_CHANGES}}
    try:
        new = cls(rubric.source_spec, rubric.base_dir, **params)
    except RubricSpecError as exc:
        raise RubricSpecError(f"{where}: {exc}") from None
    crit_changes = _criterion_changes(new.spec, merged.get("criteria"), where)
    _check_templates_read(new, merged, crit_changes, where)
    spec = apply_changes(new, new.spec, {k: v for k, v in merged.items() if k in _SPEC_CHANGES}, where)
    data = spec.model_dump()
    data["name"] = name
    spec = validate_spec_data(data, where=where)
    base_version = new.spec.version
    new.bind(spec)
    new.variant_of, new.variant_spec = root, merged
    # the version carries the fingerprint, so two variants that share a name still differ in rubric_version
    new.bind(spec.model_copy(update={"version": f"{base_version}+{new.fingerprint()[:8]}"}))
    return new


_SPEC_CHANGES = frozenset({"scale", "justification", "system", "criteria", "anchor_order", "options"})


def _merge(earlier: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """A variant of a variant: later changes win; options merge key by key, criteria field by field."""
    merged = dict(earlier)
    for key, value in changes.items():
        if key in ("criteria", "options") and key in merged and not isinstance(value, Mapping):
            raise RubricSpecError(f"variant: {key}= must be a mapping, got {type(value).__name__}")
        if key == "options" and key in merged:
            merged[key] = _deep_merge(merged[key], value)
        elif key == "criteria" and key in merged:
            fields = {name: {"definition": f} if isinstance(f, str) else f for name, f in merged[key].items()}
            for name, new in value.items():
                new = {"definition": new} if isinstance(new, str) else new
                both = isinstance(new, Mapping) and isinstance(fields.get(name), Mapping)
                fields[name] = {**fields[name], **new} if both else new
            merged[key] = fields
        else:
            merged[key] = value
    return merged


def _deep_merge(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """``old`` updated by ``new``, mappings merged key by key (options={"levels": {5: ...}} adds one name)."""
    out = dict(old)
    for key, value in new.items():
        both = isinstance(value, Mapping) and isinstance(out.get(key), Mapping)
        out[key] = _deep_merge(out[key], value) if both else value
    return out


def variant_name(root: str, changes: Mapping[str, Any]) -> str:
    """A name made from the changes, e.g. ``direct_score-scale1-3-justification_after``."""
    parts = []
    for key, value in changes.items():
        if key == "scale":
            lo, hi = coerce_scale(value)
            parts.append(f"scale{lo}-{hi}")
        elif value is None or isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) <= 16):
            parts.append(f"{key}_{value}")
        else:
            blob = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
            parts.append(f"{key}_{hashlib.sha256(blob.encode()).hexdigest()[:6]}")
    return re.sub(r"[^A-Za-z0-9_\-]", "_", "-".join([root, *parts]))


def _check_templates_read(rubric: DerivableRubric, changes: Mapping[str, Any],
                          crit_changes: Mapping[str, Mapping[str, Any]], where: str) -> None:
    text = rubric.template_text()
    for key, token in _TEMPLATE_NAMES.items():
        if key in changes and token not in text:
            raise RubricSpecError(f"{where}: the templates of rubric {rubric.name!r} never use {token!r}, "
                                  f"so {key}= would not change the prompt")
    for cname, fields in crit_changes.items():
        for field in fields:
            token = CRITERION_FIELDS.get(field)
            if token is not None and token not in text:
                raise RubricSpecError(f"{where}: the templates of rubric {rubric.name!r} never show a criterion's "
                                      f"{field}, so criteria={{{cname!r}: {{{field!r}: ...}}}} would not change the prompt")
            if field == "weight" and "weights" not in type(rubric).extra_params:
                raise RubricSpecError(f"{where}: a {rubric.kind} rubric does not weigh its criteria, so a weight "
                                      "change would change nothing")


def apply_changes(rubric: DerivableRubric, spec: RubricSpec, changes: Mapping[str, Any], where: str) -> RubricSpec:
    """``spec`` with the prompt changes applied (scale first, so that anchors given in the same call win)."""
    for key, allowed in _CHOICES.items():
        if key in changes and changes[key] not in allowed:
            raise RubricSpecError(f"{where}: {key} must be {' or '.join(map(repr, allowed))}, not {changes[key]!r}")
    crit_changes = _criterion_changes(spec, changes.get("criteria"), where)
    criteria, scale, options = list(spec.criteria), spec.scale, dict(spec.options)
    schema = spec.output.json_schema
    if "scale" in changes:
        criteria, scale, options, schema = _rescale(rubric, spec, changes["scale"], crit_changes, where)
    criteria = [_replace_fields(c, crit_changes.get(c.name, {}), where) for c in criteria]
    for c in criteria:
        if c.anchors and scale is None:
            raise RubricSpecError(f"{where}: criterion {c.name!r} has level anchors, but the rubric has no score scale")
        outside = sorted(level for level in c.anchors if scale is not None and not scale.min <= level <= scale.max)
        if outside and scale is not None:
            raise RubricSpecError(f"{where}: criterion {c.name!r} has an anchor for level {outside[0]}, outside "
                                  f"the {scale.min}-{scale.max} scale")
    if "options" in changes:
        if not isinstance(changes["options"], Mapping):
            raise RubricSpecError(f"{where}: options= must be a mapping, got {type(changes['options']).__name__}")
        options = _deep_merge(options, changes["options"])
    update: dict[str, Any] = {"criteria": criteria, "scale": scale, "options": options}
    if "justification" in changes:
        update["justification"] = changes["justification"]
        schema = order_schema(schema, changes["justification"])
    if schema is not spec.output.json_schema:
        update["output"] = spec.output.model_copy(update={"json_schema": schema})
    if "anchor_order" in changes:
        has_levels = any(len(c.anchors) > 1 for c in criteria) or (scale is not None and len(scale.anchors) > 1)
        if not has_levels:
            raise RubricSpecError(f"{where}: no criterion has level anchors to reorder; give some with "
                                  "criteria={name: {'anchors': {level: text, ...}}}")
        update["anchor_order"] = changes["anchor_order"]
    if "system" in changes:
        system = changes["system"]
        if system is not None and (not isinstance(system, str) or not system.strip()):
            raise RubricSpecError(f"{where}: system= must be a non-empty text (or a .j2 file), or None to remove it")
        update["templates"] = Templates(user=spec.templates.user, system=system)
    return spec.model_copy(update=update)


def _criterion_changes(spec: RubricSpec, value: Any, where: str) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RubricSpecError(f"{where}: criteria= must map criterion names to their new fields, "
                              f"got {type(value).__name__}")
    known = [c.name for c in spec.criteria]
    out = {}
    for cname, fields in value.items():
        if cname not in known:
            raise RubricSpecError(f"{where}: criterion {cname!r} does not exist (criteria: {', '.join(known)})")
        fields = {"definition": fields} if isinstance(fields, str) else fields
        if not isinstance(fields, Mapping):
            raise RubricSpecError(f"{where}: criteria[{cname!r}] must be a definition text or a mapping of fields")
        bad = sorted(set(fields) - set(CRITERION_FIELDS))
        if bad:
            raise RubricSpecError(f"{where}: criteria[{cname!r}] has unknown field {bad[0]!r}; "
                                  f"fields: {', '.join(CRITERION_FIELDS)}")
        out[cname] = dict(fields)
    return out


def _replace_fields(criterion: Criterion, fields: Mapping[str, Any], where: str) -> Criterion:
    if not fields:
        return criterion
    data = {**criterion.model_dump(), **fields}
    try:
        return Criterion.model_validate(data)
    except ValueError as exc:  # pydantic's ValidationError names the field
        first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
        field = ".".join(str(p) for p in first["loc"])
        raise RubricSpecError(f"{where}: criteria[{criterion.name!r}].{field}: {first['msg']}") from None


def exact_level_map(old: tuple[int, int], new: tuple[int, int]) -> dict[int, int]:
    """Old levels that the linear map of ``old``'s ends onto ``new``'s sends exactly onto a new level."""
    (a, b), (c, d) = old, new
    out = {}
    for level in range(a, b + 1):
        image = c + Fraction(level - a) * (d - c) / (b - a)
        if image.denominator == 1:
            out[level] = int(image)
    return out


def _rescale(rubric: DerivableRubric, spec: RubricSpec, value: Any, crit_changes: Mapping[str, Mapping[str, Any]],
             where: str) -> tuple[list[Criterion], Scale, dict[str, Any], dict[str, Any] | None]:
    if spec.scale is None:
        raise RubricSpecError(f"{where}: rubric {spec.name!r} has no score scale to change")
    try:
        new = coerce_scale(value)
    except RubricSpecError as exc:
        raise RubricSpecError(f"{where}: {exc}") from None
    old = spec.scale.bounds
    if new == old:
        return list(spec.criteria), spec.scale, dict(spec.options), spec.output.json_schema
    if spec.few_shot.k > 0:
        raise RubricSpecError(f"{where}: the {spec.few_shot.k} few-shot examples show human scores on the "
                              f"{old[0]}-{old[1]} scale; set few_shot=0 to change the scale")
    levels = exact_level_map(old, new)

    def remap(anchors: Mapping[int, Any], owner: str, how: str) -> dict[int, Any]:
        lost = sorted(level for level in anchors if level not in levels)
        if lost:
            images = ", ".join(f"{float(new[0] + Fraction(x - old[0]) * (new[1] - new[0]) / (old[1] - old[0])):g}"
                               for x in lost)
            raise RubricSpecError(f"{where}: {owner} has anchors for levels {lost} that do not land on the "
                                  f"{new[0]}-{new[1]} scale (a linear map of {old[0]}-{old[1]} sends them to "
                                  f"{images}); {how}")
        return {levels[level]: text for level, text in anchors.items()}

    criteria = []
    for c in spec.criteria:
        if "anchors" in crit_changes.get(c.name, {}):
            criteria.append(c)  # replaced below by the anchors given for the new scale
        else:
            how = f"give its anchors for the new scale with criteria={{{c.name!r}: {{'anchors': {{...}}}}}}"
            criteria.append(c.model_copy(update={"anchors": remap(c.anchors, f"criterion {c.name!r}", how)}))
    scale_anchors = remap(spec.scale.anchors, "the scale", "this rubric's scale anchors cannot be rescaled")
    options = rubric.rescale_options(copy.deepcopy(dict(spec.options)), levels)
    return criteria, Scale(min=new[0], max=new[1], anchors=scale_anchors), options, \
        rescale_schema(spec.output.json_schema, old, new)


def _edit_schema(schema: dict[str, Any] | None, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any] | None:
    """A copy of ``schema`` with ``edit`` applied to every object node, outermost first."""
    if schema is None:
        return None
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            edit(node)
        for value in node.values() if isinstance(node, dict) else node if isinstance(node, list) else ():
            walk(value)

    walk(schema)
    return schema


def rescale_schema(schema: dict[str, Any] | None, old: tuple[int, int], new: tuple[int, int]) -> dict[str, Any] | None:
    """A JSON schema whose numeric fields bounded by the old scale are bounded by the new one."""

    def edit(node: dict[str, Any]) -> None:
        if node.get("type") in ("integer", "number") and (node.get("minimum"), node.get("maximum")) == old:
            node["minimum"], node["maximum"] = new

    return _edit_schema(schema, edit)


def order_schema(schema: dict[str, Any] | None, justification: str) -> dict[str, Any] | None:
    """A JSON schema whose objects list their reasoning fields before (or after) their verdict fields."""

    def edit(node: dict[str, Any]) -> None:
        props = node.get("properties")
        if isinstance(props, dict):
            order = _ordered_keys(list(props), justification)
            node["properties"] = {k: props[k] for k in order}
            if isinstance(node.get("required"), list):
                required = node["required"]
                node["required"] = [k for k in order if k in required] + [k for k in required if k not in props]

    return _edit_schema(schema, edit)


def _ordered_keys(keys: list[str], justification: str) -> list[str]:
    reasons = [k for k in keys if k in REASON_KEYS]
    verdicts = [k for k in keys if k in VERDICT_KEYS]
    if not reasons or not verdicts:
        return keys
    others = [k for k in keys if k not in reasons]
    at = others.index(verdicts[0]) if justification == "before" else others.index(verdicts[-1]) + 1
    return others[:at] + reasons + others[at:]
