"""Release shapes from_frame / read_frame read since the published-study recipes (docs/reproducing_studies.md):
files matched by a ``{field}`` pattern, composite item ids, votes naming their two candidates, a list of
answers in one cell, a scale per criterion. Each generator's invariant is in its test's docstring."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.datasets import FrameImportError, from_frame, read_frame
from judgelab.judgments import MISSING, OK, PARSE_ERROR

_COLUMNS = ["item_id", "judge", "criterion", "condition", "repeat", "status", "score", "winner", "verdict"]


def _core(table: pd.DataFrame) -> pd.DataFrame:
    """The rating columns, sorted: what two equivalent imports must agree on."""
    return table[_COLUMNS].astype(str).sort_values(_COLUMNS[:5]).reset_index(drop=True)


# ------------------------------------------------------------------------------------------ path patterns

_NAMES = st.text(alphabet="abcdefgh0123456789-_^", min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.dictionaries(st.tuples(_NAMES, _NAMES), st.integers(0, 4), min_size=1, max_size=6),
       seed=st.integers(0, 2**16))
def test_a_pattern_reads_every_file_with_its_fields_as_columns(tmp_path_factory: pytest.TempPathFactory,
                                                               layout: dict[tuple[str, str], int], seed: int) -> None:
    """Invariant: read_frame("<root>/{judge}/x_{criterion}.jsonl") is every matching file's rows (each file
    read alone) with the path's parts as text columns, files in sorted path order; files that do not match
    the pattern's literal parts are not read."""
    root = tmp_path_factory.mktemp("release")
    rng = np.random.default_rng(seed)
    expected = []
    for (judge, criterion), n in layout.items():
        folder = root / judge
        folder.mkdir(exist_ok=True)
        rows = [{"id": f"i{k}", "score": int(rng.integers(1, 6))} for k in range(n)]
        path = folder / f"x_{criterion}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows) + ("\n" if n == 0 else ""), encoding="utf-8")
        (folder / f"y_{criterion}.jsonl").write_text(json.dumps({"id": "other"}) + "\n", encoding="utf-8")
        expected += [(str(path), {**r, "judge": judge, "criterion": criterion}) for r in rows]
    got = read_frame(str(root / "{judge}" / "x_{criterion}.jsonl"))
    if not expected:  # the files match but hold no record
        assert len(got) == 0
        return
    want = pd.DataFrame([row for _, row in sorted(expected, key=lambda e: e[0])])
    assert list(got.index) == list(range(1, len(want) + 1))
    pd.testing.assert_frame_equal(got[list(want.columns)].reset_index(drop=True), want, check_dtype=False)


def test_pattern_errors_name_the_pattern(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.jsonl").write_text('{"judge": "x", "id": 1}\n', encoding="utf-8")
    with pytest.raises(FrameImportError, match=r"no file matches the path pattern .*\{judge\}"):
        read_frame(str(tmp_path / "{judge}" / "g.jsonl"))
    with pytest.raises(FrameImportError, match="names the field {judge} twice"):
        read_frame(str(tmp_path / "{judge}" / "{judge}.jsonl"))
    with pytest.raises(FrameImportError, match="field {judge} is also a column"):
        read_frame(str(tmp_path / "{judge}" / "f.jsonl"))
    assert list(read_frame(str(tmp_path / "*" / "f.jsonl"))["id"]) == [1]  # a wildcard names nothing


def test_a_literal_bracket_or_caret_in_a_folder_is_not_a_wildcard(tmp_path: Path) -> None:
    for name in ("LLMEval^2", "set[1]"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "r_a.csv").write_text("id,v\n1,2\n", encoding="utf-8")
        got = read_frame(str(tmp_path / name / "r_{part}.csv"))
        assert got.to_dict("records") == [{"id": "1", "v": "2", "part": "a"}]


def test_a_txt_file_of_json_lines_is_read_as_json_lines_and_other_txt_as_csv(tmp_path: Path) -> None:
    (tmp_path / "judge.txt").write_text('\n{"id": "d1", "resp": "Score: 4"}\n{"id": "d2", "resp": "2"}\n',
                                        encoding="utf-8")
    (tmp_path / "table.txt").write_text("id,resp\nd1,4\n", encoding="utf-8")
    assert read_frame(tmp_path / "judge.txt").to_dict("records") == [{"id": "d1", "resp": "Score: 4"},
                                                                     {"id": "d2", "resp": "2"}]
    assert read_frame(tmp_path / "table.txt").to_dict("records") == [{"id": "d1", "resp": "4"}]


def test_from_frame_reads_a_pattern_and_names_rows_by_file_and_line(tmp_path: Path) -> None:
    for judge, value in (("a", "3"), ("b", "9")):
        (tmp_path / judge).mkdir()
        (tmp_path / judge / "v.jsonl").write_text(json.dumps({"id": "q1", "score": value}) + "\n", encoding="utf-8")
    table = from_frame(str(tmp_path / "{judge}" / "v.jsonl"), item_id="id", judge="judge", score="score",
                       scale=(1, 5), on_bad="unscored")
    assert dict(zip(table["judge"], table["status"], strict=True)) == {"a": OK, "b": PARSE_ERROR}
    assert "v.jsonl line 1" in table.loc[table["judge"] == "b", "unscored_reason"].iloc[0]


# ------------------------------------------------------------------------------------------ composite ids

@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["d1", "d2", "d3"]), st.sampled_from(["M8", "M9"]),
                               st.integers(1, 5)), min_size=1, max_size=12, unique_by=lambda r: r[:2]))
def test_a_composite_item_id_is_the_joined_columns(rows: list[tuple[str, str, int]]) -> None:
    """Invariant: item_id=["doc", "system"] gives the same table as one column holding "doc:system"."""
    df = pd.DataFrame(rows, columns=["doc", "system", "score"]).assign(judge="j")
    joined = df.assign(item=df["doc"] + ":" + df["system"])
    pd.testing.assert_frame_equal(_core(from_frame(df, item_id=["doc", "system"], judge="judge", score="score")),
                                  _core(from_frame(joined, item_id="item", judge="judge", score="score")))


def test_composite_ids_that_would_join_alike_are_refused() -> None:
    df = pd.DataFrame({"a": ["x:y", "x"], "b": ["z", "y:z"], "judge": "j", "score": [1, 2]})
    with pytest.raises(FrameImportError, match="both join to 'x:y:z'"):
        from_frame(df, item_id=["a", "b"], judge="judge", score="score")
    with pytest.raises(FrameImportError, match="names no column"):
        from_frame(df, item_id=[], judge="judge", score="score")


# ------------------------------------------------------------------------------------- named candidates

_MODELS = ["alpaca", "claude", "gpt-4", "llama", "vicuna"]
_SIDES = ["model_a", "model_b", "tie", "tie (bothbad)"]


def _votes(seed: int, n: int) -> tuple[pd.DataFrame, dict[tuple[str, str, str], str]]:
    """Votes on (question, pair) shown in a random order, the winner written as model_a/model_b/tie or as the
    winning model's name; returns the votes and each vote's winner in the SORTED pair's labels."""
    rng = np.random.default_rng(seed)
    rows, truth = [], {}
    for k in range(n):
        first, second = sorted(rng.choice(_MODELS, 2, replace=False))
        question, judge = f"q{k % 7}", f"j{k}"
        side = ["A", "B", "TIE"][int(rng.integers(3))]
        shown = (first, second) if rng.random() < 0.5 else (second, first)
        if side == "TIE":
            winner = _SIDES[2 + int(rng.integers(2))]
        else:
            name = first if side == "A" else second
            winner = name if rng.random() < 0.3 else ("model_a" if shown[0] == name else "model_b")
        rows.append({"question_id": question, "model_a": shown[0], "model_b": shown[1], "winner": winner,
                     "judge": judge})
        truth[(f"{question}:{first}:{second}", judge)] = side
    return pd.DataFrame(rows), truth


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 30))
def test_votes_naming_their_candidates_are_oriented_by_name(seed: int, n: int) -> None:
    """Invariant: with candidates=, every vote's winner is in the sorted pair's labels whatever order the row
    shows the pair in and however the winner is written; swapping the two candidate columns of any rows
    (and their model_a/model_b winners) gives the same table."""
    votes, truth = _votes(seed, n)
    table = from_frame(votes, item_id="question_id", candidates=("model_a", "model_b"), judge="judge",
                       winner="winner")
    got = {(r.item_id, r.judge): r.winner for r in table.itertuples()}
    assert got == truth
    assert (table["candidate_a"] < table["candidate_b"]).all()
    flip = np.random.default_rng(seed + 1).random(len(votes)) < 0.5
    swapped = votes.copy()
    swapped.loc[flip, ["model_a", "model_b"]] = votes.loc[flip, ["model_b", "model_a"]].to_numpy()
    swapped.loc[flip, "winner"] = votes.loc[flip, "winner"].replace({"model_a": "model_b", "model_b": "model_a"})
    again = from_frame(swapped, item_id="question_id", candidates=("model_a", "model_b"), judge="judge",
                       winner="winner")
    pd.testing.assert_frame_equal(_core(table), _core(again))


def test_candidates_refusals_name_the_fix() -> None:
    votes = pd.DataFrame({"q": ["1"], "model_a": ["x"], "model_b": ["x"], "winner": ["tie"], "judge": ["h"]})
    with pytest.raises(FrameImportError, match="as both candidates"):
        from_frame(votes, item_id="q", candidates=("model_a", "model_b"), judge="judge", winner="winner")
    ok = votes.assign(model_b="y")
    with pytest.raises(FrameImportError, match="condition=/winner_in='original' would flip winners twice"):
        from_frame(ok.assign(order="original"), item_id="q", candidates=("model_a", "model_b"), judge="judge",
                   winner="winner", condition="order")
    with pytest.raises(FrameImportError, match="TWO columns"):
        from_frame(ok, item_id="q", candidates="model_a", judge="judge", winner="winner")  # type: ignore[arg-type]
    with pytest.raises(FrameImportError, match="kind 'score'"):
        from_frame(ok.assign(s=1), item_id="q", candidates=("model_a", "model_b"), judge="judge", score="s")
    with pytest.raises(FrameImportError, match="is empty in row 0"):
        from_frame(ok.assign(model_a=None), item_id="q", candidates=("model_a", "model_b"), judge="judge",
                   winner="winner")
    with pytest.raises(FrameImportError, match="or a candidate's name"):
        from_frame(ok.assign(winner="z"), item_id="q", candidates=("model_a", "model_b"), judge="judge",
                   winner="winner")


# ------------------------------------------------------------------------------------ lists of answers

@settings(max_examples=30, deadline=None)
@given(answers=st.lists(st.lists(st.sampled_from(["1", "Score: 2", "3", "no idea", None]), max_size=5),
                        min_size=1, max_size=6))
def test_a_list_of_answers_in_a_cell_is_that_many_repeats(answers: list[list[str | None]]) -> None:
    """Invariant: a cell holding n answers gives the rows of n cells with repeat 0..n-1 (the exploded frame
    with a repeat column); an empty list is one missing row."""
    listed = pd.DataFrame({"r": [f"r{k}" for k in range(len(answers))], "judge": "j",
                           "answers": [list(a) for a in answers]})
    long = pd.DataFrame([{"r": f"r{k}", "judge": "j", "answer": text, "sample": i}
                         for k, a in enumerate(answers) for i, text in enumerate(a or [None])])
    kwargs = {"judge": "judge", "parse": "score", "scale": (1, 3)}
    got = from_frame(listed, item_id="r", score="answers", **kwargs)  # type: ignore[arg-type]
    want = from_frame(long, item_id="r", score="answer", repeat="sample", **kwargs)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(_core(got), _core(want))
    empty = [f"r{k}" for k, a in enumerate(answers) if not a]
    assert set(got.loc[got["item_id"].isin(empty), "status"]) <= {MISSING}


def test_a_list_cell_with_a_repeat_column_is_refused() -> None:
    df = pd.DataFrame({"r": ["a"], "judge": ["j"], "answers": [["1", "2"]], "sample": [0]})
    with pytest.raises(FrameImportError, match="holds a list of answers"):
        from_frame(df, item_id="r", judge="judge", score="answers", repeat="sample")


# ------------------------------------------------------------------------------------ scale per criterion

@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from(["coherence", "groundedness"]), st.integers(-1, 4)),
                       min_size=1, max_size=20))
def test_a_scale_per_criterion_is_one_import_per_criterion(values: list[tuple[str, int]]) -> None:
    """Invariant: scale={criterion: range} gives the rows of one import per criterion with that range (a value
    outside its criterion's range unscored with the range in the reason)."""
    scales = {"coherence": (1, 3), "groundedness": (0, 1)}
    df = pd.DataFrame([{"r": f"r{k}", "criterion": c, "judge": "j", "score": v} for k, (c, v) in enumerate(values)])
    got = from_frame(df, item_id="r", judge="judge", score="score", criterion="criterion", scale=scales,
                     on_bad="unscored")
    parts = [from_frame(df[df["criterion"] == c], item_id="r", judge="judge", score="score", criterion="criterion",
                        scale=scale, on_bad="unscored") for c, scale in scales.items() if (df["criterion"] == c).any()]
    pd.testing.assert_frame_equal(_core(got), _core(pd.concat(parts)))


def test_a_scale_mapping_must_cover_every_criterion() -> None:
    df = pd.DataFrame({"r": ["a", "b"], "criterion": ["coherence", "fluency"], "judge": "j", "score": [1, 2]})
    with pytest.raises(FrameImportError, match="no range for criterion 'fluency'"):
        from_frame(df, item_id="r", judge="judge", score="score", criterion="criterion", scale={"coherence": (1, 3)})
    with pytest.raises(FrameImportError, match=r"scale\['coherence'\] must be \(low, high\) with low < high"):
        from_frame(df, item_id="r", judge="judge", score="score", criterion="criterion",
                   scale={"coherence": (3, 1), "fluency": (1, 3)})
