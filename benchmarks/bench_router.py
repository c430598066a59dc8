"""Throughput of one judge spread over 1, 2 and 4 local servers behind the Router (judgelab.backends.router).

Each server is a local OpenAI-compatible stub (tests/support/openai_stub.py) in its OWN process (so
its threads do not compete with the client for the GIL), answering after 100 ms with at most 8
requests in service at once (a server-side semaphore; more wait in its queue, like a GPU server's
batch slots). The Router judge caps each deployment at 8 in flight too, and the run's concurrency is
8 x servers. Ideal throughput is 80 answers/s per server; the table shows what one judgelab client
process actually reaches, and the scaling ratio each doubling of servers buys.

    python benchmarks/bench_router.py [--per-server 240] [--servers 1 2 4] [--delay 0.1] [--storage] [--litellm-caps]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DELAY_S = 0.1
SLOTS = 8


def _serve(port_queue: mp.Queue, stop: mp.Event, delay_s: float) -> None:  # type: ignore[type-arg]
    from tests.support.openai_stub import StubServer

    slots = threading.Semaphore(SLOTS)

    def reply(body: dict) -> str:
        with slots:  # at most SLOTS requests in service; the rest queue, as on a real server
            time.sleep(delay_s)
        return '{"score": 4}'

    with StubServer(reply) as server:
        port_queue.put(server.base_url)
        stop.wait()


def _measure(urls: list[str], n_requests: int, tag: str) -> dict[str, float]:
    import judgelab
    from judgelab.backends.router import router_judge
    from tests.support.toy_rubrics import ToyDirect

    judge = router_judge(urls, model="openai/bench-judge", max_parallel_requests=SLOTS)
    items = [{"item_id": f"{tag}-{i}", "answer": f"answer {tag} {i}"} for i in range(n_requests)]
    res = judgelab.run(items, ToyDirect(), judge, concurrency=SLOTS * len(urls), cache=False, progress=False,
                       return_stats=True)
    assert res.stats.ok == n_requests, res.stats.summary()
    spread = sorted(judge.calls_by_deployment.values())
    return {"wall_s": res.stats.wall_s, "cpu_s": res.stats.engine_cpu_s, "min_share": spread[0] / n_requests,
            "max_share": spread[-1] / n_requests}


def _measure_direct(url: str, n_requests: int) -> float:
    """Throughput of the same engine calling one server directly (no Router): the Router's overhead baseline."""
    import judgelab
    from tests.support.toy_rubrics import ToyDirect

    items = [{"item_id": f"direct-{i}", "answer": f"answer direct {i}"} for i in range(n_requests)]
    res = judgelab.run(items, ToyDirect(), "openai/bench-judge", api_base=url, api_key="sk-local-stub", concurrency=SLOTS,
                       cache=False, progress=False, return_stats=True)
    return n_requests / res.stats.wall_s


def _litellm_native_caps(urls: list[str], delay_s: float, n_requests: int = 200, slots: int = 4) -> None:
    """The same load on litellm's own Router caps (max_parallel_requests), which reject a call when full."""
    import asyncio

    from litellm import Router

    router = Router(model_list=[{"model_name": "pool", "litellm_params": {
        "model": "openai/bench-judge", "api_base": u, "api_key": "sk-local-stub", "max_parallel_requests": slots,
        "max_retries": 0}} for u in urls], num_retries=1, routing_strategy="least-busy", retry_after=0)

    async def go() -> tuple[int, float]:
        gate = asyncio.Semaphore(slots * len(urls))
        failed = 0

        async def one(i: int) -> None:
            nonlocal failed
            async with gate:
                try:
                    await router.acompletion(model="pool", messages=[{"role": "user", "content": f"q{i}"}])
                except Exception:  # noqa: BLE001 - counted: this is what the comparison measures
                    failed += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n_requests)))
        return failed, time.perf_counter() - t0

    failed, wall = asyncio.run(go())
    print(f"litellm's own per-deployment caps ({len(urls)} x {slots} slots, {slots * len(urls)} callers, "
          f"{n_requests} calls): {failed} failed, {wall:.1f} s (ideal {n_requests / (slots * len(urls)) * delay_s:.1f} s)")


def _random_outputs(rng: Any, n: int, words: int = 40) -> list[str]:
    """Judge-like outputs of ~250 characters from a 2,000-word random vocabulary (so they compress like text)."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(2000)]
    picks = rng.integers(0, len(vocab), (n, words))
    return ['{"reasoning": "' + " ".join(vocab[j] for j in row) + '", "winner": "A"}' for row in picks]


def _measure_storage(n_rows: int = 100_000, n_cache: int = 20_000) -> None:
    """What a million-judgment run costs on disk: request-cache speed and judgments Parquet size/speed."""
    import tempfile

    import pandas as pd

    from judgelab import judgments
    from judgelab.engine.cache import RequestCache

    with tempfile.TemporaryDirectory() as tmp:
        reply = {"text": '{"score": 4}', "finish_reason": "stop", "input_tokens": 50, "output_tokens": 10,
                 "cost_usd": None, "latency_s": 0.1, "system_fingerprint": "fp", "logprobs": None, "extra": {}}
        cache = RequestCache(Path(tmp) / "cache.sqlite")
        t0 = time.perf_counter()
        for i in range(n_cache):
            cache.put(f"key-{i}", reply)
        put_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(n_cache):
            cache.get(f"key-{i}")
        get_s = time.perf_counter() - t0
        cache.close()
        cache_bytes = (Path(tmp) / "cache.sqlite").stat().st_size
        rng = np.random.default_rng(0)
        table = judgments.make_table(pd.DataFrame({
            "run_id": "run-bench", "item_id": [f"item-{i}" for i in range(n_rows)], "rubric": "pairwise",
            "rubric_version": "1.0", "criterion": "overall", "judge": "openai/judge", "condition": "original",
            "repeat": 0, "temperature": 0.0, "status": "ok", "winner": rng.choice(["A", "B", "TIE"], n_rows),
            "confidence": rng.random(n_rows), "raw_output": _random_outputs(rng, n_rows),
            "call_id": [f"{i:016x}" for i in range(n_rows)], "input_tokens": 600, "output_tokens": 120,
            "created_at": pd.Timestamp.now(tz="UTC")}))
        path = Path(tmp) / "part.parquet"
        t0 = time.perf_counter()
        judgments.save(table, path)
        save_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        judgments.load(path)
        load_s = time.perf_counter() - t0
        size = path.stat().st_size
    print(f"request cache (SQLite): {n_cache / put_s:,.0f} puts/s, {n_cache / get_s:,.0f} gets/s, "
          f"{cache_bytes / n_cache:,.0f} bytes per cached reply")
    print(f"judgments Parquet ({n_rows:,} rows, ~250-char raw outputs): {size / n_rows:,.0f} bytes/row, "
          f"save+validate {n_rows / save_s:,.0f} rows/s, load+validate {n_rows / load_s:,.0f} rows/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-server", type=int, default=240, help="requests per server in each measurement")
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--delay", type=float, default=DELAY_S, help="seconds each server takes per answer")
    parser.add_argument("--storage", action="store_true", help="also measure the request cache and Parquet output")
    parser.add_argument("--litellm-caps", action="store_true",
                        help="also run the same load on litellm's own (rejecting) per-deployment caps")
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    ports: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_serve, args=(ports, stop, args.delay), daemon=True) for _ in range(max(args.servers))]
    for p in procs:
        p.start()
    urls = [ports.get(timeout=120) for _ in procs]
    try:
        _measure(urls[:1], 40, "warmup")  # litellm's lazy imports and client set-up are not throughput
        if args.litellm_caps:
            _litellm_native_caps(urls[:2], args.delay)
        load_before = os.getloadavg()[0]
        direct = _measure_direct(urls[0], args.per_server)
        rows = []
        for n in args.servers:
            m = _measure(urls[:n], args.per_server * n, f"s{n}")
            total = args.per_server * n
            rows.append({"servers": n, "requests": total, **m, "throughput": total / m["wall_s"],
                         "ideal": n * SLOTS / args.delay})
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=10)
    print(f"{os.cpu_count()} CPU cores, load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after; "
          f"each server: {args.delay * 1000:.0f} ms per answer, {SLOTS} slots")
    print(f"1 server without the Router (engine -> server directly): {direct:.1f} req/s")
    print(f"{'servers':>7} {'requests':>8} {'wall_s':>7} {'req/s':>7} {'ideal':>6} {'of ideal':>8} "
          f"{'x vs 1':>6} {'x per doubling':>14} {'client CPU ms/req':>17} {'load share min-max':>18}")
    prev = None
    for r in rows:
        vs_one = r["throughput"] / rows[0]["throughput"]
        step = "" if prev is None else f"{r['throughput'] / prev['throughput'] / (r['servers'] / prev['servers']):.2f}"
        print(f"{r['servers']:>7} {r['requests']:>8} {r['wall_s']:>7.2f} {r['throughput']:>7.1f} {r['ideal']:>6.0f} "
              f"{r['throughput'] / r['ideal']:>8.0%} {vs_one:>6.2f} {step:>14} "
              f"{1000 * r['cpu_s'] / r['requests']:>17.1f} {r['min_share']:>8.0%}-{r['max_share']:.0%}")
        prev = r
    print("x per doubling: throughput gained per doubling of servers, divided by 2 (1.00 = perfect scaling)")
    if args.storage:
        _measure_storage()


if __name__ == "__main__":
    main()
