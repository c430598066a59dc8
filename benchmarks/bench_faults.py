"""Benchmark: a 1,000-item judge run against a server injecting 30% faults, then a kill and resume.

    python -m benchmarks.bench_faults                  # from the repo root (about 1-3 minutes)
    python -m benchmarks.bench_faults --items 200 --fault-rate 0.5

Part 1 (Python API): every request meets a fault with probability --fault-rate, spread evenly over
the fault kinds of tests/support/fault_server.py (429 with/without Retry-After, 500/502/503,
timeouts, dropped connections, cut bodies, empty / truncated / malformed answers, refusals,
over-long answers, context-length rejections). Prints the server's ground truth (requests, faults
by kind), the engine's summary, final status counts, rows lost and duplicate rows, and how many
items end differently from what the documented retry/re-ask policy predicts (tests/reliability/oracle.py).

Part 2 (CLI): `judgelab run` over the same items with faults (timeouts excluded: the CLI's client
timeout is 120 s) is SIGKILLed halfway, then rerun with the same command; prints the rerun's wall
time until complete, the calls it made and the rows lost / duplicated in the final table.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import judgelab  # noqa: E402
from judgelab import judgments  # noqa: E402
from judgelab.engine.cache import RequestCache  # noqa: E402
from tests.reliability.oracle import expected_outcome  # noqa: E402
from tests.support.fault_server import (  # noqa: E402
    FAULT_KINDS,
    RETRYABLE_KINDS,
    FaultPlan,
    FaultServer,
    direct_score_answer,
    tag_key,
)

REPO = Path(__file__).resolve().parents[1]
CRITERIA = ("factual_accuracy", "instruction_following", "overall")
MODEL = "openai/bench-judge"


def items(n: int) -> list[dict[str, str]]:
    return [{"item_id": f"b{i}", "prompt": f"Question {i}: what is {i} + {i}?",
             "response": f"[item:b{i}] It is {2 * i}."} for i in range(n)]


def mix(rate: float, kinds: list[str]) -> dict[str, float]:
    return {k: rate / len(kinds) for k in kinds}


def rows_lost_and_duplicated(table, n_items: int) -> tuple[int, int]:
    keys = set(zip(table["item_id"], table["criterion"], strict=True))
    expected = {(f"b{i}", c) for i in range(n_items) for c in CRITERIA}
    duplicates = int(table.duplicated(subset=list(judgments.KEY_COLUMNS)).sum())
    return len(expected - keys), duplicates


def part_one(n: int, rate: float, concurrency: int, max_retries: int) -> None:
    kinds = [k for k in FAULT_KINDS if k != "unauthorized"]  # a 401 would stop the run by design
    plan = FaultPlan(mix=mix(rate, kinds), seed=2026)
    data = items(n)
    # the timeout is a wall-clock limit on the whole call: 4 s, so that 64 calls sharing a busy 2-core machine are
    # not cut short (the "timeout" fault answers after 8 s, far past it)
    with FaultServer(plan, answer=direct_score_answer, key_fn=tag_key(), slow_s=8.0) as srv:
        t0 = time.perf_counter()
        res = judgelab.run(data, "direct_score", MODEL, api_base=srv.base_url, cache=False, progress=False,
                           return_stats=True, concurrency=concurrency, max_retries=max_retries, retry_base_s=0.05,
                           timeout=4.0)
        wall = time.perf_counter() - t0
        truth = srv.kind_counts()
        sent = srv.count
    table, stats = res.table, res.stats
    expected = {it["item_id"]: expected_outcome(lambda k, i=it["item_id"]: plan.kind(i, k), max_retries, 1)
                for it in data}
    first_rows = table.drop_duplicates("item_id").set_index("item_id")
    log = srv.by_key()
    mismatched = sum(
        first_rows.at[i, "status"] != e.status or first_rows.at[i, "attempts"] != e.calls or len(log[i]) != e.calls
        for i, e in expected.items()
    )
    injected = sum(truth[k] for k in FAULT_KINDS)
    retryable = sum(truth[k] for k in RETRYABLE_KINDS)
    exhausted = sum(e.status == "api_error" and e.final_kind in RETRYABLE_KINDS for e in expected.values())
    lost, dups = rows_lost_and_duplicated(table, n)
    print(f"== part 1: {n} items, {rate:.0%} injected faults, concurrency {concurrency}, max_retries {max_retries}")
    print(f"requests sent (server count)      {sent}   engine api_calls {stats.api_calls}")
    print(f"faults injected                   {injected} ({injected / sent:.1%} of requests)")
    for kind in FAULT_KINDS:
        if truth[kind]:
            print(f"  {kind:<24} {truth[kind]}")
    print(f"retries (engine summary)          {stats.retries}   "
          f"ground truth: {retryable} retryable faults - {exhausted} exhausted = {retryable - exhausted}")
    print(f"re-asks                           {stats.reasks}")
    print(f"final status counts (rows)        {json.dumps(judgments.status_counts(table))}")
    print(f"items unlike the policy oracle    {mismatched}  (status, attempts or server requests differ)")
    print(f"rows lost                         {lost}")
    print(f"duplicate rows                    {dups}")
    print(f"summary line                      {json.dumps(stats.summary())}")
    print(f"wall time                         {wall:.1f} s")


def part_two(n: int, rate: float, concurrency: int) -> None:
    kinds = [k for k in FAULT_KINDS if k not in ("unauthorized", "timeout")]
    plan = FaultPlan(mix=mix(rate, kinds), seed=7)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp_dir, FaultServer(
        plan, answer=direct_score_answer, key_fn=tag_key(), delay_s=0.02
    ) as srv:
        tmp = Path(tmp_dir)
        data = tmp / "items.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in items(n)))
        cmd = [sys.executable, "-m", "judgelab.cli", "run", "--rubric", "direct_score", "--data", str(data),
               "--model", MODEL, "--api-base", srv.base_url, "--concurrency", str(concurrency),
               "--out", str(tmp / "out"), "--cache", str(tmp / "cache.sqlite")]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=REPO)
        while srv.count < n // 2 and proc.poll() is None:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        sent_before = srv.count
        with RequestCache(tmp / "cache.sqlite") as cache:
            cached = len(cache)
        t0 = time.perf_counter()
        rerun = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
        resume_s = time.perf_counter() - t0
        sent_after = srv.count - sent_before
        if rerun.returncode != 0:
            raise SystemExit(f"rerun failed: {rerun.stderr[-500:]}")
        summary = json.loads(rerun.stdout.strip().splitlines()[-1])
        table = judgments.load(tmp / "out" / "judgments.parquet")
    lost, dups = rows_lost_and_duplicated(table, n)
    print(f"== part 2: `judgelab run` on {n} items, {rate:.0%} faults (no timeouts), SIGKILL at half the requests")
    print(f"requests before the kill          {sent_before}   cached answers at the kill {cached}")
    print(f"rerun: requests sent              {sent_after}   api_calls {summary['api_calls']}   "
          f"cache_hits {summary['cache_hits']}   retries {summary['retries']}")
    print(f"rerun: time until complete        {resume_s:.1f} s (process start to exit, including imports)")
    print(f"final status counts (rows)        {json.dumps(judgments.status_counts(table))}")
    print(f"rows lost                         {lost}")
    print(f"duplicate rows                    {dups}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--max-retries", type=int, default=5)
    args = parser.parse_args()
    part_one(args.items, args.fault_rate, args.concurrency, args.max_retries)
    part_two(args.items, args.fault_rate, args.concurrency)


if __name__ == "__main__":
    main()
