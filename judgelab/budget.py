"""Cost estimates before spending, and the guard that stops issuing calls past a budget."""

from __future__ import annotations

import math
import threading

from judgelab.backends.call import litellm

DEFAULT_OUTPUT_TOKENS = 512


class UnknownPriceError(ValueError):
    """A budget was set for a model whose price litellm does not know."""


def estimate_call_cost(model: str, messages: list[dict[str, str]], max_output_tokens: int | None) -> tuple[int, float]:
    """(prompt tokens, upper-bound cost in USD assuming max_output_tokens); cost NaN when the price is unknown."""
    try:
        prompt_tokens = int(litellm.token_counter(model=model, messages=messages))
    except Exception:  # tokenizer unknown for this model: fall back to a 4-characters-per-token rule
        prompt_tokens = sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages)
    out = max_output_tokens or DEFAULT_OUTPUT_TOKENS
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=out
        )
        return prompt_tokens, float(prompt_cost) + float(completion_cost)
    except Exception:  # litellm raises for models it cannot price
        return prompt_tokens, math.nan


class BudgetGuard:
    """Reserve an estimate before each call; settle with the actual cost afterwards.

    A call is refused when spent + reserved + its estimate would exceed the budget, so no call is
    ever issued past ``max_cost_usd`` as long as the estimates are upper bounds (they assume the
    full max_tokens output).
    """

    def __init__(self, max_cost_usd: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent = 0.0
        self.reserved = 0.0
        self.exhausted = False
        self._lock = threading.Lock()

    def try_reserve(self, estimate: float) -> bool:
        if self.max_cost_usd is None:
            return True
        if math.isnan(estimate):
            raise UnknownPriceError("the price of this model is unknown")
        with self._lock:
            if self.exhausted or self.spent + self.reserved + estimate > self.max_cost_usd:
                self.exhausted = True
                return False
            self.reserved += estimate
            return True

    def settle(self, estimate: float, actual: float) -> None:
        if self.max_cost_usd is None:
            return
        with self._lock:
            self.reserved -= estimate
            self.spent += estimate if math.isnan(actual) else actual
