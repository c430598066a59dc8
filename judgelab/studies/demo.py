"""`judgelab demo`: the built-in direct_score example items judged by the embedded offline judge.

The embedded judge (SmolLM2-135M) is real but tiny: the demo shows the plumbing end to end
(prompt, call, parse, unscored rows with reasons, the judgments table), not judge quality.
"""

from __future__ import annotations

from judgelab.engine.runner import RunResult, run
from judgelab.rubrics import example_items, load_rubric

__all__ = ["DEMO_MODEL", "DEMO_RUBRIC", "run_demo"]

DEMO_RUBRIC = "direct_score"
DEMO_MODEL = "local/smollm2"


def run_demo(model: str = DEMO_MODEL, cache: bool | str = True, progress: bool = True) -> RunResult:
    """Judge the direct_score example items with ``model``; returns the table and run statistics."""
    rubric = load_rubric(DEMO_RUBRIC)
    result = run(example_items(DEMO_RUBRIC), rubric, model, cache=cache, progress=progress, return_stats=True,
                 concurrency=1, max_tokens=384)
    assert isinstance(result, RunResult)
    return result
