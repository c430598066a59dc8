"""A rubric's JSON schema bounded to a token budget (backends/schema_budget.py), on generated schemas and on every
built-in rubric's schema; and ``judgelab serve``'s request rewrite applying the same bound."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.backends.llama_server import translate_response_format
from judgelab.backends.schema_budget import (
    ARRAY_CAP,
    ARRAY_ITEMS,
    CHARS_PER_TOKEN,
    MAX_ENUM_VALUES,
    MAX_STRING_CHARS,
    MIN_STRING_CHARS,
    _cost,
    bounded_values,
    fit_schema,
    string_chars,
)
from judgelab.rubrics import list_rubrics, load_rubric

_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
_leaves = st.one_of(
    st.builds(dict, type=st.just("string")),
    st.builds(lambda n: {"type": "string", "maxLength": n}, st.integers(1, 2000)),
    st.builds(lambda v: {"type": "string", "enum": v}, st.lists(_names, min_size=1, max_size=4, unique=True)),
    st.sampled_from([{"type": "integer", "minimum": 1, "maximum": 5}, {"type": "number"}, {"type": "boolean"},
                     {"type": "number", "minimum": 0, "maximum": 1}, {"type": "integer", "minimum": 0, "maximum": 1000}]),
)
_schemas = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.builds(lambda props: {"type": "object", "properties": props, "required": list(props)},
                  st.dictionaries(_names, inner, min_size=1, max_size=4)),
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(lambda items, n: {"type": "array", "items": items, "maxItems": n}, inner, st.integers(1, 5)),
    ),
    max_leaves=12,
)


def _without_bounds(node: Any) -> Any:
    if isinstance(node, dict):
        added = ("maxLength", "maxItems", "enum") if node.get("type") in ("integer", "number") else ("maxLength", "maxItems")
        return {k: _without_bounds(v) for k, v in node.items() if k not in added}
    if isinstance(node, list):
        return [_without_bounds(v) for v in node]
    return node


def _worst_case_tokens(original: Any, fitted: Any) -> float:
    """Tokens an answer needs when every string is as long as the fitted schema allows and every array holds the
    items the budget counts (its own maxItems, else ARRAY_ITEMS)."""
    fixed, _ = _cost(original, 0)
    return fixed + sum(n / CHARS_PER_TOKEN for n in _string_lengths(original, fitted))


def _string_lengths(original: Any, fitted: Any, times: int = 1) -> list[int]:
    if not isinstance(original, dict):
        return []
    if original.get("type") == "array":
        counted = int(original.get("maxItems", ARRAY_ITEMS))
        return _string_lengths(original.get("items", {}), fitted.get("items", {}), times * counted)
    if original.get("type") == "string" and "enum" not in original:
        return [int(fitted["maxLength"])] * times
    return [n for key, child in (original.get("properties") or {}).items()
            for n in _string_lengths(child, fitted["properties"][key], times)]


@settings(max_examples=200, deadline=None)
@given(schema=_schemas, max_tokens=st.integers(16, 4096))
def test_fit_schema_only_adds_bounds_and_fits_the_budget(schema: dict, max_tokens: int) -> None:
    """Invariants: (1) the input is not modified; (2) apart from maxLength/maxItems the fitted schema is the input,
    property order included; (3) a maxLength the input sets is never loosened, an array's own maxItems is kept;
    (4) every free-text string and every array is bounded; (5) when the budget covers the schema's fixed parts and
    more than the minimum length of each string, the longest answer the fitted schema allows (arrays of no stated
    size at the ARRAY_ITEMS the budget counts) fits in max_tokens; (6) a bounded number lists exactly the values
    bounded_values gives (all within its bounds), and a range with more than MAX_ENUM_VALUES values lists none."""
    before = copy.deepcopy(schema)
    fitted = fit_schema(schema, max_tokens)
    assert schema == before
    assert json.dumps(_without_bounds(fitted)) == json.dumps(_without_bounds(schema))

    def walk(original: Any, bounded: Any) -> None:
        if not isinstance(original, dict):
            return
        if original.get("type") == "string" and "enum" not in original:
            assert MIN_STRING_CHARS <= bounded["maxLength"] or bounded["maxLength"] == original.get("maxLength")
            assert bounded["maxLength"] <= original.get("maxLength", MAX_STRING_CHARS)
        if original.get("type") in ("integer", "number"):
            values = bounded_values(original)
            assert bounded.get("enum") == values
            assert values is None or all(original["minimum"] <= v <= original["maximum"] for v in values)
            if values is None and "minimum" in original and "maximum" in original:
                assert original["maximum"] - original["minimum"] >= MAX_ENUM_VALUES
        if original.get("type") == "array":
            assert bounded["maxItems"] == original.get("maxItems", ARRAY_CAP)
            walk(original["items"], bounded["items"])
        for key, child in (original.get("properties") or {}).items():
            walk(child, bounded["properties"][key])

    walk(schema, fitted)
    fixed, strings = _cost(schema, 0)
    if fixed + 4 + strings * (MIN_STRING_CHARS + 1) / CHARS_PER_TOKEN <= max_tokens:  # a budget the shape fits in
        assert _worst_case_tokens(schema, fitted) <= max_tokens


@pytest.mark.parametrize("name", list_rubrics())
def test_every_builtin_rubric_schema_becomes_a_llama_grammar_at_notebook_budgets(name: str) -> None:
    """Each built-in rubric's schema, fitted to the budgets the notebooks use, is one llama.cpp can compile (the
    converter refuses what it cannot express), and keeps the rubric's property order."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    schema = load_rubric(name).response_schema()
    if schema is None:
        pytest.skip(f"{name} asks for free text: no schema, no grammar")
    for budget in (64, 128, 256, 512):
        fitted = fit_schema(schema, budget)
        assert list(fitted.get("properties", {})) == list(schema.get("properties", {}))
        LlamaGrammar.from_json_schema(json.dumps(fitted), verbose=False)


def test_serve_bounds_the_schema_to_the_request_budget() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}, "why": {"type": "string"}}}
    body = {"max_tokens": 64, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}}
    out = translate_response_format(body)
    assert out["response_format"]["type"] == "json_object"
    assert out["response_format"]["schema"]["properties"]["why"]["maxLength"] == string_chars(schema, 64)
    assert "maxLength" not in schema["properties"]["why"]  # the request's own dict is left alone
    unbounded = translate_response_format({**body, "max_tokens": None})
    assert unbounded["response_format"]["schema"] == schema


@settings(max_examples=50, deadline=None)
@given(names=st.lists(_names, min_size=1, max_size=6, unique=True), other=st.lists(_names, min_size=1, max_size=3))
def test_an_exact_list_keyed_by_names_becomes_one_entry_per_name(names: list[str], other: list[str]) -> None:
    """Invariant: an array of exactly n objects keyed by an enum of n names becomes a tuple holding each name once,
    in order, every other field kept; an array whose size differs from the enum's is left a list."""
    entry = {"type": "object", "properties": {"criterion": {"type": "string", "enum": names},
                                              "winner": {"type": "string", "enum": ["A", "B", "TIE", "X", "Y", "Z", "W"]},
                                              "why": {"type": "string"}}, "required": ["criterion", "winner", "why"]}
    schema = {"type": "object", "properties": {"scores": {"type": "array", "items": entry, "minItems": len(names),
                                                          "maxItems": len(names)}}}
    fitted = fit_schema(schema, 512)["properties"]["scores"]
    assert [e["properties"]["criterion"] for e in fitted["prefixItems"]] == [{"const": n} for n in names]
    assert all(e["properties"]["winner"] == entry["properties"]["winner"] and "maxLength" in e["properties"]["why"]
               for e in fitted["prefixItems"])
    loose = {**schema["properties"]["scores"], "maxItems": len(names) + 1}
    assert "items" in fit_schema({"type": "object", "properties": {"scores": loose}}, 512)["properties"]["scores"]


@pytest.mark.parametrize("name,path", [("unified_judge", ("evaluation", "rule_compliance", "rules")),
                                       ("pairwise", ("comparison",)), ("direct_score", ("scores",))])
def test_per_entry_lists_become_one_entry_per_name_for_each_example_item(name: str, path: tuple[str, ...]) -> None:
    """Each built-in rubric whose parser wants exactly one entry per criterion (or per rule of the item's module)
    says so in its request's schema, and the embedded judge's grammar gets one entry per name, in order."""
    from judgelab.rubrics import example_items

    rubric = load_rubric(name)
    for item in example_items(name):
        request = rubric.requests(item)[0]
        node = fit_schema(request.response_format["json_schema"]["schema"], 512)
        for key in path:
            node = node["properties"][key]
        names = [entry["properties"][next(iter(entry["properties"]))] for entry in node["prefixItems"]]
        expected = (request.meta["rules"] if name == "unified_judge" else [c.name for c in rubric.spec.criteria])
        assert names == [{"const": n} for n in expected]


@settings(max_examples=200, deadline=None)
@given(low=st.integers(-500, 500), width=st.integers(0, 400), scale=st.sampled_from([1, 10, 100, 1000]),
       kind=st.sampled_from(["integer", "number"]))
def test_a_bounded_number_lists_the_values_a_grammar_can_enforce(low: int, width: int, scale: int, kind: str) -> None:
    """Invariants on generated ranges [low, low + width] / scale: the values listed are distinct, ascending, within
    the bounds, at most MAX_ENUM_VALUES; an integer range lists every integer in it; a number range lists a grid
    of at most 2 decimals whose step is the finest (0.01, 0.1, 1) that fits, reaching both bounds when they lie on
    it; nothing is listed for a range with too many values, exclusive bounds or an enum of its own."""
    lo, hi = low / scale, (low + width) / scale
    node = {"type": kind, "minimum": lo, "maximum": hi}
    values = bounded_values(node)
    if kind == "integer":
        expected = list(range(math.ceil(lo), math.floor(hi) + 1))
        assert values == (expected if 0 < len(expected) <= MAX_ENUM_VALUES else None)
    elif values is not None:
        assert values == sorted(set(values)) and all(lo <= v <= hi for v in values) and len(values) <= MAX_ENUM_VALUES
        step = round(values[1] - values[0], 6) if len(values) > 1 else None
        if step is not None:
            assert step in (0.01, 0.1, 1.0)
            assert all(abs((b - a) - step) < 1e-9 for a, b in zip(values[:-1], values[1:], strict=True))  # no gaps
            if step != 0.01:  # a finer grid would list too many values
                finer = 100 if step == 0.1 else 10
                assert math.floor(round(hi * finer, 9)) - math.ceil(round(lo * finer, 9)) + 1 > MAX_ENUM_VALUES
        if step == 0.01 and scale <= 100:  # bounds on the grid are listed
            assert values[0] == lo and values[-1] == hi
    else:
        assert math.floor(hi) - math.ceil(lo) + 1 > MAX_ENUM_VALUES or math.floor(hi) < math.ceil(lo)
    assert bounded_values({**node, "exclusiveMaximum": hi}) is None
    assert bounded_values({**node, "enum": [lo]}) is None


def test_the_pairwise_confidence_is_held_to_0_1_by_the_embedded_grammar() -> None:
    """The pairwise rubric's 0-1 confidence (what its parser accepts) becomes an enum the llama.cpp grammar enforces:
    the embedded judge answered 'confidence: 1.1' under a bare number rule, an unscored row."""
    schema = load_rubric("pairwise").response_schema()
    fitted = fit_schema(schema, 256)["properties"]["confidence"]
    assert fitted["enum"][0] == 0 and fitted["enum"][-1] == 1 and len(fitted["enum"]) == 101
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar
    LlamaGrammar.from_json_schema(json.dumps(fit_schema(schema, 256)), verbose=False)
