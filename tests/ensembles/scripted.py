"""Scripted judges with known behaviour, served by one local OpenAI-compatible stub server.

The reply depends on the requested model name, so several "models" share one server:
``openai/right*`` picks the answer containing "GOOD", ``openai/wrong`` always picks the other,
``openai/first`` always picks the answer shown first (pure position bias), ``openai/half`` is
right on items 0-5 and position-biased on the others,
``openai/score-<n>`` always scores n (ToyDirect).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.probes.scripted import alternating_pairs
from tests.support.openai_stub import StubServer


def _shown(body: dict[str, Any]) -> tuple[str, str]:
    text = body["messages"][-1]["content"]
    m = re.search(r"First: (.*)\nSecond: (.*)\nWhich", text, re.S)
    assert m, text
    return m.group(1), m.group(2)


def scripted_reply(body: dict[str, Any]) -> str:
    model = body["model"]
    if model.startswith("score-"):
        return json.dumps({"score": int(model.split("-", 1)[1])})
    first, second = _shown(body)
    good_first = "GOOD" in first
    if model.startswith("right"):  # right1, right2, right3: identical, separately named judges
        return "A" if good_first else "B"
    if model == "wrong":
        return "B" if good_first else "A"
    if model == "first":
        return "A"
    if model.startswith("half"):  # right on items 0-5, position-biased (always "A") on the rest
        number = int(re.search(r"answer (\d+)", first).group(1))
        return ("A" if good_first else "B") if number < 6 else "A"
    raise AssertionError(f"unscripted model {model}")


def pair_items(n: int) -> list[dict[str, Any]]:
    """Items whose better answer (marked GOOD) alternates between A and B; gold = that side."""
    return alternating_pairs(n, "GOOD answer {k}", "poor answer {k}")


def server() -> StubServer:
    return StubServer(scripted_reply)
