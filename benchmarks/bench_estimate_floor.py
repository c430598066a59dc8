"""The floor of a dry run (``judgelab.estimate``): CPU time per request of the work it cannot skip, before and after.

    python -m benchmarks.bench_estimate_floor --items 20000

Items as ``bench_scale``'s estimate step makes them (``make_items``: a prompt and a ~300-character response),
the built-in ``direct_score`` rubric, gpt-4o-mini. Printed, in CPU microseconds per request (process time,
so a loaded machine moves it less than wall time), each for the reference path ("before": every template
rendered the full sandboxed way, every text counted by litellm's count function) and the path a dry run takes
("after": :func:`judgelab.rubrics.sandbox.splice` and :class:`judgelab.backends.pricing.SegmentCounter`):

- rendering the request (``rubric.requests``: the sandboxed templates, fences, the schema);
- counting its user message (and ns per token of the message): the estimate must give litellm's exact count of
  every rendered prompt, and each prompt holds the item's text;
- :class:`judgelab.backends.pricing.CallCostEstimator` per request (the count above plus the shared parts);
- the whole ``judgelab.estimate`` per item, and what that is at 10^6 and 10^7 items.

The two paths give the same prompts and numbers (checked here on every request, and by
tests/engine/test_estimate_render_fast.py). The reference path is had by switching the two shortcuts off in this
process (``splice`` returning None, ``SegmentCounter.for_model`` returning None): the code the dry run ran before.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Iterator
from typing import Any

from benchmarks.bench_scale import make_items


@contextlib.contextmanager
def _reference_path() -> Iterator[None]:
    """The dry run without its two shortcuts: full sandboxed renders, litellm's own count function."""
    from judgelab.backends.pricing import SegmentCounter
    from judgelab.rubrics import sandbox

    splice, for_model = sandbox.splice, SegmentCounter.for_model
    sandbox.splice = lambda *args, **kwargs: None  # type: ignore[assignment]
    SegmentCounter.for_model = classmethod(lambda cls, *args: None)  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        sandbox.splice, SegmentCounter.for_model = splice, for_model  # type: ignore[method-assign]


def _measure(items: Any, records: list[dict[str, Any]]) -> dict[str, Any]:
    import judgelab
    from judgelab.backends.pricing import CallCostEstimator, _count_function
    from judgelab.rubrics import load_rubric

    rubric = load_rubric("direct_score")
    out: dict[str, Any] = {}
    c0 = time.process_time()
    requests = [rubric.requests(item)[0] for item in records]
    out["render"] = time.process_time() - c0
    count = _count_function("gpt-4o-mini")
    users = [r.messages[-1]["content"] for r in requests]
    c0 = time.process_time()
    out["counts"] = [count(u) for u in users]
    out["count"] = time.process_time() - c0
    cost_of = CallCostEstimator("gpt-4o-mini")
    c0 = time.process_time()
    out["costs"] = [cost_of(r.messages, r.max_tokens) for r in requests]
    out["estimator"] = time.process_time() - c0
    out["messages"] = [r.messages for r in requests]
    del requests, users
    c0 = time.process_time()
    out["estimate"] = judgelab.estimate(items, "direct_score", "gpt-4o-mini", cache=False)
    out["whole"] = time.process_time() - c0
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import judgelab

    items = make_items(args.items, args.seed)
    n = len(items)
    records = items.to_dict(orient="records")
    judgelab.estimate(items.head(5), "direct_score", "gpt-4o-mini", cache=False)  # imports, tokenizer, compile
    with _reference_path():
        before = _measure(items, records)
    after = _measure(items, records)
    for key in ("messages", "counts", "costs", "estimate"):
        assert before[key] == after[key], f"the two paths differ in {key}"
    tokens = sum(after["counts"])
    us = 1e6 / n
    print(f"{n:,} requests, {tokens / n:.0f} user-message tokens each (CPU per request; the same prompts, counts, "
          "costs and estimate on both paths):")
    print(f"  {'':22} {'before':>9} {'after':>9}")
    for label, key in (("render", "render"), ("count user message", "count"), ("CallCostEstimator", "estimator"),
                       ("whole estimate", "whole")):
        print(f"  {label:22} {before[key] * us:7.1f} us {after[key] * us:7.1f} us")
    print(f"  count per token        {before['count'] / tokens * 1e9:7.0f} ns {after['count'] / tokens * 1e9:7.0f} ns")
    for name, result in (("before", before), ("after", after)):
        whole = result["whole"]
        print(f"  {name}: 10^6 items {whole / n * 1e6:.0f} s, 10^7 items {whole / n * 1e7:.0f} s of CPU")


if __name__ == "__main__":
    main()
