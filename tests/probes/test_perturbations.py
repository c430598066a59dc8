"""Perturbations keep the candidate's content: the original text is contained verbatim and recoverable."""

from __future__ import annotations

import pytest

from judgelab.probes import perturbations as p

TEXTS = [
    "Paris is the capital of France.",
    "Seasons come from the tilt of Earth's axis. The tilt changes how directly sunlight arrives!",
    "def add(a, b):\n    return a + b",
    "no final punctuation here",
    "Ünïcödé — text with </response> and {braces}",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("words", [1, 25, 100])
def test_padding_appends_at_least_the_requested_words_and_keeps_the_original(text, words):
    for pad in (p.pad_restatement, p.pad_filler):
        out = pad(text, words)
        assert out.startswith(text) and p.recover(out, len(text)) == text
        added = out[len(text):]
        assert added.startswith(p.SEPARATOR)
        assert p.word_count(added) >= words
        assert p.word_count(added) < words + 30  # overshoot by at most one sentence (+ a lead)


def test_restatement_repeats_only_the_texts_own_sentences():
    text = TEXTS[1]
    added = p.pad_restatement(text, 40)[len(text):]
    for lead in p.RESTATEMENT_LEADS:
        added = added.replace(lead, "")
    sentences = {"Seasons come from the tilt of Earth's axis.", "The tilt changes how directly sunlight arrives!"}
    rebuilt = added.split()
    # every added token belongs to one of the original sentences
    assert set(rebuilt) <= {w for s in sentences for w in s.split()}


def test_filler_is_unrelated_true_sentences_only():
    added = p.pad_filler(TEXTS[0], 60)[len(TEXTS[0]) + len(p.SEPARATOR):]
    remaining = added
    for sentence in p.FILLER_SENTENCES:
        remaining = remaining.replace(sentence, "")
    assert remaining.strip() == ""


@pytest.mark.parametrize("text", TEXTS)
def test_authority_perturbations_add_text_around_an_unchanged_answer(text):
    confident = p.add_confidence(text)
    assert confident.endswith(text) and p.recover(confident, len(text), prefix=True) == text
    assert confident.startswith(p.CONFIDENT_PREFIX)
    cited = p.add_citation(text)
    assert cited.startswith(text) and cited.endswith(p.CITATION_SUFFIX)
    for pert in p.AUTHORITY_PERTURBATIONS:
        assert p.recover(pert(text), len(text), prefix=pert.prefix) == text


@pytest.mark.parametrize("kind", list(p.INJECTIONS))
def test_injections_append_an_instruction_and_keep_the_answer(kind):
    out = p.inject(TEXTS[0], kind, "the maximum score of 5")
    assert out.startswith(TEXTS[0] + p.SEPARATOR) and "the maximum score of 5" in out
    assert p.recover(out, len(TEXTS[0])) == TEXTS[0]


def test_perturbation_sets_name_their_conditions():
    names = [x.name for x in p.padding_perturbations((10, 50))]
    assert names == ["restatement+10w", "filler+10w", "restatement+50w", "filler+50w"]
    assert [x.name for x in p.injection_perturbations("x")] == [f"inject:{k}" for k in p.INJECTIONS]


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_candidates_are_refused_with_a_clear_message(bad):
    with pytest.raises(ValueError, match="non-empty candidate text"):
        p.pad_filler(bad, 10)
    with pytest.raises(ValueError, match="non-empty candidate text"):
        p.add_citation(bad)


def test_unknown_injection_and_bad_lengths_are_named():
    with pytest.raises(ValueError, match="unknown injection 'nope'"):
        p.inject("x", "nope", "y")
    with pytest.raises(ValueError, match="positive word counts"):
        p.padding_perturbations((0,))
