"""The explorers driven headless: set widget values as a user would, read the rendered HTML back."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pandas as pd
import pytest

from judgelab.judgments import make_table
from judgelab.viz.widgets import (
    DisagreementBrowser,
    RubricExplorer,
    _as_text,
    budget_for,
    find_disagreements,
    gold_fields,
    natural_key,
)


def _pairwise_table() -> pd.DataFrame:
    base = {"run_id": "r", "rubric": "pairwise", "criterion": "overall", "repeat": 0}
    rows = [
        {**base, "item_id": "i1", "judge": "gold", "condition": "original", "status": "ok", "winner": "A"},
        {**base, "item_id": "i2", "judge": "gold", "condition": "original", "status": "ok", "winner": "B"},
        {**base, "item_id": "i3", "judge": "gold", "condition": "original", "status": "ok", "winner": "A"},
        {**base, "item_id": "i1", "judge": "m", "condition": "original", "status": "ok", "winner": "A",
         "raw_output": "Output (a)"},
        {**base, "item_id": "i1", "judge": "m", "condition": "swapped", "status": "ok", "winner": "B",
         "raw_output": "Output (a) <shown second>"},
        {**base, "item_id": "i2", "judge": "m", "condition": "original", "status": "ok", "winner": "A"},
        {**base, "item_id": "i2", "judge": "m", "condition": "swapped", "status": "ok", "winner": "A"},
        {**base, "item_id": "i3", "judge": "m", "condition": "original", "status": "parse_error",
         "unscored_reason": "no verdict found", "raw_output": "I cannot decide <b>"},
    ]
    return make_table(rows)


ITEMS = pd.DataFrame({"item_id": ["i1", "i2", "i3"], "input": ["q1", "q2", "q3"],
                      "output_1": ["first answer", "x", "y"], "output_2": ["second answer", "z", "w"]})


def test_find_disagreements_flips_gold_and_unscored() -> None:
    table = _pairwise_table()
    flips = find_disagreements(table, "position flips", "m")
    assert flips[["item_id", "original", "swapped"]].values.tolist() == [["i1", "A", "B"]]
    wrong = find_disagreements(table, "judge vs gold", "m", gold="gold")
    assert wrong["item_id"].tolist() == ["i2"]
    unscored = find_disagreements(table, "unscored", "m")
    assert unscored[["item_id", "unscored_reason"]].values.tolist() == [["i3", "no verdict found"]]
    with pytest.raises(ValueError, match="unknown filter"):
        find_disagreements(table, "everything", "m")
    with pytest.raises(ValueError, match="judge 'x' has no rows"):
        find_disagreements(table, "unscored", "x")


def test_find_disagreements_on_scores_uses_the_threshold() -> None:
    base = {"run_id": "r", "rubric": "s", "condition": "original", "repeat": 0, "status": "ok"}
    table = make_table([
        {**base, "item_id": "a", "criterion": "fluency", "judge": "human", "score": 4.0},
        {**base, "item_id": "a", "criterion": "fluency", "judge": "j", "score": 1.0},
        {**base, "item_id": "b", "criterion": "fluency", "judge": "human", "score": 3.0},
        {**base, "item_id": "b", "criterion": "fluency", "judge": "j", "score": 4.0},
    ])
    assert find_disagreements(table, "judge vs gold", "j", threshold=1.0)["item_id"].tolist() == ["a", "b"]
    hit = find_disagreements(table, "judge vs gold", "j", threshold=2.0)
    assert hit[["item_id", "difference"]].values.tolist() == [["a", -3.0]]


def test_disagreement_browser_follows_its_controls() -> None:
    browser = DisagreementBrowser(_pairwise_table(), ITEMS)
    assert browser.judge.options == ("m",) and browser.gold.value == "gold"
    assert browser.matches.options == ("i2",) and "<b>1</b> item(s)" in browser.count.value
    browser.kind.value = "position flips"
    assert browser.matches.value == "i1"
    view = browser.view.value
    assert "first answer" in view and "second answer" in view  # candidates side by side
    assert "Output (a) &lt;shown second&gt;" in view  # raw outputs, escaped
    assert view.count("Swapped order: the judge was shown the outputs the other way round") == 1  # the swapped one
    browser.kind.value = "unscored"
    assert browser.matches.value == "i3" and "no verdict found" in browser.view.value
    assert "I cannot decide &lt;b&gt;" in browser.view.value
    browser.gold.value = "nobody"
    browser.kind.value = "judge vs gold"
    assert browser.matches.options == () and "nobody" in browser.count.value


def test_disagreement_browser_on_released_llmbar_verdicts(data_dir: Path) -> None:
    from judgelab.datasets import llmbar

    run = llmbar("Natural", "ChatGPT", "Vanilla_NoRules", data_dir=data_dir)
    browser = DisagreementBrowser(run.table, run.items)
    browser.kind.value = "position flips"
    flips = find_disagreements(run.table, "position flips", "ChatGPT")
    assert len(browser.matches.options) == flips["item_id"].nunique() > 0
    assert "output_1" in browser.view.value and "output_2" in browser.view.value


def test_rubric_explorer_renders_the_prompt_of_the_chosen_item() -> None:
    explorer = RubricExplorer(rubrics=["direct_score", "pairwise"])
    assert explorer.rubric.value == "direct_score" and explorer.swap.disabled
    assert "What causes seasons on Earth?" in explorer.prompt.value
    explorer.rubric.value = "pairwise"
    assert not explorer.swap.disabled
    assert [label for label, _ in explorer.item.options][:2] == ["pw-1", "pw-2"]
    explorer.item.value = 1
    assert "boiling point of water" in explorer.prompt.value


def test_rubric_explorer_with_own_items_and_without_any() -> None:
    items = {"direct_score": [{"item_id": "mine", "prompt": "Say hi <now>", "response": "hi"}]}
    explorer = RubricExplorer(rubrics=["direct_score"], items=items)
    assert explorer.item.options == (("mine", 0),)
    assert "Say hi &lt;now&gt;" in explorer.prompt.value
    empty = RubricExplorer(rubrics=["direct_score"], items={"direct_score": []})
    assert "no items" in empty.prompt.value
    with pytest.raises(ValueError, match="has no items"):
        empty.current_item()


@pytest.mark.local_model
def test_rubric_explorer_runs_the_embedded_judge(tmp_path: Path) -> None:
    """The default item on its default budget is answered in the rubric's format (scored rows), and choosing
    another rubric clears the run's status line and views."""
    explorer = RubricExplorer(rubrics=["direct_score", "reference_gold"], rubric="reference_gold",
                              cache=str(tmp_path / "cache.sqlite"))
    assert explorer.max_tokens.value == budget_for("reference_gold")
    explorer.run_button.click()
    table = explorer.table
    assert table is not None and len(table) >= 1 and set(table["item_id"]) == {explorer.current_item()["item_id"]}
    assert (table["status"] == "ok").all(), table[["status", "unscored_reason"]]
    assert "NOT a meaningful verdict" in explorer.status.value
    assert "status" in explorer.parsed.value and "verdict" in explorer.verdict.value
    assert explorer.raw.value.count("<pre") >= 1
    explorer.rubric.value = "direct_score"
    assert explorer.table is None and explorer.status.value == explorer.parsed.value == explorer.raw.value == ""
    assert explorer.max_tokens.value == budget_for("direct_score")


def test_rubric_explorer_forgets_the_last_run_when_the_rubric_or_item_changes() -> None:
    explorer = RubricExplorer(rubrics=["direct_score", "pairwise"], max_tokens=77)
    for change in (lambda: setattr(explorer.rubric, "value", "pairwise"), lambda: setattr(explorer.item, "value", 1)):
        explorer.status.value, explorer.verdict.value = "3 row(s), 3 scored", "<b>verdict</b>"
        change()
        assert explorer.status.value == "" and explorer.verdict.value == "" and explorer.table is None
    assert explorer.max_tokens.value == 77  # a budget the caller chose stays


def test_budget_for_leaves_room_for_the_whole_answer() -> None:
    from judgelab.backends.schema_budget import MIN_STRING_CHARS, string_chars
    from judgelab.rubrics import list_rubrics, load_rubric

    for name in list_rubrics():
        rubric = load_rubric(name)
        budget = budget_for(name)
        assert budget <= (rubric.spec.max_tokens or 1024)
        if rubric.response_schema() is not None:
            assert string_chars(rubric.response_schema(), budget) > MIN_STRING_CHARS, name


def test_disagreement_browser_offers_position_flips_only_with_both_orders() -> None:
    both = _pairwise_table()
    assert "position flips" in DisagreementBrowser(both, ITEMS).kind.options
    one = both[both["condition"] == "original"]
    browser = DisagreementBrowser(one, ITEMS)
    assert "position flips" not in browser.kind.options and browser.kind.value == "judge vs gold"
    browser.kind.value = "unscored"
    assert browser.matches.layout.display == ""
    browser.gold.value, browser.kind.value = "nobody", "judge vs gold"
    assert browser.matches.options == () and browser.matches.layout.display == "none"


# ---------------------------------------------------------------- gold fields, natural order, the |Δ| control
def test_disagreement_browser_shows_every_gold_field_of_released_openqa_items(data_dir: Path) -> None:
    from judgelab.datasets import openqa

    data = openqa("gpt-4", data_dir=data_dir)
    browser = DisagreementBrowser(data.table, data.items)
    assert browser.gold.value == "human" and browser.matches.options
    item = data.items.set_index("item_id").loc[browser.matches.value]
    view = browser.view.value
    for answer in item["gold_answers"]:  # reference-gold items: every accepted answer, one per line
        assert f"• {html.escape(answer)}" in view
    assert "<b>gold_answers</b> <i>(gold / reference)</i>" in view and "<b>human_verdict</b>" in view
    # OpenQA's verdicts are yes/no: a |Δ| threshold means nothing there, so it is hidden
    assert browser.threshold.layout.display == "none" and not browser.threshold_applies()


def test_a_gold_field_holding_a_json_list_of_texts_is_shown_one_per_line(data_dir: Path) -> None:
    from judgelab.datasets import summeval

    data = summeval("gpt-3.5-turbo-0301", data_dir=data_dir)  # references: a JSON list kept in a flat cell
    browser = DisagreementBrowser(data.table, data.items)
    item = data.items.set_index("item_id").loc[browser.matches.value]
    references = json.loads(item["references"])
    assert len(references) > 1
    view = browser.view.value
    assert all(f"• {html.escape(r)}" in view for r in references) and html.escape('["') not in view
    assert browser.threshold_applies() and browser.threshold.layout.display == ""  # 1-5 scores: |Δ| shown
    # text that only looks like a list stays as it is
    for text in ("[not json", "[1, 2]", "[]", '["a", 1]'):
        assert _as_text(text) == text


def test_gold_fields_known_names_first_then_look_alikes() -> None:
    assert gold_fields(["input", "label", "gold_answer", "reference_summary", "expected_score", "output"]) == [
        "gold_answer", "label", "reference_summary", "expected_score"]
    assert gold_fields(["prompt", "response"]) == []


def test_disagreement_browser_sorts_items_naturally_and_shows_delta_only_for_numeric_scores() -> None:
    base = {"run_id": "r", "rubric": "s", "condition": "original", "repeat": 0, "status": "ok", "criterion": "fluency"}
    ids = ["doc#10", "doc#2", "doc#1", "doc#21"]
    table = make_table([{**base, "item_id": i, "judge": "human", "score": 5.0} for i in ids]
                       + [{**base, "item_id": i, "judge": "j", "score": 1.0} for i in ids])
    items = pd.DataFrame({"item_id": ids, "summary": ["s"] * 4, "reference": ["the reference text"] * 4})
    browser = DisagreementBrowser(table, items)
    assert browser.matches.options == ("doc#1", "doc#2", "doc#10", "doc#21")  # not doc#1, doc#10, doc#2 ...
    assert browser.threshold.layout.display == "" and browser.threshold_applies()
    assert "<b>reference</b> <i>(gold / reference)</i>" in browser.view.value
    browser.kind.value = "unscored"
    assert browser.threshold.layout.display == "none"
    browser.kind.value = "judge vs gold"
    browser.threshold.value = 4.0
    assert browser.matches.options == ("doc#1", "doc#2", "doc#10", "doc#21")  # |1 - 5| = 4 >= 4
    assert sorted(["x10", "x9", "x1"], key=natural_key) == ["x1", "x9", "x10"]


def test_disagreement_browser_hides_delta_for_pairwise_winners() -> None:
    browser = DisagreementBrowser(_pairwise_table(), ITEMS)
    assert browser.kind.value == "judge vs gold" and browser.threshold.layout.display == "none"


def test_rubric_explorer_opens_on_the_shortest_prompt_and_shows_all_of_it() -> None:
    from judgelab.rubrics import example_items, list_rubrics, load_rubric

    def length(name: str) -> int:
        requests = load_rubric(name).requests(example_items(name)[0])
        return sum(len(m["content"]) for r in requests for m in r.messages)

    explorer = RubricExplorer()
    assert explorer.rubric.value == min(list_rubrics(), key=length) != "chess_commentary"
    long_prompt = "word " * 3000  # 15,000 characters: no cut, in a scrollable box
    explorer = RubricExplorer(rubrics=["direct_score"], items={"direct_score": [{"prompt": long_prompt,
                                                                                  "response": "r"}]})
    assert long_prompt.strip() in explorer.prompt.value and "more characters" not in explorer.prompt.value
    assert "overflow:auto" in explorer.prompt.value and "max-height" in explorer.prompt.value
    assert RubricExplorer(rubrics=["direct_score", "pairwise"], rubric="pairwise").rubric.value == "pairwise"
    with pytest.raises(ValueError, match="not among"):
        RubricExplorer(rubrics=["direct_score"], rubric="pairwise")
