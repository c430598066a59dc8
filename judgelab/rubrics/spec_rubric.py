"""What every spec-driven rubric shares: params, template rendering, fingerprint, parse wrapper."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import jinja2

from judgelab.conversations.messages import check_messages, looks_like_messages
from judgelab.conversations.render import render_conversation
from judgelab.rubrics import parsing, prompting, sandbox
from judgelab.rubrics.base import JudgeRequest, Mode, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.spec import COMMON_PARAMS, LAYOUT_FIELDS, Criterion, RubricSpec, RubricSpecError
from judgelab.rubrics.variants import derive_variant

__all__ = [
    "BUILTIN_DIR", "COMMON_PARAMS", "LANGUAGE_NAMES", "VERDICT_RULES_VERSION", "is_missing", "item_text",
    "SpecRubric",
]

BUILTIN_DIR = Path(__file__).parent / "builtin"
# Version of the library-computed verdict rules (one per kind module); part of every fingerprint.
VERDICT_RULES_VERSION = "1"

LANGUAGE_NAMES = {"en": "English", "it": "Italian", "fr": "French", "de": "German", "es": "Spanish", "pt": "Portuguese"}


class SpecRubric:
    """A rubric whose prompts and rules come from a :class:`RubricSpec`; subclasses add the code.

    Subclasses set ``kind``, ``code_version`` (bump on any change to their prompt-building or
    parsing code, since it is part of the fingerprint) and implement ``requests`` and ``_parse``.
    """

    kind: ClassVar[str] = ""
    code_version: ClassVar[str] = "1"
    extra_params: ClassVar[frozenset[str]] = frozenset()
    output_formats: ClassVar[frozenset[str]] = frozenset({"json"})  # formats this kind's parser reads
    # variant() changes this kind's code can honour (kinds add scale, justification, few_shot where they can);
    # the templates must also read them, which judgelab.rubrics.variants checks
    variant_keywords: ClassVar[frozenset[str]] = frozenset({"system", "criteria", "options", "language",
                                                            "anchor_order"})

    def __init__(self, spec: RubricSpec, base_dir: Path, **params: Any) -> None:
        unknown = sorted(set(params) - COMMON_PARAMS - self.extra_params)
        if unknown:
            allowed = ", ".join(sorted(COMMON_PARAMS | self.extra_params))
            raise RubricSpecError(f"rubric {spec.name!r} does not accept parameter(s) {unknown}; it accepts: {allowed}")
        self.params = dict(params)
        self.source_spec = spec  # as read from the file, before parameters: what a variant is rebuilt from
        self.base_dir = base_dir
        self.variant_of: str | None = None  # the rubric a variant was derived from (its name)
        self.variant_spec: dict[str, Any] = {}  # a variant's prompt changes (judgelab.rubrics.variants)
        spec = self._apply_common(spec, params)
        spec = self.apply_params(spec, params)
        self.bind(spec)

    def bind(self, spec: RubricSpec) -> None:
        """Make ``spec`` this rubric's spec: name, version, scale, templates and checks follow it."""
        self.spec = spec
        self.name: str = spec.name
        self.version: str = spec.version
        self.mode: Mode = spec.mode
        self.required_fields: tuple[str, ...] = tuple(spec.required_fields)
        self.candidate_fields: tuple[str, ...] = tuple(spec.candidate_fields)
        self.scale: tuple[int, int] | None = spec.scale.bounds if spec.scale else None
        self.default_temperature: float | None = spec.temperature
        self._env = prompting.make_environment(self.base_dir, BUILTIN_DIR)
        self._plain_base: dict[str, Any] | None = None
        # (template field, the item's context names) -> the template rendered once with holes (sandbox.splice)
        self._splices: dict[tuple[str, frozenset[str]], sandbox.Splice | None] = {}
        self._template_files: dict[str, str] = {}  # field -> the file its template came from
        self._templates = {"user": self._template_source("user", spec.templates.user)}
        if spec.templates.system:
            self._templates["system"] = self._template_source("system", spec.templates.system)
        for field, source in self._templates.items():  # compiled now: a bad or hostile template fails at load
            try:
                sandbox.compiled(self._env, source)
            except Exception as exc:
                raise sandbox.template_error(exc, self._template_where(field)) from None
        self._included = sandbox.included_sources(self._env, self._templates.values())
        if spec.output.format not in self.output_formats:
            raise RubricSpecError(f"rubric {spec.name!r}: field 'output.format': kind {self.kind!r} parses "
                                  f"{', '.join(sorted(self.output_formats))}, not {spec.output.format!r}")
        self.validate_options()

    def variant(self, name: str | None = None, **changes: Any) -> SpecRubric:
        """A new rubric derived from this one by ``changes``, with its own name and fingerprinted version.

        Changes: ``scale=(1, 3)``, ``justification="before" | "after"``, ``language="it"``,
        ``few_shot=k``, ``system="..."`` (None removes it), ``criteria={name: {"definition": ...,
        "anchors": {...}}}``, ``anchor_order="ascending" | "descending"``, ``options={...}``, and any
        parameter ``load_rubric`` accepts for this rubric. See :mod:`judgelab.rubrics.variants`.
        """
        return derive_variant(self, name, changes)

    # ------------------------------------------------------------------ hooks for subclasses
    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        """Return the spec with kind-specific params applied (default: unchanged)."""
        return spec

    def validate_options(self) -> None:
        """Check ``spec.options`` for this kind; raise RubricSpecError naming the problem."""

    def rescale_options(self, options: dict[str, Any], levels: Mapping[int, int]) -> dict[str, Any]:
        """``spec.options`` for a new scale; ``levels`` maps each old level that lands exactly on a new one
        (default: unchanged, for kinds whose options hold nothing per level)."""
        return options

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        raise NotImplementedError

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        raise NotImplementedError

    # ------------------------------------------------------------------ shared machinery
    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        """Parse raw judge text into rows; ParseFailure (parse_error or refusal) with a reason."""
        try:
            return self._parse(raw, request)
        except ParseFailure as failure:
            raise parsing.classify_failure(raw, failure) from None

    def _apply_common(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        update: dict[str, Any] = {}
        if "temperature" in params:
            update["temperature"] = params["temperature"]
        if "max_tokens" in params:
            update["max_tokens"] = params["max_tokens"]
        if "language" in params:
            update["language"] = str(params["language"])
        return spec.model_copy(update=update) if update else spec

    def _template_source(self, field: str, ref: str) -> str:
        """A template's text: ``ref`` itself, or the ``.j2`` file it names beside the rubric file ("builtin:NAME.j2"
        lets a user's YAML anywhere reuse a built-in template); a file elsewhere is refused like an include."""
        if not (ref.endswith(".j2") and "\n" not in ref):
            return ref
        self._template_files[field] = ref
        try:
            path = sandbox.resolve_template_file(self.base_dir, ref, BUILTIN_DIR)
            return path.read_text(encoding="utf-8")
        except jinja2.TemplateNotFound:
            raise RubricSpecError(f"rubric {self.spec.name!r}: field 'templates.{field}': template file not found: "
                                  f"{self.base_dir / ref.removeprefix(sandbox.BUILTIN_PREFIX)}") from None
        except Exception as exc:  # outside the folder, not a regular file, unreadable: one sentence
            raise sandbox.template_error(exc, self._template_where(field)) from None

    def _template_where(self, field: str) -> str:
        """How a template is named in an error: the rubric, the spec field and the file it came from."""
        file = self._template_files.get(field)
        return f"rubric {self.spec.name!r}, templates.{field}" + (f" ({file})" if file else "")

    def template_text(self) -> str:
        """Every template source of this rubric and of the files they include, joined (what a variant checks its
        changes can reach)."""
        return "\n".join([*self._templates.values(), *self._included.values()])

    @property
    def language_name(self) -> str:
        return LANGUAGE_NAMES.get(self.spec.language.lower(), self.spec.language)

    def criteria_context(self, criteria: list[Criterion] | None = None) -> list[dict[str, Any]]:
        """Criteria as plain dicts for templates (anchors sorted high to low, as the seeds list them)."""
        out = []
        for c in criteria if criteria is not None else self.spec.criteria:
            out.append(
                {
                    "name": c.name,
                    "label": c.label,
                    "definition": c.definition,
                    "weight": c.weight,
                    "sub_criteria": [s.model_dump() for s in c.sub_criteria],
                    "anchors": [(level, c.anchor_lines(level)) for level in sorted(c.anchors, reverse=True)],
                    "anchors_ascending": [(level, c.anchor_lines(level)) for level in sorted(c.anchors)],
                    "edge_cases": [e.model_dump() for e in c.edge_cases],
                    "guidelines": list(c.guidelines),
                }
            )
        return out

    def base_context(self) -> dict[str, Any]:
        scale = self.spec.scale
        return {
            "rubric": self.spec,
            "criteria": self.criteria_context(),
            "scale_min": scale.min if scale else None,
            "scale_max": scale.max if scale else None,
            "scale_anchors": sorted((scale.anchors if scale else {}).items(), reverse=True),
            "scale_anchors_ascending": sorted((scale.anchors if scale else {}).items()),
            "anchor_order": self.spec.anchor_order,  # None: the template's own order
            "justification_order": self.spec.justification,  # None: the template's own order
            "language": self.spec.language,
            "language_name": self.language_name,
            "options": self.spec.options,
        }

    def render_messages(self, context: Mapping[str, Any]) -> list[dict[str, str]]:
        if self._plain_base is None:  # the rubric's own values, made plain data once (sandbox.plain)
            self._plain_base = sandbox.plain(self.base_context())
        ctx = {**self._plain_base, **context}
        system = self._render("system", ctx, context) if "system" in self._templates else None
        return prompting.chat_messages(system, self._render("user", ctx, context))

    def _render(self, field: str, ctx: Mapping[str, Any], context: Mapping[str, Any]) -> str:
        """One template rendered for ``ctx`` (``context``: the item's part of it): the rubric's text rendered once
        with the item's outputs filled in when the template allows (sandbox.splice; the same text), else the full
        sandboxed render."""
        key = (field, frozenset(context))
        if key not in self._splices:
            assert self._plain_base is not None
            self._splices[key] = sandbox.splice(self._env, self._templates[field], self._plain_base, key[1])
        spliced = self._splices[key]
        text = spliced.render(context) if spliced is not None else None
        if text is not None:
            return text
        return prompting.render(self._env, self._templates[field], ctx, where=self._template_where(field))

    def make_request(
        self,
        context: Mapping[str, Any],
        expected_rows: tuple[RowKey, ...],
        *,
        swapped: bool = False,
        logprob_criterion: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> JudgeRequest:
        schema = self.response_schema()
        response_format = None
        if schema is not None:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": self.schema_name(), "schema": schema},
            }
        return JudgeRequest(
            messages=self.render_messages(context),
            expected_rows=expected_rows,
            swapped=swapped,
            response_format=response_format,
            logprob_criterion=logprob_criterion,
            max_tokens=self.spec.max_tokens,
            meta=dict(meta or {}),
        )

    def schema_name(self) -> str:
        """The response_format schema's name: ``<rubric>_output``, at most 64 characters (OpenAI's limit), which
        long variant names would pass; those keep 55 characters and 8 hex of a hash of the whole name."""
        name = f"{self.name}_output".replace("-", "_")
        return name if len(name) <= 64 else f"{name[:55]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"

    def response_schema(self) -> dict[str, Any] | None:
        """The JSON schema sent as response_format (the spec's; subclasses may tighten it per parameters)."""
        return self.spec.output.json_schema

    def fingerprint(self) -> str:
        """Hash of the spec (params applied), template texts and every code version involved."""
        spec = self.spec.model_dump(mode="json", exclude={"example", "description"})
        for unset in [f for f in LAYOUT_FIELDS if spec.get(f) is None]:
            del spec[unset]
        blob = json.dumps(
            {
                "spec": spec,
                "templates": self._templates if not self._included else {**self._templates, "included": self._included},
                "kind": self.kind,
                "code": [self.code_version, prompting.PROMPTING_VERSION, parsing.PARSING_VERSION,
                         VERDICT_RULES_VERSION],
                "extra": self.fingerprint_extra(),
            },
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def fingerprint_extra(self) -> Any:
        """Anything else that changes a prompt (e.g. a few-shot pool); default none."""
        return None

    def __repr__(self) -> str:
        derived = f", a variant of {self.variant_of}" if self.variant_of else ""
        return f"<{type(self).__name__} {self.name} v{self.version} ({self.mode}{derived})>"


def is_missing(value: Any) -> bool:
    """None or NaN (pandas turns an absent optional field into NaN)."""
    return value is None or (isinstance(value, float) and value != value)


def item_text(item: Mapping[str, Any], field: str, *, conversations: bool = False) -> Any:
    """An item field as prompt text (lists become bullet lines, dicts JSON, missing/NaN ""); a chat-message list
    becomes the text of the one conversation renderer, or, with ``conversations=True`` (kinds whose context only
    reaches templates), stays a list of messages that templates show with that renderer (printed, fenced or
    through the ``conversation`` filter)."""
    value = item.get(field)
    if is_missing(value):
        return ""
    if looks_like_messages(value):
        messages = check_messages(value, item_id=item.get("item_id"), field=field)
        return messages if conversations else render_conversation(messages)
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy arrays from Parquet list columns
        value = value.tolist()
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "\n".join(f"- {v}" for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)
