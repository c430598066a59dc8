"""Rubric specs: loading by name and path, YAML errors naming field and line, params, fingerprints."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.rubrics import RubricSpecError, describe_rubric, list_rubrics, load_rubric, parse_spec_text
from judgelab.rubrics.base import Rubric

GOOD = """\
name: my_rubric
version: 1.2
kind: direct_score
mode: direct
required_fields: [prompt, response]
candidate_fields: [response]
scale: {min: 1, max: 5}
criteria:
  - name: clarity
    definition: Is the answer clear?
    weight: 1
output: {format: json}
templates: {system: "builtin:direct_score.system.j2", user: "builtin:direct_score.user.j2"}
verdict: {rule: weighted_mean}
"""


def test_builtins_listed_and_satisfy_the_engine_contract() -> None:
    names = list_rubrics()
    assert names == sorted(
        ["chess_commentary", "direct_score", "editorial_summary", "pairwise", "reference_gold", "unified_judge",
         "trajectory", "mt_bench_single", "mt_bench_pair"]
    )
    for name in names:
        rubric = load_rubric(name)
        assert isinstance(rubric, Rubric)
        assert rubric.name == name and rubric.required_fields
        assert len(rubric.fingerprint()) == 16


def test_reference_gold_defaults_to_temperature_zero() -> None:
    assert load_rubric("reference_gold").default_temperature == 0.0
    assert load_rubric("direct_score").default_temperature is None


def test_user_yaml_loads_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD)
    rubric = load_rubric(path)
    assert rubric.name == "my_rubric" and rubric.version == "1.2"
    assert rubric.scale == (1, 5)


@pytest.mark.parametrize(
    ("edit", "field", "line"),
    [
        (("    weight: 1", "    weight: heavy"), "criteria[0].weight", 11),
        (("mode: direct", "mode: sideways"), "mode", 4),
        (("    definition: Is the answer clear?\n", ""), "criteria[0].definition", 9),
        (("scale: {min: 1, max: 5}", "scale: {min: 5, max: 1}"), "scale", 7),
        (("verdict: {rule: weighted_mean}", "verdict: {rule: weighted_mean}\ncolour: blue"), "colour", 15),
    ],
)
def test_malformed_yaml_names_field_and_line(edit: tuple[str, str], field: str, line: int) -> None:
    text = GOOD.replace(*edit)
    with pytest.raises(RubricSpecError) as err:
        parse_spec_text(text, where="mine.yaml")
    msg = str(err.value)
    assert f"field '{field}'" in msg and f"line {line}" in msg, msg


def test_yaml_syntax_error_names_line() -> None:
    with pytest.raises(RubricSpecError, match=r"invalid YAML \(line 4"):
        parse_spec_text("name: x\nversion: 1\ncriteria: [a, {b\n")


def test_unknown_rubric_and_unknown_param_are_clear() -> None:
    with pytest.raises(RubricSpecError, match="unknown rubric 'nope'"):
        load_rubric("nope")
    with pytest.raises(RubricSpecError, match="does not accept parameter"):
        load_rubric("chess_commentary", degraded=True)
    with pytest.raises(RubricSpecError, match="not one of the supported scales"):
        load_rubric("direct_score", scale=7)
    with pytest.raises(RubricSpecError, match="weights name unknown criteria"):
        load_rubric("direct_score", weights={"charm": 1})


def test_template_file_missing_is_clear(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(GOOD.replace("builtin:direct_score.user.j2", "absent.j2"))
    with pytest.raises(RubricSpecError, match="template file not found"):
        load_rubric(path)


def test_fingerprint_changes_with_everything_that_changes_a_prompt(tmp_path: Path) -> None:
    base = load_rubric("direct_score").fingerprint()
    assert load_rubric("direct_score").fingerprint() == base
    assert load_rubric("direct_score", scale=10).fingerprint() != base
    assert load_rubric("direct_score", weights={"factual_accuracy": 1.0}).fingerprint() != base
    assert load_rubric("reference_gold", degraded=True).fingerprint() != load_rubric("reference_gold").fingerprint()
    a = tmp_path / "a.yaml"
    a.write_text(GOOD.replace('"builtin:direct_score.user.j2"', "u.j2"))
    (tmp_path / "u.j2").write_text("Rate {{ item.response | fence('response') }}")
    fp1 = load_rubric(a).fingerprint()
    (tmp_path / "u.j2").write_text("Score {{ item.response | fence('response') }}")
    assert load_rubric(a).fingerprint() != fp1


def test_describe_rubric_shows_spec_and_a_rendered_prompt() -> None:
    for name in list_rubrics():
        text = describe_rubric(name)
        assert name in text and "example prompt" in text and "required fields" in text
    assert "WINNER,<A|B|TIE>" in describe_rubric("chess_commentary")


PATTERN_TEMPLATE = """Rate the response from 1 to 5 for clarity. Explain first, then end with "Score: N".
{{ item.response | fence("response") }}"""


def test_pattern_format_reads_the_last_score_token(tmp_path: Path) -> None:
    (tmp_path / "p.j2").write_text(PATTERN_TEMPLATE)
    path = tmp_path / "p.yaml"
    path.write_text(GOOD.replace("output: {format: json}", "output: {format: pattern}")
                    .replace('"builtin:direct_score.user.j2"', "p.j2"))
    rubric = load_rubric(path)
    req = rubric.requests({"item_id": "1", "prompt": "q", "response": "a"})[0]
    rows = {r.key.criterion: r.score for r in rubric.parse("Clear, though score: 2 was tempting. Score: 4", req)}
    assert rows == {"clarity": 4, "overall": 4}
    from judgelab.rubrics.base import ParseFailure

    with pytest.raises(ParseFailure, match="no 'score: N'"):
        rubric.parse("Downgrade: 2", req)


def test_output_format_must_match_the_kind(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace("output: {format: json}", "output: {format: csv_line}"))
    with pytest.raises(RubricSpecError, match="field 'output.format'"):
        load_rubric(path)


def test_describe_works_without_the_examples_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An installed package has no data/examples: the spec's own example item is rendered."""
    from judgelab.rubrics import registry

    monkeypatch.setattr(registry, "EXAMPLES_DIR", tmp_path)
    for name in list_rubrics():
        assert "example prompt" in describe_rubric(name), name


def test_the_user_yaml_guide_in_the_spec_docstring_loads(tmp_path: Path) -> None:
    from judgelab.rubrics import spec

    block = (spec.__doc__ or "").split("::\n\n", 1)[1].split("\n\nTemplates", 1)[0]
    path = tmp_path / "guide.yaml"
    path.write_text("\n".join(line[4:] for line in block.splitlines()))
    assert load_rubric(path).scale == (1, 10)
