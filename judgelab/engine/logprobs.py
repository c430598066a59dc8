"""G-Eval-style logprob-weighted scores from a completion's token logprobs.

The expected score is sum(p(v) * v) / sum(p(v)) over the valid score values v found among
the top alternatives of the token that carries the score; the probability mass that fell on
valid values (sum p(v)) is recorded so that a low-mass estimate can be recognised.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["LogprobScore", "expected_score", "score_probabilities"]

_SCORE_KEY = re.compile(r'"score"\s*:\s*"?(\d+)')


@dataclass(frozen=True)
class LogprobScore:
    expected: float | None
    valid_mass: float | None
    note: str  # how the token was found, or why there is no estimate


def _token_at(tokens: list[dict[str, Any]], char_pos: int) -> int | None:
    pos = 0
    for i, tok in enumerate(tokens):
        text = tok.get("token") or ""
        if pos <= char_pos < pos + len(text):
            return i
        pos += len(text)
    return None


def score_probabilities(tokens: list[dict[str, Any]] | None,
                        scale: tuple[int, int]) -> tuple[dict[int, float] | None, str]:
    """(probability of each valid score value at the score token, how that token was found).

    The score token is the first digit after the last JSON ``"score":`` key when there is one, else
    the LAST token that is a valid score value (a rationale often mentions numbers before the score).
    Probabilities are the exp(logprob) of the valid values among that token's top alternatives (not
    renormalised): None when no score token was found, an empty dict when none of its alternatives is
    a valid value; the second element then says why.
    """
    if not tokens:
        return None, "no logprobs returned by the provider"
    lo, hi = scale
    valid = {str(v): v for v in range(lo, hi + 1)}
    text = "".join(t.get("token") or "" for t in tokens)
    index: int | None = None
    how = ""
    matches = list(_SCORE_KEY.finditer(text))
    if matches:
        index = _token_at(tokens, matches[-1].start(1))
        how = 'token after the last "score" key'
    if index is None:
        for i in range(len(tokens) - 1, -1, -1):
            if (tokens[i].get("token") or "").strip() in valid:
                index, how = i, "last valid score token"
                break
    if index is None:
        return None, "no score token found in the completion"
    alternatives = tokens[index].get("top_logprobs") or [
        {"token": tokens[index].get("token"), "logprob": tokens[index].get("logprob")}
    ]
    mass: dict[int, float] = {}
    for alt in alternatives:
        tok = (alt.get("token") or "").strip()
        lp = alt.get("logprob")
        if tok in valid and lp is not None and math.isfinite(lp):
            mass[valid[tok]] = mass.get(valid[tok], 0.0) + math.exp(lp)
    if not mass:
        return {}, f"{how}: no valid score value among the top logprobs"
    return mass, how


def expected_score(tokens: list[dict[str, Any]] | None, scale: tuple[int, int]) -> LogprobScore:
    """Expected score sum(p(v) v) / sum(p(v)) over the valid values at the score token (see
    :func:`score_probabilities`), with the valid mass recorded."""
    mass, how = score_probabilities(tokens, scale)
    if mass is None:
        return LogprobScore(None, None, how)
    total = sum(mass.values())
    if total <= 0:
        return LogprobScore(None, 0.0, how)
    expected = sum(v * p for v, p in mass.items()) / total
    return LogprobScore(expected, min(total, 1.0), how)
