"""from_frame(parse=...) reads a column of judge answers with the rubrics' parsing layer; unscored_as= and
aggregate_repeats are the publishers' rules for unreadable answers, named where a user looks for them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import judgelab
from judgelab.datasets import FrameImportError, from_frame
from judgelab.judgments import OK, PARSE_ERROR, REFUSAL, detail

CRITERIA = {"coherence": (1, 3), "groundedness": (0, 1)}
UNREADABLE = ("I am not able to judge this one.", "The response is fine overall.", "Score: 7")


def _sampled_answers(seed: int = 22, responses: int = 12, samples: int = 20) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A dialogue study's release: 20 sampled judge answers per response and criterion (1-3 and 0-1), as text
    in the forms such releases hold ("2", "Coherence: 3", a rationale with the score last), ~10% unreadable.

    Returns the answers and, per (response, criterion), the true values drawn (None where unreadable)."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for r in range(responses):
        for criterion, (low, high) in CRITERIA.items():
            level = rng.integers(low, high + 1)
            for k in range(samples):
                value = int(np.clip(level + rng.integers(-1, 2), low, high))
                form = rng.integers(0, 5)
                if rng.random() < 0.1:
                    text, value = UNREADABLE[int(rng.integers(0, len(UNREADABLE)))], None
                elif form == 0:
                    text = str(value)
                elif form == 1:
                    text = f"{criterion.capitalize()}: {value}"
                elif form == 2:
                    text = f"The reply follows the dialogue and cites the fact. Score: {value}"
                elif form == 3:
                    text = f"- {criterion.capitalize()}: {value}"
                else:
                    text = f"It stays on topic, so I would rate it {value}."
                rows.append({"response_id": f"r{r:02d}", "criterion": criterion, "sample": k, "judge": "gpt-4",
                             "answer": text})
                truth.append({"response_id": f"r{r:02d}", "criterion": criterion, "sample": k, "value": value})
    return pd.DataFrame(rows), pd.DataFrame(truth)


def _import(answers: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    parts = [from_frame(answers[answers["criterion"] == c], item_id="response_id", judge="judge", score="answer",
                        criterion="criterion", repeat="sample", parse="score", scale=scale, **kwargs)  # type: ignore[arg-type]
             for c, scale in CRITERIA.items()]
    return judgelab.make_table(pd.concat(parts, ignore_index=True))


def test_g_eval_mean_of_twenty_sampled_answers_is_two_documented_steps() -> None:
    """The documented two-step (help(from_frame), docs/publisher_conventions.md): every sample a repeat,
    then aggregate_repeats; G-Eval's rule (an unreadable sample scores 0) is unscored_as=0. Checked
    against the values the generator drew, not against the parser."""
    answers, truth = _sampled_answers()
    t = _import(answers).sort_values(["item_id", "criterion", "repeat"], ignore_index=True)
    truth = truth.sort_values(["response_id", "criterion", "sample"], ignore_index=True)
    assert len(t) == len(answers)
    unreadable = truth["value"].isna().to_numpy()
    assert (t["status"].to_numpy() == np.where(unreadable, PARSE_ERROR, OK)).all()
    assert np.array_equal(t["score"].to_numpy(dtype=float, na_value=np.nan)[~unreadable],
                          truth["value"].to_numpy(dtype=float)[~unreadable])

    geval = judgelab.aggregate_repeats(t, unscored_as=0)
    expected = truth.assign(v=truth["value"].fillna(0).astype(float)).groupby(
        ["response_id", "criterion"], sort=False)["v"].mean()
    got = geval.set_index(["item_id", "criterion"])["score"].astype(float)
    assert len(geval) == 12 * 2 and np.allclose(got.loc[expected.index].to_numpy(), expected.to_numpy(), atol=1e-12)

    readable = judgelab.aggregate_repeats(t)  # the default: unreadable samples left out and counted
    kept = truth.dropna().groupby(["response_id", "criterion"], sort=False)["value"].mean()
    got = readable.set_index(["item_id", "criterion"])["score"].astype(float)
    assert np.allclose(got.loc[kept.index].to_numpy(), kept.to_numpy().astype(float), atol=1e-12)
    assert int(readable["n_unscored_excluded"].sum()) == int(unreadable.sum())


def test_unreadable_cells_are_unscored_rows_with_the_reason_and_where() -> None:
    df = pd.DataFrame({"q": ["a", "b", "c", "d"], "j": ["m"] * 4,
                       "answer": ["Score: 2", "Score: 7", "I can't help with that.", None]})
    t = from_frame(df, item_id="q", judge="j", score="answer", parse="score", scale=(1, 3))
    assert list(t["status"]) == [OK, PARSE_ERROR, REFUSAL, "missing"]
    assert t["unscored_reason"].iloc[1] == "score 7 in 'Score: 7' is outside the scale 1-3 (column 'answer', row 1)"
    assert detail(t.iloc[0].to_dict())["parsed"] == {"tier": 1, "rule": "score phrase", "matched": "Score: 2"}
    assert list(t["raw_output"].iloc[:3]) == list(df["answer"].iloc[:3])  # the answer is kept as it was


def test_winners_and_labels_are_parsed_and_gold_is_read_as_a_value() -> None:
    df = pd.DataFrame({"pair": ["p1", "p1", "p2", "p2"], "order": ["original", "swapped"] * 2,
                       "judge": ["m"] * 4, "gold": ["A", "A", "Tie", "Tie"],
                       "answer": ["Output (a) is better.", "[[A]]", "Both are equal. [[C]]", "I cannot decide."]})
    t = from_frame(df, item_id="pair", judge="judge", winner="answer", condition="order", gold="gold",
                   parse="winner")
    judged = t[t["judge"] == "m"]
    assert list(judged["winner"].fillna("-")) == ["A", "B", "TIE", "-"]  # the swapped "[[A]]" is the original B
    assert list(t.loc[t["judge"] == "gold", "winner"]) == ["A", "TIE"]
    tie = from_frame(df, item_id="pair", judge="judge", winner="answer", condition="order", gold="gold",
                     parse="winner", unscored_as="TIE")  # LLMBar: an unreadable verdict counts as a tie
    row = tie[(tie["judge"] == "m") & (tie["item_id"] == "p2") & (tie["condition"] == "swapped")].iloc[0]
    assert (row["status"], row["winner"]) == (OK, "TIE")
    assert row["unscored_reason"].startswith("counted as 'TIE' (was parse_error: no verdict found")

    labels = pd.DataFrame({"q": ["a", "b", "c"], "j": ["m"] * 3,
                           "answer": ["Yes, the answer names the city.", "Label: no", "Partly."]})
    t = from_frame(labels, item_id="q", judge="j", label="answer", parse="label", labels=["yes", "no"])
    assert list(t["verdict"].fillna("-")) == ["yes", "no", "-"]


def test_a_callable_parser_and_its_failures_stay_rows() -> None:
    df = pd.DataFrame({"q": ["a", "b", "c"], "j": ["m"] * 3, "answer": ["<3>", "<x>", "<2>"]})

    def angle(text: str) -> int:
        return int(text.strip("<>"))

    t = from_frame(df, item_id="q", judge="j", score="answer", parse=angle, scale=(1, 3))
    assert list(t["score"].astype(float).fillna(-1)) == [3.0, -1.0, 2.0]
    assert t["unscored_reason"].iloc[1].startswith("parse= raised ValueError: invalid literal for int()")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"score": "answer", "parse": "score"}, r"parse='score' reads scores on a scale: pass scale=\(low, high\)"),
    ({"score": "answer", "parse": "winner"}, "parse='winner' reads kind 'pairwise', but this import is kind 'score'"),
    ({"label": "answer", "parse": "label"}, r"parse='label' reads one of the declared labels: pass labels=\[...\]"),
    ({"score": "answer", "parse": "number"}, "parse must be 'score', 'winner', 'label' or a function"),
    ({"score": "answer", "parse": "score", "scale": (1, 3), "unscored_as": "zero"},
     "unscored_as= for scores must be a finite number"),
])
def test_parse_options_are_checked_in_one_sentence(kwargs: dict, message: str) -> None:
    df = pd.DataFrame({"q": ["a"], "j": ["m"], "answer": ["Score: 2"]})
    with pytest.raises(FrameImportError, match=message):
        from_frame(df, item_id="q", judge="j", **kwargs)


def test_fill_unscored_and_aggregate_repeats_are_public_names() -> None:
    # the facade's copies are the judgments functions with their arguments guarded (judgelab.errors.user_errors)
    assert judgelab.fill_unscored.__wrapped__ is judgelab.judgments.fill_unscored
    assert judgelab.aggregate_repeats.__wrapped__ is judgelab.judgments.aggregate_repeats
    assert {"fill_unscored", "aggregate_repeats", "parse_score", "parse_winner", "Parsed"} <= set(judgelab.__all__)
