"""Rubric variants: each kind of change, names and fingerprints, invalid changes, diffs, snapshots.

Snapshots of variant prompts live next to the default ones (tests/rubrics/snapshots/variant__*.txt);
regenerate after an intended change with JUDGELAB_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from judgelab.errors import ConfigError
from judgelab.rubrics import RubricSpecError, describe_rubric, diff_rubrics, list_rubrics, load_rubric
from judgelab.rubrics.variants import exact_level_map, order_schema
from tests.rubrics.rubric_helpers import EXAMPLES, examples

SNAPSHOTS = Path(__file__).parent / "snapshots"
POOL = str(EXAMPLES / "editorial_summary_fewshot.jsonl")
DIRECT_ITEM = examples("direct_score")[0]
EDITORIAL_ITEM = examples("editorial_summary")[0]
ANCHORED = [{"name": "quality", "definition": "How good the answer is.",
             "anchors": {1: "Wrong.", 3: "Partly right.", 5: "Fully right."}}]
ALL_LEVELS = {1: "one", 2: "two", 3: "three"}


def user_text(rubric, item=DIRECT_ITEM, index: int = 0) -> str:
    return rubric.requests(item)[index].messages[-1]["content"]


def one_sentence(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and text.strip(), text
    return text


# ----------------------------------------------------------------------------- names and versions
def test_a_variant_has_its_own_name_and_a_fingerprinted_version():
    base = load_rubric("direct_score")
    after = base.variant(justification="after")
    assert after.name == "direct_score-justification_after" and after.variant_of == "direct_score"
    assert re.fullmatch(r"1\.0\+[0-9a-f]{8}", after.version)
    assert after.fingerprint() != base.fingerprint()
    again = load_rubric("direct_score").variant(justification="after")
    assert (again.version, again.fingerprint()) == (after.version, after.fingerprint())  # deterministic
    named = base.variant("score_first", justification="after")
    assert named.name == "score_first" and named.version != after.version  # the name is part of the fingerprint
    assert base.name == "direct_score" and base.spec.justification is None  # the base is untouched


def test_a_variant_of_a_variant_accumulates_its_changes():
    base = load_rubric("direct_score", criteria=ANCHORED)
    first = base.variant("asc", anchor_order="ascending")
    second = first.variant("asc_after", justification="after")
    assert second.variant_of == "direct_score"
    assert second.spec.anchor_order == "ascending" and second.spec.justification == "after"
    assert second.params == base.params  # rebuilt from the same file and load parameters
    text = user_text(second)
    assert text.index("1: Wrong.") < text.index("5: Fully right.") and "Give the score first" in text


def test_default_layout_fields_stay_out_of_the_fingerprint():
    rubric = load_rubric("direct_score")
    blob = rubric.spec.model_dump(mode="json")
    assert blob["justification"] is None and blob["anchor_order"] is None
    # the same spec with an explicit layout is a different rubric
    assert rubric.variant("explicit", justification="before").fingerprint() != rubric.fingerprint()


# ----------------------------------------------------------------------------------------- scale
def test_scale_without_anchors_changes_bounds_prompt_schema_and_parser():
    three = load_rubric("direct_score").variant(scale=(1, 3))
    assert three.scale == (1, 3) and "(1-3 scale)" in user_text(three)
    score = three.response_schema()["properties"]["scores"]["items"]["properties"]["score"]
    assert (score["minimum"], score["maximum"]) == (1, 3)
    (request,) = three.requests(DIRECT_ITEM)
    entry = {"evidence": ["x"], "justification": "y", "score": 3, "improvement": "z"}
    reply = {"scores": [{"criterion": c, **entry} for c in ("factual_accuracy", "instruction_following")],
             "summary": "ok"}
    assert three.parse(json.dumps(reply), request)[-1].score == 3.0
    reply["scores"][0]["score"] = 4
    with pytest.raises(Exception, match="4"):
        three.parse(json.dumps(reply), request)


def test_anchors_are_remapped_where_they_land_exactly():
    assert exact_level_map((1, 5), (1, 3)) == {1: 1, 3: 2, 5: 3}
    assert exact_level_map((1, 3), (1, 5)) == {1: 1, 2: 3, 3: 5}
    assert exact_level_map((1, 5), (1, 10)) == {1: 1, 5: 10}
    three = load_rubric("direct_score", criteria=ANCHORED).variant(scale=3)
    assert three.spec.criterion("quality").anchors == {1: "Wrong.", 2: "Partly right.", 3: "Fully right."}
    ends = load_rubric("direct_score", criteria=[{**ANCHORED[0], "anchors": {1: "Wrong.", 5: "Right."}}])
    assert ends.variant(scale=10).spec.criterion("quality").anchors == {1: "Wrong.", 10: "Right."}


def test_anchors_that_do_not_land_are_required():
    rubric = load_rubric("direct_score", criteria=ANCHORED)
    with pytest.raises(RubricSpecError) as exc:
        rubric.variant(scale=10)
    text = one_sentence(exc)
    assert "criterion 'quality'" in text and "[3]" in text and "5.5" in text and "criteria=" in text
    given = rubric.variant(scale=10, criteria={"quality": {"anchors": {1: "Wrong.", 10: "Right."}}})
    assert given.spec.criterion("quality").anchors == {1: "Wrong.", 10: "Right."}


def test_editorial_scale_moves_level_names_and_schema_bounds():
    anchors = {c: {"anchors": ALL_LEVELS} for c in ("coherence", "consistency", "fluency", "relevance", "ordering")}
    with pytest.raises(RubricSpecError, match="criterion 'coherence' has anchors for levels \\[2, 4\\]"):
        load_rubric("editorial_summary").variant(scale=3)
    three = load_rubric("editorial_summary").variant(scale=3, criteria=anchors)
    text = user_text(three, EDITORIAL_ITEM)
    assert "Score 2 (Moderate Coherence):" in text and "Score 3 (Excellent Coherence):" in text
    assert "assigning a score from 1 to 3" in text and "Score 4" not in text
    assert three.spec.output.json_schema["properties"]["score"] == {"type": "integer", "minimum": 1, "maximum": 3}
    # 1-10 keeps only the end names; the others must be given
    ten = {c: {"anchors": {1: "bad", 5: "so-so", 10: "good"}} for c in anchors}
    with pytest.raises(RubricSpecError, match=r"options.levels names no level \[5\]"):
        load_rubric("editorial_summary").variant(scale=10, criteria=ten)
    named = load_rubric("editorial_summary").variant(scale=10, criteria=ten, options={"levels": {5: "Middling"}})
    assert "Score 5 (Middling Coherence):" in user_text(named, EDITORIAL_ITEM)


def test_scale_change_refused_with_few_shot_and_where_the_rule_is_fixed():
    fewshot = load_rubric("editorial_summary", few_shot=2, few_shot_pool=POOL)
    with pytest.raises(RubricSpecError, match="human scores on the 1-5 scale"):
        fewshot.variant(scale=3, criteria={"coherence": {"anchors": ALL_LEVELS}})
    for name in ("reference_gold", "chess_commentary", "pairwise", "unified_judge"):
        with pytest.raises(RubricSpecError, match="cannot change scale"):
            load_rubric(name).variant(scale=3)
    with pytest.raises(RubricSpecError, match="supported scales"):
        load_rubric("direct_score").variant(scale=7)


# --------------------------------------------------------------------------------- justification
def test_justification_after_reorders_instructions_shape_and_schema_in_direct_score():
    after = load_rubric("direct_score").variant(justification="after")
    text = user_text(after)
    assert "Give the score first" in text and "Write the justification before the score" not in text
    shape = text[text.index('{"scores"'):]
    assert shape.index('"score":') < shape.index('"justification":')
    fields = list(after.response_schema()["properties"]["scores"]["items"]["properties"])
    assert fields == ["criterion", "score", "evidence", "justification", "improvement"]
    before = load_rubric("direct_score").variant(justification="before")
    assert user_text(before) == user_text(load_rubric("direct_score"))  # the seed's own order


def test_justification_in_editorial_pairwise_and_reference_gold():
    before = load_rubric("editorial_summary").variant(justification="before")
    text = user_text(before, EDITORIAL_ITEM)
    assert "{'explanation': '<" in text and "present in the json: explanation score" in text
    assert list(before.response_schema()["properties"]) == ["explanation", "score"]
    assert before.response_schema()["required"] == ["explanation", "score"]
    pairwise = load_rubric("pairwise").variant(justification="after")
    assert list(pairwise.response_schema()["properties"]) == ["comparison", "winner", "confidence", "reasoning"]
    item = examples("pairwise")[0]
    assert '"winner": "A" | "B" | "TIE", "analysis"' in user_text(pairwise, item)
    for degraded in (False, True):
        ref = load_rubric("reference_gold", degraded=degraded).variant(justification="before")
        text = user_text(ref, examples("reference_gold")[0])
        assert text.index('"delta"') < text.index('"scores"') < text.index('"verdict"')
        assert list(ref.response_schema()["properties"])[:2] == ["delta", "decision_basis"]


def test_editorial_few_shot_examples_answer_in_the_asked_order():
    before = load_rubric("editorial_summary", few_shot=1, few_shot_pool=POOL).variant(justification="before")
    text = user_text(before, EDITORIAL_ITEM)
    example = text[text.index("Example 1:"):text.index("Now Evaluate:")]
    assert example.index('"explanation"') < example.index('"score"')


def test_order_schema_moves_reasoning_around_the_verdict_only():
    schema = {"type": "object", "properties": {"a": {}, "score": {}, "why": {}, "explanation": {}, "z": {}},
              "required": ["explanation", "score"]}
    assert list(order_schema(schema, "before")["properties"]) == ["a", "explanation", "score", "why", "z"]
    assert order_schema(schema, "before")["required"] == ["explanation", "score"]
    assert list(order_schema(schema, "after")["properties"]) == ["a", "score", "explanation", "why", "z"]
    assert list(schema["properties"]) == ["a", "score", "why", "explanation", "z"]  # a copy, never in place


# ------------------------------------------------------------------------- language, system, few-shot
def test_language_reaches_the_prompt_or_is_refused():
    assert "Write the evidence, the justifications, the improvements and the summary in Italian." in \
        user_text(load_rubric("direct_score").variant(language="it"))
    assert "explanation in Italian" in user_text(load_rubric("editorial_summary").variant(language="it"),
                                                 EDITORIAL_ITEM)
    assert "Write the analysis and the reasoning in French." in \
        user_text(load_rubric("pairwise").variant(language="fr"), examples("pairwise")[0])
    with pytest.raises(RubricSpecError) as exc:
        load_rubric("chess_commentary").variant(language="it")
    assert "never use 'language_name'" in one_sentence(exc)


def test_system_prompt_replaced_added_and_removed():
    strict = load_rubric("direct_score").variant(system="You are a strict grader.")
    assert strict.requests(DIRECT_ITEM)[0].messages[0] == {"role": "system", "content": "You are a strict grader."}
    added = load_rubric("editorial_summary").variant(system="Be terse.")
    assert [m["role"] for m in added.requests(EDITORIAL_ITEM)[0].messages] == ["system", "user"]
    removed = load_rubric("direct_score").variant(system=None)
    assert [m["role"] for m in removed.requests(DIRECT_ITEM)[0].messages] == ["user"]
    with pytest.raises(RubricSpecError, match="system= must be a non-empty text"):
        load_rubric("direct_score").variant(system="  ")


def test_few_shot_added_and_removed_where_the_kind_has_a_slot():
    base = load_rubric("editorial_summary", few_shot_pool=POOL)
    two = base.variant(few_shot=2)
    assert len(two.requests(EDITORIAL_ITEM)[0].meta["few_shot_ids"]) == 2
    assert "Example 2:" in user_text(two, EDITORIAL_ITEM)
    none = two.variant("no_examples", few_shot=0)
    assert "Examples:" not in user_text(none, EDITORIAL_ITEM)
    with pytest.raises(RubricSpecError, match="needs few_shot_pool"):
        load_rubric("editorial_summary").variant(few_shot=2)
    with pytest.raises(RubricSpecError, match="cannot change few_shot"):
        load_rubric("direct_score").variant(few_shot=2)


# -------------------------------------------------------------------------- criteria and anchors
def test_criteria_reworded_and_anchors_replaced():
    reworded = load_rubric("direct_score").variant(criteria={"factual_accuracy": "Every claim is verifiable."})
    assert "Description: Every claim is verifiable." in user_text(reworded)
    anchors = {1: "Several false claims.", 5: "No false claim."}
    anchored = load_rubric("direct_score").variant(criteria={"factual_accuracy": {"anchors": anchors}})
    text = user_text(anchored)
    assert "  5: No false claim.\n  1: Several false claims." in text
    weighted = load_rubric("direct_score").variant(criteria={"factual_accuracy": {"weight": 3.0}})
    assert weighted.spec.criterion("factual_accuracy").weight == 3.0


@pytest.mark.parametrize(("rubric", "changes", "message"), [
    ("direct_score", {"criteria": {"clarity": "x"}}, "criterion 'clarity' does not exist"),
    ("direct_score", {"criteria": {"factual_accuracy": {"anchors": {7: "x"}}}},
     "anchor for level 7, outside the 1-5 scale"),
    ("direct_score", {"criteria": {"factual_accuracy": {"colour": "x"}}}, "unknown field 'colour'"),
    ("direct_score", {"criteria": ["factual_accuracy"]}, "criteria= must map criterion names"),
    ("direct_score", {"criteria": {"factual_accuracy": {"definition": ""}}}, "definition"),
    ("editorial_summary", {"criteria": {"coherence": {"weight": 2}}}, "does not weigh its criteria"),
    ("unified_judge", {"criteria": {"correctness": "x"}}, "never show a criterion's definition"),
    ("direct_score", {"colour": "red"}, "unknown change 'colour'"),
    ("direct_score", {}, "give at least one change"),
    ("direct_score", {"justification": "middle"}, "justification must be 'before' or 'after'"),
    ("direct_score", {"anchor_order": "random"}, "anchor_order must be 'ascending' or 'descending'"),
    ("direct_score", {"anchor_order": "ascending"}, "no criterion has level anchors to reorder"),
    ("chess_commentary", {"justification": "before"}, "cannot change justification"),
])
def test_an_invalid_change_fails_with_one_sentence_naming_it(rubric, changes, message):
    with pytest.raises(RubricSpecError) as exc:
        load_rubric(rubric).variant(**changes)
    assert message in one_sentence(exc)


def test_invalid_names_are_refused():
    rubric = load_rubric("direct_score")
    with pytest.raises(RubricSpecError, match="a name of its own"):
        rubric.variant("direct_score", justification="after")
    with pytest.raises(RubricSpecError, match="starts with a letter"):
        rubric.variant("1st try", justification="after")


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_anchor_order_lists_levels_in_that_order(order):
    direct = load_rubric("direct_score", criteria=ANCHORED).variant(anchor_order=order)
    text = user_text(direct)
    assert (text.index("1: Wrong.") < text.index("5: Fully right.")) is (order == "ascending")
    editorial = user_text(load_rubric("editorial_summary").variant(anchor_order=order), EDITORIAL_ITEM)
    assert (editorial.index("Score 1 (") < editorial.index("Score 5 (")) is (order == "ascending")
    chess = load_rubric("chess_commentary").variant(anchor_order=order)
    text = user_text(chess, examples("chess_commentary")[0])
    scale_part = text[text.index("GLOBAL SCORING SCALE"):text.index("CRITERIA (")]
    assert (scale_part.index("1 —") < scale_part.index("5 —")) is (order == "ascending")
    anchors = text[text.index("Anchors:"):text.index("DISQUALIFYING")]
    assert (anchors.index("1:") < anchors.index("5:")) is (order == "ascending")


def test_anchor_order_changes_nothing_but_the_order():
    base = load_rubric("direct_score", criteria=ANCHORED)
    text = user_text(base.variant(anchor_order="ascending"))
    levels = ["  1: Wrong.", "  3: Partly right.", "  5: Fully right."]
    assert text.replace("\n".join(levels), "\n".join(reversed(levels))) == user_text(base)


# ------------------------------------------------------------------------------ diffs and snapshots
def test_diff_rubrics_shows_spec_fields_and_prompt_lines():
    base = load_rubric("direct_score")
    variant = base.variant("score_first", justification="after", language="it")
    diff = diff_rubrics(base, variant)
    assert diff.startswith("--- direct_score v1.0") and "+++ score_first v1.0+" in diff
    assert "  justification: null -> after" in diff and "  language: en -> it" in diff
    assert "-Write the justification before the score." in diff.replace(" The text inside", "\n")
    assert "+Give the score first" in diff
    assert "rendered prompt (item ds-1, first request):" in diff
    same = diff_rubrics(base, load_rubric("direct_score"))
    assert "  (none)" in same and "  (identical)" in same
    shown = describe_rubric(variant)
    assert "a variant of direct_score: justification=after, language=it" in shown and "fingerprint:" in shown
    with pytest.raises(RubricSpecError, match="derive a variant"):
        describe_rubric(variant, language="fr")


SNAPSHOT_CASES = {
    "direct_score__after_it_ascending": (lambda: load_rubric("direct_score", criteria=ANCHORED).variant(
        "v", justification="after", language="it", anchor_order="ascending"), DIRECT_ITEM),
    "editorial_summary__before_descending_scale3": (lambda: load_rubric("editorial_summary", criteria="coherence")
                                                    .variant("v", justification="before", anchor_order="descending",
                                                             scale=3, criteria={"coherence": {"anchors": ALL_LEVELS}}),
                                                    EDITORIAL_ITEM),
    "pairwise__after_fr": (lambda: load_rubric("pairwise").variant("v", justification="after", language="fr"),
                           examples("pairwise")[0]),
    "reference_gold__before_it_system": (lambda: load_rubric("reference_gold").variant(
        "v", justification="before", language="it", system="You are careful."), examples("reference_gold")[0]),
}


@pytest.mark.parametrize("case", sorted(SNAPSHOT_CASES))
def test_variant_prompt_matches_snapshot(case):
    make, item = SNAPSHOT_CASES[case]
    rubric = make()
    parts = []
    for i, req in enumerate(rubric.requests(item)):
        parts.append(f"=== request {i}: rows {[(k.criterion, k.side) for k in req.expected_rows]}")
        parts += [f"--- {m['role']}\n{m['content']}" for m in req.messages]
        parts.append(f"--- response_format\n{json.dumps(req.response_format, ensure_ascii=False)}")
    text = "\n".join(parts) + "\n"
    path = SNAPSHOTS / f"variant__{case}.txt"
    if os.environ.get("JUDGELAB_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        if not os.environ.get("JUDGELAB_UPDATE_SNAPSHOTS") and os.environ.get("CI"):
            pytest.fail(f"missing snapshot {path.name}; generate it locally and commit it")
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"prompt changed for {path.name}; review and regenerate"


def test_criteria_and_options_accumulate_field_by_field():
    first = load_rubric("direct_score").variant("a", criteria={"factual_accuracy": "Claims are verifiable."})
    second = first.variant("b", criteria={"factual_accuracy": {"anchors": {1: "No.", 5: "Yes."}}})
    crit = second.spec.criterion("factual_accuracy")
    assert crit.definition == "Claims are verifiable." and crit.anchors == {1: "No.", 5: "Yes."}
    third = second.variant("c", criteria={"factual_accuracy": {"anchors": {5: "Yes!"}}})
    assert third.spec.criterion("factual_accuracy").anchors == {5: "Yes!"}  # anchors replace the whole set


def test_the_notebook_view_shows_fields_and_prompts_side_by_side():
    from judgelab.viz.variants_view import VariantDiffView, variant_diff_html

    base = load_rubric("editorial_summary")
    before = base.variant("explain_first", justification="before")
    page = variant_diff_html(base, before)
    assert "<code>justification</code>" in page and "explain_first" in page and 'class="diff"' in page
    assert "The rendered prompts are identical." in variant_diff_html(base, load_rubric("editorial_summary"))
    view = VariantDiffView({"base": base, "explain_first": before, "top_first": base.variant(anchor_order="descending")})
    assert "<code>justification</code>" in view.output.value
    view.right.value = "top_first"
    assert "<code>anchor_order</code>" in view.output.value and "<code>justification</code>" not in view.output.value
    with pytest.raises(ConfigError, match="at least two rubrics"):
        VariantDiffView({"base": base})


def test_long_variant_names_keep_the_response_schema_name_within_64_characters():
    long = load_rubric("editorial_summary").variant(anchor_order="descending", justification="before", language="it",
                                                    system="Be careful and precise.")
    name = long.requests(EDITORIAL_ITEM)[0].response_format["json_schema"]["name"]
    assert len(long.name) > 64 and len(name) == 64 and re.fullmatch(r"[A-Za-z0-9_]+", name)
    assert load_rubric("direct_score").schema_name() == "direct_score_output"  # short names unchanged


@pytest.mark.parametrize("name", list_rubrics())
def test_every_built_in_rubric_is_what_a_variant_derives_from(name):
    """variants.py declares what it needs from a rubric (DerivableRubric) instead of importing SpecRubric, so the
    two modules import one way only; a member the protocol declares and a rubric lacks would fail only when a
    variant is made. Invariant: every built-in rubric has every member, with the protocol's parameters."""
    import inspect

    from judgelab.rubrics.variants import DerivableRubric

    rubric = load_rubric(name)
    declared = {n: f for n, f in vars(DerivableRubric).items()
                if inspect.isfunction(f) and (n == "__init__" or not n.startswith("__"))}
    for member in [*DerivableRubric.__annotations__, *declared]:
        assert hasattr(rubric, member), f"{name}: no {member}"
    for member, protocol_function in declared.items():
        wanted = list(inspect.signature(protocol_function).parameters)
        assert list(inspect.signature(getattr(type(rubric), member)).parameters) == wanted, (name, member)
