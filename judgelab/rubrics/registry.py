"""Built-in rubric names, rubric kinds (spec -> code), and loading by name or path."""

from __future__ import annotations

import difflib
import importlib
import json
from pathlib import Path
from typing import Any

from judgelab.rubrics.spec import RubricSpecError, load_spec_file
from judgelab.rubrics.spec_rubric import BUILTIN_DIR, SpecRubric

__all__ = [
    "EXAMPLES_DIR", "KINDS", "describe_rubric", "diff_example", "diff_rubrics", "example_items", "list_rubrics",
    "load_rubric", "prompt_text", "spec_differences",
    "resolve_rubric_path", "rubric_class",
]

# Example item files ship inside the package (data/examples in a checkout is a link to this folder).
EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


# rubric kind -> "module:Class"; imported on demand so that loading one rubric imports only its code
KINDS: dict[str, str] = {
    "direct_score": "judgelab.rubrics.direct_score:DirectScoreRubric",
    "pairwise": "judgelab.rubrics.pairwise:PairwiseRubric",
    "chess_commentary": "judgelab.rubrics.chess_commentary:ChessCommentaryRubric",
    "unified_judge": "judgelab.rubrics.unified_judge:UnifiedJudgeRubric",
    "reference_gold": "judgelab.rubrics.reference_gold:ReferenceGoldRubric",
    "editorial_summary": "judgelab.rubrics.editorial_summary:EditorialSummaryRubric",
    "mt_bench": "judgelab.rubrics.mt_bench:MTBenchRubric",
}


def rubric_class(kind: str) -> type[SpecRubric]:
    if kind not in KINDS:
        raise RubricSpecError(f"unknown rubric kind {kind!r}; known: {', '.join(sorted(KINDS))}")
    module_name, class_name = KINDS[kind].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def list_rubrics() -> list[str]:
    """Names of the built-in rubrics."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def resolve_rubric_path(name_or_path: str | Path) -> Path:
    """A built-in name -> its YAML; a path -> itself. Unknown names fail with the list of names."""
    text = str(name_or_path)
    if text in list_rubrics():
        return BUILTIN_DIR / f"{text}.yaml"
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} or path.exists():
        if not path.exists():
            raise RubricSpecError(f"rubric file not found: {path}")
        if not path.is_file():
            raise RubricSpecError(f"{str(path)!r} is a folder, not a rubric YAML file or a built-in rubric name")
        return path
    raise RubricSpecError(f"unknown rubric {text!r}; built-in rubrics: {', '.join(list_rubrics())} (or give a YAML path)")


def load_rubric(name_or_path: str | Path, **params: Any) -> SpecRubric:
    """Load a built-in rubric by name, or a user rubric from a YAML file, with parameters applied.

    Parameters depend on the rubric kind, e.g. ``language="it"``, ``few_shot=3`` and
    ``few_shot_pool=...`` (editorial_summary), ``degraded=True`` (reference_gold),
    ``criteria=[...]``, ``weights={...}``, ``scale=10`` (direct_score / pairwise),
    ``temperature=0.0`` (all). Unknown parameters fail with the list the rubric accepts.
    """
    path = resolve_rubric_path(name_or_path)
    spec = load_spec_file(path)
    if spec.kind not in KINDS:
        raise RubricSpecError(f"{path}: field 'kind': unknown rubric kind {spec.kind!r}; known: {', '.join(sorted(KINDS))}")
    return rubric_class(spec.kind)(spec, path.parent, **params)


def example_items(name: str) -> list[dict[str, Any]]:
    """The example items of a rubric: judgelab/rubrics/examples/<name>.jsonl (shipped in the package), else none."""
    path = EXAMPLES_DIR / f"{name}.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return []


def describe_rubric(rubric: str | Path | SpecRubric, **params: Any) -> str:
    """Human-readable spec plus a rendered example prompt (for `judgelab rubrics show NAME`).

    ``rubric``: a built-in name or YAML path (loaded with ``params``), or a rubric object such as a variant.
    """
    rubric = _as_rubric(rubric, params)
    spec = rubric.spec
    lines = [
        f"{spec.name} v{spec.version}  (kind: {spec.kind}, mode: {spec.mode})",
        f"a variant of {rubric.variant_of}: {_changes_text(rubric.variant_spec)}" if rubric.variant_of else "",
        f"source: {spec.source}" if spec.source else "",
        spec.description.strip(),
        "",
        f"required fields: {', '.join(spec.required_fields)}"
        + (f"; optional: {', '.join(spec.optional_fields)}" if spec.optional_fields else ""),
        f"scale: {spec.scale.min}-{spec.scale.max}" if spec.scale else "scale: (see criteria)",
        f"output format: {spec.output.format}" + (f" - {spec.output.description}" if spec.output.description else ""),
        f"verdict rule: {spec.verdict.rule}",
        f"default temperature: {spec.temperature}" if spec.temperature is not None else "default temperature: (model default)",
        f"fingerprint: {rubric.fingerprint()}",
        "",
        "criteria:",
    ]
    for c in spec.criteria:
        lines.append(f"  - {c.name} (weight {c.weight:g}): {c.definition.strip().splitlines()[0]}")
    items = _example(rubric)
    lines.append("")
    if not items:
        lines.append("(no example item: add judgelab/rubrics/examples/<name>.jsonl or an `example:` block to render a prompt)")
        return "\n".join(lines)
    item = items[0]
    all_requests = rubric.requests(item)
    request = all_requests[0]
    lines.append(f"example prompt (item {item.get('item_id', '?')}, first of {len(all_requests)} request(s)):")
    for m in request.messages:
        lines.append(f"--- {m['role']} ---")
        lines.append(m["content"])
    lines.append(f"--- expected rows: {', '.join(k.criterion + (':' + k.side if k.side else '') for k in request.expected_rows)}")
    return "\n".join(lines)


def _as_rubric(rubric: str | Path | SpecRubric, params: dict[str, Any]) -> SpecRubric:
    if isinstance(rubric, SpecRubric):
        if params:
            raise RubricSpecError(f"parameters {sorted(params)} apply to a rubric name or path; "
                                  f"derive a variant of {rubric.name!r} instead")
        return rubric
    return load_rubric(rubric, **params)


def _example(rubric: SpecRubric) -> list[dict[str, Any]]:
    """Example items of a rubric (a variant uses those of the rubric it comes from)."""
    spec = rubric.spec
    return example_items(rubric.variant_of or spec.name) or ([spec.example] if spec.example else [])


def _changes_text(changes: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_short(v)}" for k, v in changes.items())


def _short(value: Any, width: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested spec data as {dotted.path: leaf value}; criteria are keyed by name, not position."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in value.items():
            out.update(_flatten(sub, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        return _flatten({v["name"]: {k: x for k, x in v.items() if k != "name"} for v in value}, prefix)
    return {prefix: value}


def spec_differences(a: SpecRubric, b: SpecRubric) -> list[tuple[str, str, str]]:
    """(dotted field, value in ``a``, value in ``b``) for every spec field that differs, values shortened for display."""
    fa = _flatten(a.spec.model_dump(mode="json", exclude={"example", "description"}))
    fb = _flatten(b.spec.model_dump(mode="json", exclude={"example", "description"}))
    out = []
    for key in dict.fromkeys([*fa, *fb]):
        left, right = fa.get(key, _ABSENT), fb.get(key, _ABSENT)
        if left != right:
            out.append((key, "(absent)" if left is _ABSENT else _short(left),
                        "(absent)" if right is _ABSENT else _short(right)))
    return out


def prompt_text(rubric: SpecRubric, item: dict[str, Any]) -> str:
    """The first request's messages for ``item`` as one text, each message under a ``[role]`` line."""
    return "\n".join(f"[{m['role']}]\n{m['content']}" for m in rubric.requests(item)[0].messages)


def diff_example(a: SpecRubric, b: SpecRubric, item: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """``item``, else the first example item of ``a`` (or ``b``), else None."""
    return item if item is not None else next(iter(_example(a) or _example(b)), None)


def diff_rubrics(a: str | Path | SpecRubric, b: str | Path | SpecRubric, *, item: dict[str, Any] | None = None,
                 context: int = 2) -> str:
    """A readable diff of two rubrics (e.g. two variants): the spec fields that differ, then the rendered prompt.

    The prompt is the first request for ``item`` (default: the first example item of ``a``); lines only
    in ``a`` start with ``-``, lines only in ``b`` with ``+`` (a unified diff with ``context`` lines).
    """
    ra, rb = _as_rubric(a, {}), _as_rubric(b, {})
    lines = [f"--- {ra.name} v{ra.version} (fingerprint {ra.fingerprint()})",
             f"+++ {rb.name} v{rb.version} (fingerprint {rb.fingerprint()})", "", "spec fields that differ:"]
    changed = spec_differences(ra, rb)
    lines += [f"  {key}: {left} -> {right}" for key, left, right in changed] or ["  (none)"]
    example = diff_example(ra, rb, item)
    lines.append("")
    if example is None:
        lines.append("(no example item to render a prompt: pass item=)")
        return "\n".join(lines)
    prompt = list(difflib.unified_diff(prompt_text(ra, example).splitlines(), prompt_text(rb, example).splitlines(),
                                       fromfile=ra.name, tofile=rb.name, n=context, lineterm=""))
    lines.append(f"rendered prompt (item {example.get('item_id', '?')}, first request):")
    lines.extend(prompt[2:] if prompt else ["  (identical)"])
    return "\n".join(lines)


_ABSENT = object()
