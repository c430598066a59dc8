"""A rubric's JSON schema, bounded so that an answer that follows it fits in a token budget.

A grammar-constrained decoder (llama.cpp's JSON-schema grammars, used by the embedded judge and by
``judgelab serve``) forces the *shape* of an answer, not its length: a small model writes its free-text
``explanation`` until ``max_tokens`` cuts it, and a cut JSON object cannot be parsed. :func:`fit_schema` keeps
every field, type, enum and required key of the schema, and gives each free-text string a ``maxLength`` (and
each unbounded array a ``maxItems``) so that the whole object, keys and punctuation included, fits in the
budget, counting :data:`ARRAY_ITEMS` items for an array of no stated size. A ``maxLength`` the schema already
sets is kept when it is tighter; an array's own ``maxItems`` is kept, and one without gets the loose
:data:`ARRAY_CAP` (a prompt may ask for more items than the budget counted; a cut answer is still an unscored row). Only the two local llama.cpp backends
use it; a hosted provider gets the rubric's schema as written.

llama.cpp's converter ignores ``minimum``/``maximum`` (a number node becomes any JSON number), so a small model
can answer ``"confidence": 1.1`` to a 0-1 field, which the parser then refuses. :func:`fit_schema` therefore
also lists the values of a bounded number as an ``enum`` the grammar enforces (:func:`bounded_values`): every
integer of an integer range, or a number range on a grid of at most two decimals -- the embedded judge's
confidence is then one of 0, 0.01, ..., 1, which is all a plumbing judge needs. A range with more values than
:data:`MAX_ENUM_VALUES` is left to the parser.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

__all__ = ["ARRAY_CAP", "ARRAY_ITEMS", "CHARS_PER_TOKEN", "MAX_ENUM_VALUES", "MAX_STRING_CHARS", "MIN_STRING_CHARS",
           "bounded_values", "fit_schema", "string_chars", "tokens_for"]

# English prose runs ~4 characters per token, but a small model's degenerate text ("1.1.1.1...") can take a token
# per character: counting 1 makes the bound hold for any ASCII text (the answer is then shorter than the budget,
# which costs nothing: generation stops at the closing brace)
CHARS_PER_TOKEN = 1.0
MIN_STRING_CHARS = 8  # a budget too small for the schema still gets strings this long (and may be cut)
MAX_STRING_CHARS = 1200  # enough for any rubric's explanation; longer is rambling
ARRAY_ITEMS = 4  # items the budget counts for an array without maxItems (a rubric's per-criterion list)
# items such an array may hold: the prompt says how many it needs (the unified judge lists 4 rules), so the bound
# only stops a small model repeating items until the budget runs out
ARRAY_CAP = 8
MAX_ENUM_VALUES = 201  # a bounded number listed as an enum: at most this many values (0-1 in steps of 0.01 is 101)
_GRID_DECIMALS = (2, 1, 0)  # the finest grid of a number range that stays within MAX_ENUM_VALUES
_SCALAR_TOKENS = 4  # a number, a boolean, an enum value, with its separator
_KEY_TOKENS = 3  # a key, its quotes and colon (approximately; long keys are counted by length)
_KEY_CHARS_PER_TOKEN = 3.0  # keys are the schema's own words, which the grammar spells out: tokenized as words


def _is_free_text(node: dict[str, Any]) -> bool:
    return (node.get("type") == "string" and "enum" not in node and "const" not in node
            and "pattern" not in node and "format" not in node)


def _array_items(node: dict[str, Any]) -> int:
    """The items the budget counts for an array: its own ``maxItems``, else :data:`ARRAY_ITEMS` (or its
    ``minItems`` when larger)."""
    if "maxItems" in node:
        return int(node["maxItems"])
    return max(ARRAY_ITEMS, int(node.get("minItems", 0)))


def _one_entry_per_name(node: Any) -> Any:
    """An array of exactly n objects keyed by an enum of n names becomes a tuple of one object per name, in the
    enum's order (``prefixItems`` with a ``const`` key): a decoder cannot then name one criterion twice and skip
    another, which a strict parser refuses anyway. Applied all the way down; other nodes are returned as they are."""
    if isinstance(node, list):
        return [_one_entry_per_name(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {k: _one_entry_per_name(v) for k, v in node.items()}
    items = node.get("items")
    if node.get("type") != "array" or not isinstance(items, dict):
        return node
    size = node.get("minItems")
    if size is None or node.get("maxItems") != size:
        return node
    keyed = [k for k, v in (items.get("properties") or {}).items()
             if isinstance(v, dict) and isinstance(v.get("enum"), list) and len(v["enum"]) == size]
    if len(keyed) != 1:
        return node
    names = items["properties"][keyed[0]]["enum"]
    if len(set(map(str, names))) != len(names):
        return node
    tuple_items = []
    for name in names:
        entry = copy.deepcopy(items)
        entry["properties"][keyed[0]] = {"const": name}
        tuple_items.append(entry)
    rest = {k: v for k, v in node.items() if k not in ("items", "minItems", "maxItems")}
    return {**rest, "prefixItems": tuple_items}


def _cost(node: Any, string_chars: float) -> tuple[float, int]:
    """(tokens the fixed parts of ``node`` need, number of free-text strings in it), with arrays at their bound."""
    if not isinstance(node, dict):
        return _SCALAR_TOKENS, 0
    if "const" in node:  # spelled out by the grammar, like a key
        return len(json.dumps(node["const"])) / _KEY_CHARS_PER_TOKEN + 1, 0
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        tokens, strings = 2.0, 0
        for key, child in (node.get("properties") or {}).items():
            child_tokens, child_strings = _cost(child, string_chars)
            tokens += max(_KEY_TOKENS, len(str(key)) / _KEY_CHARS_PER_TOKEN + 2) + child_tokens
            strings += child_strings
        return tokens, strings
    if kind == "array" and isinstance(node.get("prefixItems"), list):
        costs = [_cost(child, string_chars) for child in node["prefixItems"]]
        return 2 + sum(t + 1 for t, _ in costs), sum(n for _, n in costs)
    if kind == "array":
        items = _array_items(node)
        child_tokens, child_strings = _cost(node.get("items", {}), string_chars)
        return 2 + items * (child_tokens + 1), items * child_strings
    if _is_free_text(node):  # its length is what the budget sets (never above a bound the schema gives)
        return 2.0, 1
    return _SCALAR_TOKENS, 0


def bounded_values(node: dict[str, Any]) -> list[int | float] | None:
    """The values an ``integer``/``number`` node with both ``minimum`` and ``maximum`` allows, as a grammar can list
    them (every integer; for a number, the finest grid of 2, 1 or 0 decimals within :data:`MAX_ENUM_VALUES`), or
    None: not a bounded number, exclusive bounds, an enum or const of its own, or too many values."""
    kind, low, high = node.get("type"), node.get("minimum"), node.get("maximum")
    if (kind not in ("integer", "number") or "enum" in node or "const" in node or "exclusiveMinimum" in node
            or "exclusiveMaximum" in node or isinstance(low, bool) or isinstance(high, bool)
            or not isinstance(low, int | float) or not isinstance(high, int | float)
            or not (math.isfinite(low) and math.isfinite(high)) or low > high):
        return None
    for decimals in (0,) if kind == "integer" else _GRID_DECIMALS:
        scale = 10**decimals
        first, last = math.ceil(round(low * scale, 9)), math.floor(round(high * scale, 9))
        if last - first + 1 <= MAX_ENUM_VALUES:
            if first > last:
                return None
            values = [round(k / scale, decimals) for k in range(first, last + 1)]
            return [int(v) if float(v).is_integer() else v for v in values]
    return None


def _bound(node: Any, chars: int) -> None:
    if not isinstance(node, dict):
        return
    values = bounded_values(node)
    if values is not None:  # the grammar ignores minimum/maximum; an enum it enforces (the bounds stay for readers)
        node["enum"] = values
    for child in (node.get("properties") or {}).values():
        _bound(child, chars)
    if node.get("type") == "array" and isinstance(node.get("prefixItems"), list):
        for child in node["prefixItems"]:
            _bound(child, chars)
    elif node.get("type") == "array":
        node.setdefault("maxItems", max(ARRAY_CAP, int(node.get("minItems", 0))))
        _bound(node.get("items"), chars)
    elif _is_free_text(node):
        node["maxLength"] = min(int(node.get("maxLength", chars)), chars)


def string_chars(schema: dict[str, Any], max_tokens: int) -> int:
    """The ``maxLength`` each free-text string of ``schema`` gets so an answer fits in ``max_tokens``."""
    fixed, strings = _cost(schema, 0)
    if strings == 0:
        return MAX_STRING_CHARS
    room = max_tokens - fixed - 4  # a few tokens of slack for whitespace between fields
    chars = math.floor(room * CHARS_PER_TOKEN / strings)
    return int(min(max(chars, MIN_STRING_CHARS), MAX_STRING_CHARS))


def fit_schema(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """A copy of ``schema`` whose free-text strings are bounded so that an answer fits ``max_tokens``.

    Types, enums, required keys and the order of properties are unchanged; bounds already in the schema are
    kept when tighter; an array of exactly n entries keyed by an enum of n names becomes one entry per name
    (:func:`_one_entry_per_name`); a number with ``minimum`` and ``maximum`` also lists its values as an ``enum``
    (:func:`bounded_values`). The input is not modified."""
    shaped = _one_entry_per_name(schema)
    bounded = copy.deepcopy(shaped)
    _bound(bounded, string_chars(shaped, max_tokens))
    return bounded


def tokens_for(schema: dict[str, Any] | None, chars_per_string: int = 60, *, cap: int | None = None) -> int | None:
    """A token budget in which an answer of ``schema`` gives each free-text string ``chars_per_string`` characters,
    rounded up to a multiple of 32 (and at most ``cap``); None for a rubric without a schema."""
    if schema is None:
        return None
    fixed, strings = _cost(_one_entry_per_name(schema), 0)
    tokens = 32 * math.ceil((fixed + 4 + strings * chars_per_string / CHARS_PER_TOKEN) / 32)
    return tokens if cap is None else min(tokens, cap)
