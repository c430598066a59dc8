"""Scripted judges with known biases, served over real HTTP by tests/support/openai_stub.py.

Items carry their true quality in the text ("quality 3") and a number ("#7"); a scripted judge
reads them from the prompt and answers with a rule, so each test knows exactly which bias is there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from tests.support.openai_stub import StubServer

MODEL = "openai/stub-judge"  # family "gpt" by judgelab.probes.self_preference.model_family
QUALITY = re.compile(r"quality (\d)")
NUMBER = re.compile(r"#(\d+)")


def direct_items(n: int = 16, *, generator: bool = False) -> list[dict[str, Any]]:
    """ToyDirect items: short answers with quality 2-4 (room to move both ways on a 1-5 scale)."""
    items = []
    for k in range(n):
        quality = 2 + k % 3
        item: dict[str, Any] = {"item_id": f"d{k}", "answer": f"Answer #{k} of quality {quality}: the sky is blue.",
                                "human_quality": quality}
        if generator:
            own = k % 2 == 0
            item["generator"] = "gpt-4o" if own else "claude-3-haiku"
            if own:
                item["answer"] += " Hope this helps!"  # the style marker a self-preferring judge reacts to
        items.append(item)
    return items


def pairwise_items(n: int = 16) -> list[dict[str, Any]]:
    """ToyPairwise items with distinct qualities; the better answer is A on half the items."""
    return alternating_pairs(n, "#{k} quality 4: a careful answer.", "#{k} quality 2: a rushed answer.")


def alternating_pairs(n: int, good: str, bad: str) -> list[dict[str, Any]]:
    """ToyPairwise items p0..p<n-1> whose better answer (``good``, formatted with the item number ``k``)
    is A on even items and B on odd ones; ``gold`` names that side."""
    items = []
    for k in range(n):
        a, b = (good, bad) if k % 2 == 0 else (bad, good)
        items.append({"item_id": f"p{k}", "answer_a": a.format(k=k), "answer_b": b.format(k=k),
                      "gold": "A" if k % 2 == 0 else "B"})
    return items


def user_text(body: dict[str, Any], index: int = 0) -> str:
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return users[index]


def toy_answer(text: str) -> str:
    """The candidate answer inside a ToyDirect prompt."""
    return text.split("Answer: ", 1)[1].rsplit("\nReply as JSON", 1)[0]


def quality(text: str) -> int:
    return int(QUALITY.search(text).group(1))


def number(text: str) -> int:
    return int(NUMBER.search(text).group(1))


def score_reply(score: int) -> str:
    return json.dumps({"score": max(1, min(5, int(score)))})


def shown_pair(text: str) -> tuple[str, str]:
    first = text.split("First: ", 1)[1].split("\nSecond: ", 1)[0]
    second = text.split("\nSecond: ", 1)[1].split("\nWhich is better?", 1)[0]
    return first, second


def noise(body: dict[str, Any]) -> int:
    """-1, 0 or +1 from the request's content and seed: a sampling judge's spread, deterministic per request."""
    blob = json.dumps([body["messages"], body.get("seed")], sort_keys=True).encode()
    return hashlib.sha256(blob).digest()[0] % 3 - 1


@contextmanager
def serve(reply: Callable[[dict[str, Any]], Any]):
    with StubServer(reply) as server:
        yield server


def run_kw(server: StubServer, tmp_path) -> dict[str, Any]:
    """Runner options for a scripted judge: its URL, a throwaway cache, no progress bar."""
    return {"api_base": server.base_url, "api_key": "sk-test-key", "cache": tmp_path / "cache.sqlite",
            "progress": False, "concurrency": 8}


def significant(row: Any, alpha: float = 0.05) -> bool:
    """A detected effect: the row's test rejects its null at ``alpha``."""
    return bool(row["p_value"] < alpha)

