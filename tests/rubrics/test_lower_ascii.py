"""The score reader's lowering fast path for ASCII text (issue 28: it was the largest cost of from_frame's parse)."""

from __future__ import annotations

import numpy as np


def test_ascii_lowering_equals_per_character_lowering() -> None:
    """Invariant: the score reader's lowering of ASCII text (str.lower) equals its per-character rule (each
    character lowered unless it lowers to several), on seeded random ASCII strings of every printable byte."""
    from judgelab.rubrics.verdict_text import _lower

    rng = np.random.default_rng(8)
    for _ in range(300):
        text = "".join(chr(c) for c in rng.integers(0, 128, size=int(rng.integers(0, 80))))
        assert _lower(text) == "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    assert _lower("İΣA") == "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in "İΣA")
