"""The floor of a dry run (``judgelab.estimate``): CPU time per request of the work it cannot skip.

    python -m benchmarks.bench_estimate_floor --items 20000

Items as ``bench_scale``'s estimate step makes them (``make_items``: a prompt and a ~300-character response),
the built-in ``direct_score`` rubric, gpt-4o-mini. Printed, in CPU microseconds per request (process time,
so a loaded machine moves it less than wall time):

- rendering the request (``rubric.requests``: the two sandboxed Jinja templates, fences, the schema);
- counting its user message with litellm's count function of the model (and ns per token): the
  estimate must give litellm's exact count of every rendered prompt, and each prompt holds the item's text;
- :class:`judgelab.backends.pricing.CallCostEstimator` per request (the count above plus the shared parts);
- the whole ``judgelab.estimate`` per item, and what that is at 10^6 and 10^7 items.

The dry run renders and counts every request exactly (the number a user sees is litellm's count of the prompt
that would be sent), so its time per item cannot fall below rendering + counting one prompt.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.bench_scale import make_items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import judgelab
    from judgelab.backends.pricing import CallCostEstimator, _count_function
    from judgelab.rubrics import load_rubric

    items = make_items(args.items, args.seed)
    n = len(items)
    rubric = load_rubric("direct_score")
    records = items.to_dict(orient="records")
    judgelab.estimate(items.head(5), "direct_score", "gpt-4o-mini", cache=False)  # imports, tokenizer, compile

    c0 = time.process_time()
    requests = [rubric.requests(item)[0] for item in records]
    render = time.process_time() - c0

    count = _count_function("gpt-4o-mini")
    users = [r.messages[-1]["content"] for r in requests]
    c0 = time.process_time()
    tokens = sum(count(u) for u in users)
    counting = time.process_time() - c0

    cost_of = CallCostEstimator("gpt-4o-mini")
    c0 = time.process_time()
    for r in requests:
        cost_of(r.messages, r.max_tokens)
    estimator = time.process_time() - c0
    del requests, users

    c0 = time.process_time()
    judgelab.estimate(items, "direct_score", "gpt-4o-mini", cache=False)
    whole = time.process_time() - c0

    us = 1e6 / n
    print(f"{n:,} requests, {tokens / n:.0f} user-message tokens each (CPU per request):")
    print(f"  render                 {render * us:7.1f} us")
    print(f"  count user message     {counting * us:7.1f} us  ({counting / tokens * 1e9:.0f} ns per token)")
    print(f"  CallCostEstimator      {estimator * us:7.1f} us")
    print(f"  whole estimate         {whole * us:7.1f} us per item -> 10^6 items {whole / n * 1e6:.0f} s, "
          f"10^7 items {whole / n * 1e7:.0f} s")


if __name__ == "__main__":
    main()
