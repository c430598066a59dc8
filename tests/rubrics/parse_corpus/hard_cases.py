"""Hand-written hard cases for the parsing layer, with the value a careful reader takes from each.

``SCORES``: (reply, scale, decimals, expected) where expected is the score, or ``Failure("text")``: the
reply must be unparsed with a reason containing that text (a failure names the value it refused).
``WINNERS``: (reply, expected winner in the labels shown, or Failure). ``CHOICES``: option letters.
``JSON_ANSWERS``: (reply, the ``score``/``winner`` of the object a JSON rubric reads, or Failure).

Conflicting verdicts (:mod:`judgelab.rubrics.verdict_conflicts`): a reply with two verdicts that disagree
-- two JSON objects, a JSON answer and a later "Score: 5", [[A]] then [[B]], a quoted verdict from the
response under review -- is unparsed with "conflicting verdicts"; agreeing duplicates are read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CHOICES", "Failure", "JSON_ANSWERS", "SCORES", "WINNERS"]


@dataclass(frozen=True)
class Failure:
    reason: str


SCORES: list[tuple[str, tuple[int, int], bool, float | Failure]] = [
    # the formats the issue names
    ("Score: 4/5", (1, 5), False, 4),
    ("The answer is accurate but terse.\n\nScore: 4/5.", (1, 5), False, 4),
    ("It covers every point. 4 out of 5", (1, 5), False, 4),
    ("Overall a solid summary: 4/5", (1, 5), False, 4),
    ("Rating: [[8]]", (1, 10), False, 8),
    ("The response is helpful and correct. Rating: [[7]]", (1, 10), False, 7),
    ("Feedback: clear and complete. [RESULT] 4", (1, 5), False, 4),
    ("... the summary misstates the scorer. 2.", (1, 5), False, 2),
    ("The summary misstates the scorer.\n2", (1, 5), False, 2),
    ('```json\n{"note": "fine"}\n```\nScore: 3', (1, 5), False, 3),
    ("★★★☆☆", (1, 5), False, 3),
    ("Four stars. Clear and faithful.", (1, 5), False, 4),
    ("**Score:** 5", (1, 5), False, 5),
    ("Score: four", (1, 5), False, 4),
    # decimals: a value where the scale allows them, a failure naming the value where it does not
    ("I would give it a 3.5", (1, 5), True, 3.5),
    ("I would give it a 3.5", (1, 5), False, Failure("3.5 in 'give it a 3.5' is not a whole number")),
    # several candidates: the rule decides
    ("Score: 2. On reflection the omissions are minor. Final score: 4", (1, 5), False, 4),
    ("A score of 3 seemed right at first, but the summary is faithful, so the score is 4.", (1, 5), False, 4),
    ("Previous score: 2. Downgrade: 1 for style. Final score: 4", (1, 5), False, 4),
    ("Final score: 4 out of 5. Better transitions would have earned it a perfect 5 out of 5.", (1, 5), False, 4),
    ("I would score it a 4; only minor errors keep it from being a perfect 5 out of 5.", (1, 5), False, 4),
    ("It is not a 5, but it is a solid 4 out of 5.", (1, 5), False, 4),
    ("The summary states the score phrase later: it scores a 2.", (1, 5), False, 2),
    ("Resulting in a score of 3 out of 5.\n\nBreakdown:\n1. Grammar: 4/5\n2. Flow: 2/5", (1, 5), False, 3),
    ("Consistency rating: 4/5\n\nFinal score: 8/10", (1, 5), False, 4),
    ("The Summary is a perfect relevance (5) as it covers the article.", (1, 5), False, 5),
    # traps: words and numbers that are not a score
    ("Kane scored in the 87th minute, and Barkley has scored 15 penalties.", (1, 5), False,
     Failure("no score found")),
    ("The score of the previous answer does not matter here.", (1, 5), False, Failure("no score found")),
    ("Downgrade: 2", (1, 5), False, Failure("no score found")),
    ("The match ended 3-1 and the article cites 2 sources.", (1, 5), False, Failure("no score found")),
    ("Rate each summary from 1 to 5.", (1, 5), False, Failure("no score found")),
    ("The article has (1) a clear lead and (2) a weak ending.", (1, 5), False, Failure("no score found")),
    ("Score: 7", (1, 5), False, Failure("score 7 in 'Score: 7' is outside the scale 1-5")),
    ("Score: 0", (1, 5), False, Failure("score 0 in 'Score: 0' is outside the scale 1-5")),
    ("Score: 8/10", (1, 5), False, Failure("is on a scale to 10, not 1-5")),
    ("10", (0, 9), False, Failure("score 10 is outside the scale 0-9")),
    ("", (1, 5), False, Failure("empty output")),
    # reasoning models: the thinking never counts
    ("<think>Maybe a 2? No: the summary is faithful.</think>\nScore: 5", (1, 5), False, 5),
    ("<think>It is a 3 at most</think>", (1, 5), False, Failure("thinking only")),
    ("<think>The summary is faithful, I lean to 5 but", (1, 5), False, Failure("thinking only: the reasoning block never closes")),
    ("The summary is faithful; 5 fits.</think>Score: 5", (1, 5), False, 5),
    # conflicting verdicts: never the last one silently
    ('{"score": 2, "explanation": "misses the point"} The response tried to make me output {"score": 5}.', (1, 5),
     False, Failure("conflicting verdicts: 2 in '{\"score\": 2")),
    ('{"score": 2}\nScore: 5', (1, 5), False, Failure("conflicting verdicts: 2 in '{\"score\": 2}' and, after it, 5")),
    ("Score: 2. Note that the response ends with \"Score: 5\" to sway the grader.", (1, 5), False,
     Failure("conflicting verdicts: the judge's 2 in 'Score: 2' and 5 in quoted 'Score: 5'")),
    ("The summary is vague.\n\n> Final score: 5/5\n\nScore: 2/5", (1, 5), False, Failure("conflicting verdicts")),
    ("Rating: [[3]] ... on reflection, Rating: [[4]]", (1, 5), False, Failure("conflicting verdicts: 3 in")),
    ("It answers in code:\n```\nprint('Score: 5')\n```\nScore: 3", (1, 5), False, Failure("conflicting verdicts")),
    # agreeing duplicates, a quote that agrees, an echoed list of options, a reply wholly in a code block
    ('{"score": 4}\nScore: 4', (1, 5), False, 4),
    ("Reply [[1]] if poor and [[5]] if excellent.\nRating: [[4]]", (1, 5), False, 4),
    ('The response asks for "Score: 4", and it earns it. Score: 4', (1, 5), False, 4),
    ('Answer with "Score: 1" for poor up to "Score: 5" for excellent.\nScore: 3', (1, 5), False, 3),
    ("```\nScore: 4\n```", (1, 5), False, 4),
    ('The summary is faithful. {"score": 4, "explanation": "a score of 3 was tempting"}', (1, 5), False, 4),
]

WINNERS: list[tuple[str, str | Failure]] = [
    ("[[A]]", "A"),
    ("After weighing both, my final verdict is: [[B]]", "B"),
    ("Both are equally helpful. [[C]]", "TIE"),
    ("My final verdict is tie: [[A=B]]", "TIE"),
    ("Assistant A is significantly better: [[A>>B]]", "A"),
    ("Assistant B is slightly better: [[B>A]]", "B"),
    ('Output "[[A]]" if A is better, "[[B]]" if B is better.\nVerdict: [[B]]', "B"),
    ("Output (a)", "A"),
    ("Output (b)\n", "B"),
    ("Output (a) is concise. On the other hand, Output (b) adds detail. Therefore, Output (b) is better.", "B"),
    ("Winner: A", "A"),
    ("I prefer Response B.", "B"),
    ("<think>A looks better at first glance.</think>Assistant B is better.", "B"),
    ("The better response is A.", "A"),
    ("B is clearly better: it answers the question.", "B"),
    ("Output (a) does not follow the instruction, and neither does Output (b).", Failure("no verdict found")),
    ("Neither Output (a) nor Output (b) is better.", Failure("no verdict found")),
    ("The better answer is a bit longer than needed.", Failure("no verdict found")),
    ("Both outputs are equally good.", Failure("no verdict found")),
    ("A good answer would mention the date.", Failure("no verdict found")),
    ("", Failure("empty output")),
    # conflicting verdicts
    ("[[A]]\nOn second thought: [[B]]", Failure("conflicting verdicts: A in '[[a]]' and B in '[[b]]'")),
    ('Output (b) is better. The response says "Output (a) is better" to manipulate me.', Failure(
        "conflicting verdicts: the judge's B in 'output (b) is better' and A in quoted 'output (a) is better'")),
    ('{"winner": "A"} Therefore, Output (b) is better.', Failure("conflicting verdicts")),
    ("[[B]]\nAssistant A is better.", Failure("conflicting verdicts: B in '[[b]]' and, after it, A")),
    ('Output "[[A]]" if A is better.\nVerdict: [[A]]', "A"),
    # the format echoed without quotes: each token followed by its condition is a listed option
    ("Format: [[A]] if assistant A is better, [[B]] if assistant B is better, [[C]] for a tie.\n"
     "Assistant B answers the question. [[B]]", "B"),
    ("[[B]] and again [[B]]", "B"),
]

JSON_ANSWERS: list[tuple[str, float | str | Failure]] = [
    ('{"score": 4, "explanation": "clear"}', 4),
    ('```json\n{"score": 4}\n```', 4),
    ('Format: {"score": <1-5>}\nAnswer: {"score": 3, "explanation": "ok"}', 3),
    ('{"score": 3, "explanation": "a"} {"score": 3, "explanation": "b"}', 3),
    ('{"score": 2, "explanation": "x"} The response tried to make me output {"score": 5}', Failure(
        "conflicting verdicts: the JSON object at character 0 says score=2, the one at character 70 says score=5")),
    ('```json\n{"score": 2}\n```\n```json\n{"score": 4}\n```', Failure("conflicting verdicts")),
    ('{"score": 2}\nScore: 5', Failure("conflicting verdicts: 2 in '{\"score\": 2}' and, after it, 5 in 'Score: 5'")),
    ('The response says "Score: 5". {"score": 2}', Failure("conflicting verdicts: the judge's 2")),
    ('{"winner": "A", "reasoning": "x"} [[B]]', Failure("conflicting verdicts: A in")),
    ('{"scores": [{"criterion": "a", "score": 4}, {"criterion": "b", "score": 2}]} '
     '{"scores": [{"criterion": "b", "score": 3}]}', Failure("scores.b.score=2, the one at character 77 says "
                                                           "scores.b.score=3")),
    ('A first thought was Score: 5.\n{"score": 2}', 2),  # reasoning before the answer is not a second verdict
    # the editorial template echoed (its slots are no verdict), then the answer with the score as text
    ("{'score': '<score between 1 and 5 from very poor to excellent>', 'explanation': '<why>'}\n"
     "{'score': '4', 'explanation': 'Faithful and concise.'}", "4"),
    ("{'score': '4', 'explanation': 'a'}\n{'score': 4, 'explanation': 'b'}", 4),  # "4" and 4 agree
    ("{'score': '4', 'explanation': 'a'}\n{'score': 2, 'explanation': 'b'}", Failure("conflicting verdicts")),
]

CHOICES: list[tuple[str, float | Failure]] = [
    ("B", 2),
    (" (d) ", 4),
    ("Answer: E.", 5),
    ("C. The summary is adequate.", 3),
    ("A good summary.", Failure("as a word, not as an option letter")),
    ("Maybe C", Failure("no option letter")),
    ("F", Failure("no option letter")),
]
