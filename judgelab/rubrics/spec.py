"""The rubric spec: a validated YAML document (criteria, scale, output format, templates, rule).

A user rubric is a YAML file; the smallest useful one reuses the built-in direct_score code and
templates::

    name: helpfulness_1to10
    version: "1.0"
    kind: direct_score          # which code parses and aggregates (see registry.KINDS)
    mode: direct                # direct | pairwise | reference
    required_fields: [prompt, response]
    candidate_fields: [response]  # judged (untrusted, perturbable) fields; pairwise: [A's, B's]
    scale: {min: 1, max: 10}
    criteria:
      - name: helpfulness
        definition: Does the response help the user with what they asked?
        weight: 1.0
        anchors: {1: Useless or harmful., 10: Fully solves the request.}
    output: {format: json}      # json | csv_line | pattern (each kind states which it parses)
    templates: {system: "builtin:direct_score.system.j2", user: "builtin:direct_score.user.j2"}
    verdict: {rule: weighted_mean}

Templates are Jinja files next to the YAML (or ``builtin:NAME.j2``); untrusted item text must go
through the ``fence`` / ``neutralize`` filters (judgelab.rubrics.prompting).

A malformed file fails with :class:`RubricSpecError` naming the field and the YAML line, found
by walking PyYAML's node tree (which keeps each node's start mark) along pydantic's error path.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgelab.errors import JudgelabError

__all__ = [
    "COMMON_PARAMS", "CRITERION_NAME", "RUBRIC_NAME", "SEED_SCALES", "apply_criteria_params", "coerce_criteria",
    "coerce_scale", "Criterion", "EdgeCase", "FewShot", "load_spec_file", "OutputSpec", "parse_spec_text",
    "LAYOUT_FIELDS", "RubricSpec", "RubricSpecError", "Scale", "SubCriterion", "Templates", "validate_spec_data",
    "VerdictSpec",
]

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader when libyaml is available

RUBRIC_NAME = r"^[A-Za-z][A-Za-z0-9_\-]*$"
# spec fields that only lay the prompt out; left out of a fingerprint while unset, so adding them kept every
# existing rubric's fingerprint (and its cached calls)
LAYOUT_FIELDS: tuple[str, ...] = ("justification", "anchor_order")
CRITERION_NAME = r"^[a-z][a-z0-9_]*$"
# load parameters every rubric accepts: each overrides the spec field of the same name
COMMON_PARAMS = frozenset({"temperature", "language", "max_tokens"})


class RubricSpecError(JudgelabError, ValueError):
    """A rubric spec that cannot be used; the message names the file, field and line."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SubCriterion(_Strict):
    name: str
    description: str


class EdgeCase(_Strict):
    situation: str = Field(min_length=1)
    guidance: str = Field(min_length=1)


class Criterion(_Strict):
    name: str = Field(pattern=CRITERION_NAME)
    title: str | None = None  # display name, e.g. "Faithfulness to provided context"
    definition: str = Field(min_length=1)
    sub_criteria: list[SubCriterion] = Field(default_factory=list)
    # level -> description; a list when the seed gives several sentences per level
    anchors: dict[int, str | list[str]] = Field(default_factory=dict)
    weight: float = Field(default=1.0, ge=0)
    edge_cases: list[EdgeCase] = Field(default_factory=list)  # guidance for ambiguous situations (seed 002)
    guidelines: list[str] = Field(default_factory=list)  # general scoring principles (seed 002)

    @property
    def label(self) -> str:
        return self.title or self.name.replace("_", " ").capitalize()

    def anchor_lines(self, level: int) -> list[str]:
        value = self.anchors.get(level, [])
        return [value] if isinstance(value, str) else list(value)


class Scale(_Strict):
    min: int
    max: int
    anchors: dict[int, str] = Field(default_factory=dict)  # global level descriptions

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if self.min >= self.max:
            raise ValueError(f"scale min ({self.min}) must be below max ({self.max})")
        for level in self.anchors:
            if not self.min <= level <= self.max:
                raise ValueError(f"anchor level {level} is outside the scale {self.min}-{self.max}")
        return self

    @property
    def bounds(self) -> tuple[int, int]:
        return (self.min, self.max)


class OutputSpec(_Strict):
    format: Literal["json", "csv_line", "pattern"]
    description: str | None = None  # what the seed asks for, shown in `rubrics show`
    json_schema: dict[str, Any] | None = None  # sent as response_format when the provider supports it


class Templates(_Strict):
    user: str  # a file name ending in .j2 (relative to the spec file) or inline Jinja text
    system: str | None = None


class FewShot(_Strict):
    k: int = Field(default=0, ge=0)
    slot: str = "few_shot_examples"


class VerdictSpec(_Strict):
    rule: str  # documented name of the rule the rubric's code applies
    tie_break: list[str] = Field(default_factory=list)
    pass_threshold: float | None = None
    cap_when_incorrect: float | None = None


class RubricSpec(_Strict):
    name: str = Field(pattern=RUBRIC_NAME)
    version: str
    kind: str  # which rubric implementation runs this spec (see judgelab.rubrics.registry)
    mode: Literal["direct", "pairwise", "reference"]
    description: str = ""
    source: str = ""  # the seed document the rubric is faithful to
    required_fields: list[str] = Field(min_length=1)
    optional_fields: list[str] = Field(default_factory=list)
    criteria: list[Criterion] = Field(min_length=1)
    scale: Scale | None = None
    output: OutputSpec
    templates: Templates
    verdict: VerdictSpec
    few_shot: FewShot = Field(default_factory=FewShot)
    language: str = "en"
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, gt=0)
    options: dict[str, Any] = Field(default_factory=dict)  # kind-specific data (modules, keywords, ...)
    # the item fields holding the judged (untrusted, perturbable) texts; pairwise: [A's field, B's field]
    candidate_fields: list[str] = Field(default_factory=list)
    example: dict[str, Any] | None = None  # an item used by `rubrics show` when no example file exists
    # how the prompt is laid out; None keeps the template's own order (see judgelab.rubrics.variants)
    justification: Literal["before", "after"] | None = None  # the judge's reasoning before or after its verdict
    anchor_order: Literal["ascending", "descending"] | None = None  # level anchors listed low-to-high or high-to-low

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) else v

    @model_validator(mode="after")
    def _consistent(self) -> RubricSpec:
        names = [c.name for c in self.criteria]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"criterion names must be unique; repeated: {dupes}")
        if self.scale is not None:
            for c in self.criteria:
                for level in c.anchors:
                    if not self.scale.min <= level <= self.scale.max:
                        raise ValueError(f"criterion {c.name!r} has an anchor for level {level}, outside the scale")
        for f in self.candidate_fields:
            if f not in self.required_fields:
                raise ValueError(f"candidate field {f!r} is not among required_fields")
        if self.mode == "pairwise" and len(self.candidate_fields) != 2:
            raise ValueError("a pairwise rubric needs exactly two candidate_fields (A's, then B's)")
        if sum(c.weight for c in self.criteria) <= 0:
            raise ValueError("criterion weights sum to zero")
        for name in self.verdict.tie_break:
            if name not in names:
                raise ValueError(f"verdict.tie_break names unknown criterion {name!r}")
        return self

    def criterion(self, name: str) -> Criterion:
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(name)


# ------------------------------------------------------------------------------ YAML loading
def load_spec_file(path: Path) -> RubricSpec:
    """Read and validate a rubric YAML file (cached by path, size and modification time)."""
    try:
        if not path.exists():
            raise RubricSpecError(f"rubric file not found: {path}")
        if path.is_dir():
            raise RubricSpecError(f"the rubric {path} is a folder, not a file; give the rubric's YAML file")
        stat = path.stat()
    except OSError as exc:
        raise RubricSpecError(f"cannot read the rubric file {path}: {exc.strerror or exc}") from None
    return _cached_spec(str(path.resolve()), stat.st_mtime_ns, stat.st_size, str(path))


@functools.lru_cache(maxsize=64)
def _cached_spec(path: str, mtime_ns: int, size: int, given: str) -> RubricSpec:
    # specs are never mutated in place (parameters make copies), so sharing one object is safe
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RubricSpecError(f"the rubric file {given} is not UTF-8 text (byte {exc.start}); save it as UTF-8 "
                              "YAML") from None
    except OSError as exc:
        raise RubricSpecError(f"cannot read the rubric file {given}: {exc.strerror or exc}") from None
    return parse_spec_text(text, where=path)


def parse_spec_text(text: str, where: str = "<rubric>") -> RubricSpec:
    """Validate YAML text as a RubricSpec; errors name the field and its line."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = _Loader(text).construct_document(root) if root is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise RubricSpecError(f"{where}: invalid YAML{line}: {problem}") from None
    if not isinstance(data, dict):
        raise RubricSpecError(f"{where}: a rubric file must be a YAML mapping (name, version, criteria, ...)")
    _check_size(root, where)
    return validate_spec_data(data, where=where, root=root)


MAX_SPEC_VALUES = 100_000  # values a rubric file may hold once its YAML aliases are expanded


def _check_size(root: yaml.Node, where: str) -> None:
    """Refuse a file whose aliases expand to more than :data:`MAX_SPEC_VALUES` values or refer to themselves: the
    spec is copied, dumped and hashed value by value, so an alias "bomb" of a few lines would never finish."""
    count = 0
    stack: list[tuple[yaml.Node, frozenset[int]]] = [(root, frozenset())]
    while stack:
        node, parents = stack.pop()
        count += 1
        if count > MAX_SPEC_VALUES:
            raise RubricSpecError(f"{where}: the rubric holds more than {MAX_SPEC_VALUES:,} values once its YAML "
                                  "aliases are expanded; write the values out or shorten the file")
        if id(node) in parents:
            raise RubricSpecError(f"{where}: a YAML alias refers to the value that contains it (line "
                                  f"{node.start_mark.line + 1}); a rubric's values must not contain themselves")
        inner = parents | {id(node)}
        if isinstance(node, yaml.MappingNode):
            stack.extend((part, inner) for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, inner) for child in node.value)


def validate_spec_data(data: dict[str, Any], where: str = "<rubric>", root: yaml.Node | None = None) -> RubricSpec:
    try:
        return RubricSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field = _format_loc(loc)
        line = _line_of(root, loc)
        msg = err["msg"]
        if err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field (check the spelling)"
        more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
        raise RubricSpecError(f"{where}: field '{field}'{line}: {msg}{more}") from None


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<root>"


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """The line of the deepest YAML node along ``loc`` (the parent's line for a missing key)."""
    node, best = root, root
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if str(k.value) == str(part)), None)
            if match is None:
                break
            best, node = match  # a mapping entry is reported at its key's line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            best = node = node.value[part]
        else:
            break
    return "" if best is None else f" (line {best.start_mark.line + 1})"


# ---------------------------------------------------------------- criteria and scale parameters
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
        raise RubricSpecError(f"scale {bounds[0]}-{bounds[1]} is not one of the supported scales 1-3, 1-5, 1-10")
    return bounds


def apply_criteria_params(spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
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
