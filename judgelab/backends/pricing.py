"""Prices: what a reply cost, what a request may cost before it is sent, and free local models.

Every price comes from litellm's cost map, the offline copy shipped with litellm: judgelab imports
litellm through :func:`offline_litellm`, the one place that sets ``LITELLM_LOCAL_MODEL_COST_MAP``, and
only for the duration of that import. A model litellm cannot price has an unknown cost, NaN, never 0.
"""

from __future__ import annotations

import logging
import math
import os
import re
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["DEFAULT_OUTPUT_TOKENS", "MAX_TOKEN_COUNT", "PRICE_MAP_ENV", "UnknownPriceError", "batch_price", "CallCostEstimator", "SegmentCounter", "cost_from_tokens",
           "estimate_call_cost", "known_zero_price", "offline_litellm", "register_free_models", "response_cost"]

DEFAULT_OUTPUT_TOKENS = 512
MAX_TOKEN_COUNT = 10**12  # no provider bills more tokens for one call; larger counts are not counts
PRICE_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"
_IMPORT_LOCK = threading.Lock()


def offline_litellm() -> ModuleType:
    """litellm, imported with its offline price map; every judgelab module gets litellm from here.

    litellm reads ``LITELLM_LOCAL_MODEL_COST_MAP`` only while it is being imported; without it the import
    fetches the price map from the network. The variable is set for that import only and then restored
    (removed again when the user had not set it); a value the user set is left alone. When litellm was
    imported before judgelab, it is used as it is.
    """
    with _IMPORT_LOCK:
        if "litellm" in sys.modules:
            return sys.modules["litellm"]
        previous = os.environ.get(PRICE_MAP_ENV)
        if previous is None:
            os.environ[PRICE_MAP_ENV] = "True"
        try:
            import litellm
        finally:
            if previous is None:
                os.environ.pop(PRICE_MAP_ENV, None)
        return litellm


litellm = offline_litellm()


class UnknownPriceError(JudgelabError, ValueError):
    """A budget was set for a model whose price litellm does not know."""


def estimate_call_cost(model: str, messages: list[dict[str, str]], max_output_tokens: int | None, *,
                       prices: dict[tuple[str, int, int], float] | None = None) -> tuple[int, float]:
    """(prompt tokens, upper-bound cost in USD assuming max_output_tokens); cost NaN when the price is unknown.

    ``prices``: a dict the caller keeps for one estimate, remembering the cost of each (model, prompt tokens,
    output tokens) litellm priced: a dry run over many items prices each distinct token count once (litellm's
    pricing took a third of a dry run's time) with the very numbers litellm gives.
    """
    try:
        prompt_tokens = int(litellm.token_counter(model=model, messages=messages))
    except Exception:  # tokenizer unknown for this model: fall back to a 4-characters-per-token rule
        prompt_tokens = sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages)
    return prompt_tokens, _max_cost(model, prompt_tokens, max_output_tokens, prices)


def _max_cost(model: str, prompt_tokens: int, max_output_tokens: int | None,
              prices: dict[tuple[str, int, int], float] | None) -> float:
    out = max_output_tokens or DEFAULT_OUTPUT_TOKENS
    key = (model, prompt_tokens, out)
    if prices is not None and key in prices:
        return prices[key]
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=out
        )
        cost = float(prompt_cost) + float(completion_cost)
    except Exception:  # litellm raises for models it cannot price
        cost = math.nan
    if prices is not None:
        prices[key] = cost
    return cost


_REPLY_PRIMING = 3  # litellm's token_counter adds these to every message list (no tools): the reply's start


class CallCostEstimator:
    """:func:`estimate_call_cost` for the many requests of one model in one dry run: the same (tokens, cost)
    for every request, with the fixed work done once.

    litellm's ``token_counter(model, messages=...)`` is, for messages holding only a text ``role`` and a text
    ``content`` and no tools, 3 (the reply's priming) plus, per message, a fixed per-message overhead plus the
    count of the role text plus the count of the content text, each text counted on its own by one count
    function of the model (litellm/litellm_core_utils/token_counter.py: ``_count_messages``, ``_count_extra``).
    So this counts each role's part once (through ``token_counter`` itself: a message with an empty content),
    takes litellm's count function of the model once instead of building it per request (that took a third of
    the count), counts a content equal to the previous request's at the same place (a system message) once,
    and prices each distinct token count once. Any other message shape, a count that fails, or a litellm
    without that count function goes through :func:`estimate_call_cost` unchanged;
    tests/engine/test_estimate_scale.py checks the equality request by request on generated messages.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.prices: dict[tuple[str, int, int], float] = {}
        self._count = _count_function(model)
        self._roles: dict[str, int] = {}
        self._previous: list[tuple[str, int]] = []  # (content, its count) per message place of the last request

    def __call__(self, messages: Sequence[dict[str, str]], max_output_tokens: int | None) -> tuple[int, float]:
        tokens = self._tokens(messages)
        if tokens is None:
            return estimate_call_cost(self.model, list(messages), max_output_tokens, prices=self.prices)
        return tokens, _max_cost(self.model, tokens, max_output_tokens, self.prices)

    def _tokens(self, messages: Sequence[dict[str, str]]) -> int | None:
        if self._count is None or litellm.disable_token_counter:
            return None
        total = _REPLY_PRIMING
        try:
            for place, message in enumerate(messages):
                if type(message) is not dict or len(message) != 2:
                    return None
                role, content = message.get("role"), message.get("content")
                if type(role) is not str or type(content) is not str:
                    return None
                if role not in self._roles:
                    self._roles[role] = int(litellm.token_counter(
                        model=self.model, messages=[{"role": role, "content": ""}])) - _REPLY_PRIMING
                if place < len(self._previous) and self._previous[place][0] == content:
                    counted = self._previous[place][1]
                else:
                    counted = int(self._count(content))
                    if place < len(self._previous):
                        self._previous[place] = (content, counted)
                    else:
                        self._previous.append((content, counted))
                total += self._roles[role] + counted
        except Exception:  # noqa: BLE001 - whatever failed, the slow path fails (or not) the way it always did
            return None
        return total


def _count_function(model: str) -> Any:
    """litellm's text count function of ``model`` (what token_counter counts each message text with), or None;
    for a model litellm counts with tiktoken's o200k or cl100k encoding, :class:`SegmentCounter` (the same numbers,
    most of each prompt's text counted once per estimate)."""
    try:
        from litellm.litellm_core_utils.token_counter import _get_count_function

        count = _get_count_function(model, None)
    except Exception:  # noqa: BLE001 - another litellm, or a model it has no tokenizer for: the slow path
        return None
    return SegmentCounter.for_model(model, count) or count


# The pre-tokenizer patterns of tiktoken's o200k_base and cl100k_base encodings (tiktoken 0.14) that the cut rule of
# SegmentCounter was checked against, alternative by alternative; another pattern is counted the slow way.
_O200K = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
          "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
          "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|"
          "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_CL100K = ("'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|"
           "\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s")
# a cut: a place right after a newline where a printable ASCII character other than "/" follows
_CUT = re.compile(r"\n(?=[!-.0-~])")  # matched at the newline, the cut is at the match's end (a lookbehind: 2x slower)
_SURROGATE = re.compile("[\ud800-\udfff]")


class SegmentCounter:
    """litellm's count of a text for a model it counts with tiktoken (o200k_base, cl100k_base), from cached parts.

    litellm counts a text of at most ``max_exact`` characters as the sum of tiktoken's exact counts of its
    ``window``-character slices (litellm/litellm_core_utils/token_counter.py: ``_get_tiktoken_count_function``,
    ``_encoding_count``). tiktoken cuts a text into pieces with one regular expression and encodes each piece on
    its own, so a text's count is the sum of its pieces' counts. At a *cut* -- a newline followed by a printable
    ASCII character other than ``/`` -- no piece of either pattern crosses (no alternative takes a newline and then
    such a character), the pieces before it are those of the text before it (the alternatives that reach the newline
    stop at that character, as at the end of a text; cl100k's ``\\s++$`` and ``\\s*[\\r\\n]`` give the same
    piece there), and the pieces after it are those of the text after it (the patterns look at nothing before the
    place they start). So a window's count is the sum of the counts of its parts between cuts, and a part that
    comes again (a rubric's criteria, instructions, output format, a system prompt: most of a judge prompt) is
    counted once per estimate. Parts not in the cache are joined (the joints are cuts too) and counted in one call.

    The cache keeps at most :data:`CACHE_ENTRIES` parts, each from the second time it is seen (the rubric's text:
    from the second request on). A text longer than ``max_exact`` (litellm extrapolates those) or holding a surrogate (tiktoken
    re-decodes those) is counted by litellm's own function. tests/engine/test_estimate_render_fast.py compares the
    counts with litellm's on generated texts.
    """

    CACHE_ENTRIES = 1 << 15

    def __init__(self, encode_count: Any, window: int, max_exact: int, fallback: Any) -> None:
        self._encode_count, self._window, self._max_exact, self._fallback = encode_count, window, max_exact, fallback
        self._parts: dict[str, int] = {}  # part -> its count
        self._seen: set[str] = set()  # parts seen once (emptied when full)

    @classmethod
    def for_model(cls, model: str, count: Any) -> SegmentCounter | None:
        """The counter for ``model`` when litellm counts it with a tiktoken encoding of a checked pattern (and this
        litellm counts by windows as described), else None."""
        try:
            import tiktoken
            from litellm.litellm_core_utils import token_counter as tc
            from litellm.utils import select_tokenizer

            if select_tokenizer(model)["type"] != "openai_tokenizer":
                return None
            encoding = tc.openai_tokenizer_encoding(model)
            window, max_exact = tc.TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS, tc.TOKEN_COUNTER_MAX_EXACT_CHARS
            if type(encoding) is not tiktoken.Encoding or encoding._pat_str not in (_O200K, _CL100K):
                return None
            if not (isinstance(window, int) and isinstance(max_exact, int) and 0 < window <= max_exact):
                return None
            counter = cls(lambda text: tc._encoding_count(encoding, text), window, max_exact, count)
            # the assumptions about this litellm, checked once on texts with cuts across windows
            probe = "".join(f"## Part {k}\nsome words, {k * 7} and\n  an indented line\n/path\n\n" for k in range(60))
            if any(counter(t) != count(t) for t in (probe, probe[5:], "", "x\ny")):
                return None
            counter._parts.clear()
            counter._seen.clear()
            return counter
        except Exception:  # noqa: BLE001 - another litellm or tiktoken: litellm's own function
            return None

    def __call__(self, text: str) -> int:
        if len(text) > self._max_exact or (not text.isascii() and _SURROGATE.search(text)):  # isascii: a flag
            return int(self._fallback(text))
        total = 0
        for start in range(0, len(text), self._window):
            total += self._count_window(text[start:start + self._window])
        return total

    def _count_window(self, window: str) -> int:
        parts, seen, get, total, missing = self._parts, self._seen, self._parts.get, 0, []
        starts = [m.end() for m in _CUT.finditer(window)]
        for begin, end in zip([0, *starts], [*starts, len(window)], strict=True):
            part = window[begin:end]
            counted = get(part)
            if counted is None:
                # a part is counted on its own and kept from its second time on: an item's own text, seen once,
                # is counted with the other new parts in one call (a call per part cost more than its tokens)
                if part in seen and len(parts) < self.CACHE_ENTRIES:
                    counted = parts[part] = int(self._encode_count(part))
                else:
                    if len(seen) >= self.CACHE_ENTRIES:
                        seen.clear()
                    seen.add(part)
                    missing.append(part)
                    continue
            total += counted
        if missing:
            total += int(self._encode_count("".join(missing)))
        return total


def register_free_models(names: Sequence[str], provider: str, **info: Any) -> None:
    """Price local models at exactly 0 in litellm, so cost functions report 0.0 instead of an unknown price.

    litellm warns on every registration that cache prices default to 0; for a free local model that is
    the intent, so the warning is silenced for this call only.
    """
    todo = [n for n in names if n not in litellm.model_cost]
    if not todo:
        return
    logger = logging.getLogger("LiteLLM")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        litellm.register_model({n: {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0,
                                    "litellm_provider": provider, "mode": "chat", **info} for n in todo})
    finally:
        logger.setLevel(previous)


def response_cost(response: Any) -> float:
    # litellm already priced the response while logging it; computing it again costs ~2 ms CPU per call.
    # A None there means litellm tried and could not price it (its calculator returns None on failure):
    # asking completion_cost again would fail the same way, so the price is unknown.
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden and hidden["response_cost"] is None:
        return math.nan
    value = hidden.get("response_cost")
    if value is None:
        try:
            value = litellm.completion_cost(completion_response=response)
        except Exception:  # litellm raises for models without a known price
            return math.nan
    if value is None:
        return math.nan
    value = float(value)
    # litellm reports 0.0 for models it cannot price when called through custom api bases; only trust a
    # zero when the model is registered with explicit zero prices (the embedded judge is).
    if value == 0.0 and not known_zero_price(response):
        return math.nan
    return value


def cost_from_tokens(model: str, usage: Any) -> float:
    """The price of a reply litellm could not read, from its raw ``usage`` block: NaN unless both token counts
    are true counts and litellm prices ``model`` (a zero price only for models registered as free)."""
    if not isinstance(usage, dict):
        return math.nan
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_TOKEN_COUNT for c in counts):
        return math.nan
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=counts[0],
                                                              completion_tokens=counts[1])
        value = float(prompt_cost) + float(completion_cost)
    except Exception:  # noqa: BLE001 - litellm raises for models it cannot price
        return math.nan
    if not math.isfinite(value) or value < 0 or (value == 0.0 and not _registered_free(model)):
        return math.nan
    return value


def _registered_free(model: str) -> bool:
    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    return bool(info) and info.get("input_cost_per_token") == 0 and info.get("output_cost_per_token") == 0


def known_zero_price(response: Any) -> bool:
    model = getattr(response, "model", None) or ""
    candidates = [model, f"local/{model}"] if not model.startswith("local/") else [model]
    for name in candidates:
        info = litellm.model_cost.get(name)
        if info is not None and info.get("input_cost_per_token") == 0 and info.get("output_cost_per_token") == 0:
            return True
    return False


def batch_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token at batch prices, if litellm knows them for ``model``."""
    info = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
    if not info:
        return None
    pin, pout = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    return (float(pin), float(pout)) if pin is not None and pout is not None else None
