"""Reasoning-model replies through the real engine: the thinking stays in ``raw_output``, never in the score.

A local OpenAI-compatible stub server (tests/support/openai_stub.py) stands in for a reasoning model,
because no provider is reachable here; the path through litellm, HTTP and the rubric's parser is real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import judgelab
from judgelab import judgments
from judgelab.rubrics import load_rubric, parsing
from tests.rubrics.test_parse_hard_cases import DIRECT
from tests.support.openai_stub import StubResponse, StubServer

THOUGHT = "<think>The summary drops a date; a 2? No, the date is minor.</think>\n"
CLOSE_ONLY = "The chat template opened the block; a 2? No, the date is minor.</think>\n"


def _reply(body: dict) -> StubResponse:  # type: ignore[type-arg]
    prompt = body["messages"][-1]["content"]
    if "cut-off" in prompt or len(body["messages"]) > 1:  # the item, and the engine's one re-ask
        return StubResponse(content="<think>Weighing clarity against length, then", finish_reason="length")
    if "template" in prompt:
        return StubResponse(content=CLOSE_ONLY + "Clear and complete. Score: 5")
    return StubResponse(content=THOUGHT + "Clear and complete. Score: 4")


def _run(tmp_path: Path, items: list[dict]):  # type: ignore[no-untyped-def,type-arg]
    (tmp_path / "t.j2").write_text("Rate this answer from 1 to 5: {{ item.response }}")
    (tmp_path / "r.yaml").write_text(DIRECT)
    rubric = load_rubric(tmp_path / "r.yaml")
    with StubServer(_reply) as server:
        table = judgelab.run(items, rubric, "openai/stub-reasoner", api_base=server.base_url, api_key="sk-test-key",
                             cache=tmp_path / "cache.sqlite", progress=False)
    return table.set_index(["item_id", "criterion"])


@pytest.mark.slow  # ~12 s alone, most of it litellm's first call in the process
def test_thinking_is_never_scored_and_a_cut_off_reasoning_has_its_own_reason(tmp_path: Path) -> None:
    rows = _run(tmp_path, [{"item_id": "ok", "prompt": "q", "response": "fine"},
                           {"item_id": "template", "prompt": "q", "response": "template"},
                           {"item_id": "cut", "prompt": "q", "response": "cut-off"}])
    assert rows.loc[("ok", "clarity"), "score"] == 4  # not the 2 considered while thinking
    opened = rows.loc[("template", "clarity")]
    assert opened["status"] == judgments.OK and opened["score"] == 5
    assert parsing.split_thinking(opened["raw_output"]).thinking.startswith("The chat template opened")
    cut = rows.loc[("cut", "clarity")]
    assert cut["status"] == judgments.PARSE_ERROR and cut["unscored_reason"].startswith(parsing.THINKING_ONLY)
    assert "(output truncated at max_tokens)" in cut["unscored_reason"]
    assert cut["raw_output"].startswith("<think>Weighing")  # the full reply, reasoning included


def test_a_closed_reasoning_block_is_stored_in_the_reasoning_column_and_never_scored(tmp_path: Path) -> None:
    # litellm moves a leading <think>...</think> block of an OpenAI-compatible reply into
    # message.reasoning_content; the engine stores it in the reasoning column, apart from the answer
    rows = _run(tmp_path, [{"item_id": "ok", "prompt": "q", "response": "fine"}])
    ok = rows.loc[("ok", "clarity")]
    assert ok["status"] == judgments.OK and ok["score"] == 4
    assert ok["reasoning"].startswith("The summary drops a date; a 2?")
    assert "<think>" not in ok["raw_output"] and ok["raw_output"].strip() == "Clear and complete. Score: 4"
