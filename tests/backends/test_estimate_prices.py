"""The dry run's price memo (issue 28): pricing each distinct token count once gives litellm's own numbers.

Seeded generated prompts (lengths drawn so that token counts repeat and differ); the invariant is stated in
each test's docstring.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import judgelab
from judgelab.backends.pricing import estimate_call_cost


@pytest.mark.parametrize("model", ["gpt-4o-mini", "claude-3-5-haiku-20241022", "no-such-model-xyz"])
def test_price_memo_returns_litellms_numbers(model: str) -> None:
    """Invariant: with a shared ``prices`` dict every call returns exactly what the call without it returns
    (tokens and cost; NaN for a model litellm cannot price), and the dict holds one entry per distinct
    (model, prompt tokens, output tokens)."""
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta"]
    prices: dict = {}
    keys = set()
    for _ in range(60):
        text = " ".join(rng.choice(words, size=int(rng.integers(1, 12))))
        messages = [{"role": "system", "content": "You are a judge."}, {"role": "user", "content": text}]
        out = None if rng.random() < 0.5 else int(rng.integers(1, 3)) * 100
        plain = estimate_call_cost(model, messages, out)
        memo = estimate_call_cost(model, messages, out, prices=prices)
        assert memo[0] == plain[0]
        assert memo[1] == plain[1] or (math.isnan(memo[1]) and math.isnan(plain[1]))
        keys.add((model, plain[0], out or 512))
    assert set(prices) == keys and len(prices) < 60


def test_estimate_total_equals_the_sum_of_per_request_prices() -> None:
    """Invariant: judgelab.estimate's prompt tokens and cost equal the sum over its requests priced one by one
    without the memo (direct_score over 40 generated items, no cache)."""
    rng = np.random.default_rng(1)
    items = pd.DataFrame({"item_id": [f"q{i}" for i in range(40)],
                          "prompt": [f"Summarise document {i}" for i in range(40)],
                          "response": [" ".join(["word"] * int(rng.integers(5, 30))) for _ in range(40)]})
    est = judgelab.estimate(items, "direct_score", "gpt-4o-mini", cache=False)
    from judgelab.engine.config import RunConfig
    from judgelab.engine.runner import _prepare

    config = RunConfig()
    engine, _, jobs, _ = _prepare(items, "direct_score", "gpt-4o-mini", config, False)
    pairs = [estimate_call_cost(engine.model, j.request.messages,
                                config.request_params(engine.rubric, j.request, j.repeat).get("max_tokens"))
             for j in jobs]
    assert est.estimated_prompt_tokens == sum(t for t, _ in pairs)
    assert est.estimated_max_cost_usd == sum(c for _, c in pairs)  # the same additions in the same order
