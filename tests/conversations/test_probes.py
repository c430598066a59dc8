"""The conversation probes over HTTP with a scripted judge (the stub server stands in for a provider): each judge
below has one planted behaviour, and the probe must find exactly it, on the turn it affects and not the other."""

from __future__ import annotations

import pytest

from judgelab import judgments, probes
from judgelab.errors import ConfigError
from judgelab.probes.conversations import PUSHBACK, WITHHELD, with_pushback, withhold_history
from judgelab.rubrics import example_items, load_rubric
from tests.support.openai_stub import StubServer

FAST = {"cache": False, "progress": False}


def _row(result, metric: str, condition: str) -> dict:
    found = result.summary[(result.summary["metric"] == metric) & (result.summary["condition"] == condition)]
    assert len(found) == 1, result.summary[["metric", "condition"]]
    return found.iloc[0].to_dict()


def test_turn_history_finds_a_judge_that_reads_turn_one_only_on_turn_two() -> None:
    """The judge gives 9 when the turn-2 prompt shows the first turn and 4 when it is withheld: the probe reports
    the change of the last turn's grade only."""
    def judge(body: dict) -> str:
        user = body["messages"][-1]["content"]
        return "Rating: [[4]]" if WITHHELD in user else "Rating: [[9]]"

    items = example_items("mt_bench_single")
    with StubServer(judge) as srv:
        result = probes.turn_history(items, "mt_bench_single", "openai/stub", api_base=srv.base_url, **FAST)
    judgments.validate(result.table)
    assert _row(result, "score_change", "history_withheld, turn 2")["estimate"] == -5
    assert "history_withheld, turn 1" not in set(result.summary["condition"])  # turn 1's own text was withheld


def test_pushback_finds_a_judge_that_sides_with_the_user() -> None:
    def judge(body: dict) -> str:
        return "Rating: [[3]]" if PUSHBACK in body["messages"][-1]["content"] else "Rating: [[8]]"

    with StubServer(judge) as srv:
        result = probes.pushback(example_items("mt_bench_single"), "mt_bench_single", "openai/stub",
                                 api_base=srv.base_url, **FAST)
    assert _row(result, "score_change", "pushback, turn 2")["estimate"] == -5
    assert _row(result, "score_change", "pushback, turn 1")["estimate"] == 0


def test_conversation_order_finds_a_judge_that_always_picks_the_first_conversation() -> None:
    with StubServer(lambda body: "The first one. [[A]]") as srv:
        result = probes.conversation_order(example_items("mt_bench_pair"), load_rubric("mt_bench_pair"),
                                           "openai/stub", api_base=srv.base_url, **FAST)
    for turn in (1, 2):
        assert _row(result, "consistency_rate", f"all, turn {turn}")["estimate"] == 0.0
        assert _row(result, "first_position_rate", f"all, turn {turn}")["estimate"] == 1.0


def test_the_perturbations_change_only_what_they_say() -> None:
    """Withholding keeps every message's role and place and the last turn whole; pushback only prefixes the last
    user message; a conversation without what the perturbation needs is one sentence."""
    chat = example_items("trajectory")[0]["trajectory"] + [{"role": "user", "content": "Thanks, and tomorrow?"},
                                                            {"role": "assistant", "content": "Rain."}]
    withheld = withhold_history(chat)
    assert [m["role"] for m in withheld] == [m["role"] for m in chat]
    assert withheld[-2:] == chat[-2:] and withheld[0] == chat[0]  # the system prompt is not history
    assert all(m["content"] == WITHHELD and "tool_calls" not in m for m in withheld[1:-2])
    pushed = with_pushback(chat)
    assert pushed[-2]["content"] == f"{PUSHBACK} Thanks, and tomorrow?" and pushed[:-2] == chat[:-2]
    with pytest.raises(ConfigError, match="follows an assistant answer"):
        with_pushback([{"role": "user", "content": "hi"}])


def test_a_text_probe_refuses_a_conversation_field() -> None:
    """Text perturbations (length padding, authority phrases ...) would print a message list as Python text:
    refused in one sentence pointing at the conversation probes, before any call."""
    with pytest.raises(ConfigError, match="holds conversations"):
        probes.length(example_items("trajectory"), "trajectory", "openai/unreachable", cache=False, progress=False)
