"""Requests per second of one judge run on 1, 2 and 4 Ray actors (judgelab.distributed.RayExecutor), against 4
local stub servers of fixed latency, and the Ray path's overhead against a plain run.

Each server is the OpenAI-compatible stub (tests/support/openai_stub.py) in its OWN process, answering after
``--delay`` seconds with at most 8 requests in service (more wait in its queue). Every actor (and the plain run)
reaches the 4 servers through a Router judge over them (built lazily inside each process: a Router holds locks,
which do not pickle) with ``--concurrency`` calls in flight. The cluster is a local Ray started here on
127.0.0.1; the actors are started by a warm-up run first, so the timings are of judging, not of starting
processes. Printed: requests/s per actor count, the scaling ratios, and RayExecutor(workers=1) against a plain
``judgelab.run`` with the same concurrency (the Ray path's overhead), all from one run, with the machine's load.

    python benchmarks/bench_ray.py [--requests 600] [--delay 0.05] [--concurrency 16] [--workers 1 2 4]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)  # the actors

SLOTS = 8
SERVERS = 4


def _serve(port_queue: mp.Queue, stop: Any, delay_s: float) -> None:  # type: ignore[type-arg]
    from tests.support.openai_stub import StubServer

    slots = threading.Semaphore(SLOTS)

    def reply(body: dict) -> str:
        with slots:
            time.sleep(delay_s)
        return '{"score": 4}'

    with StubServer(reply) as server:
        port_queue.put(server.base_url)
        stop.wait()


class LazyRouter:
    """A judge object over several servers that pickles: the Router is built in the process that calls."""

    model_name = "openai/bench-judge"

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self._router: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"urls": self.urls, "_router": None}

    async def acall(self, model: str, messages: list[dict[str, str]], **kw: Any) -> Any:
        if self._router is None:
            from judgelab.backends.router import router_judge

            self._router = router_judge(self.urls, model=self.model_name, max_parallel_requests=SLOTS)
        return await self._router.acall(model, messages, **kw)


def _items(n: int, tag: str) -> list[dict[str, str]]:
    return [{"item_id": f"{tag}-{i}", "answer": f"answer {tag} {i}"} for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()

    ctx = mp.get_context("spawn")
    stop, queue = ctx.Event(), ctx.Queue()
    servers = [ctx.Process(target=_serve, args=(queue, stop, args.delay), daemon=True) for _ in range(SERVERS)]
    for p in servers:
        p.start()
    urls = [queue.get(timeout=60) for _ in servers]

    import ray

    import judgelab
    from judgelab.distributed import RayExecutor
    from tests.support.toy_rubrics import ToyDirect

    t0 = time.perf_counter()
    ray.init(num_cpus=max(args.workers), include_dashboard=False, object_store_memory=200 * 1024 * 1024,
             _node_ip_address="127.0.0.1", log_to_driver=False)
    print(f"ray.init: {time.perf_counter() - t0:.1f} s; load average before: {os.getloadavg()}; "
          f"{os.cpu_count()} CPUs")
    judge = LazyRouter(urls)
    rubric = ToyDirect()
    n = args.requests
    block = max(1, n // (4 * max(args.workers)))  # several blocks per actor, so none waits on the last one

    def distributed(workers: int, tag: str) -> float:
        with tempfile.TemporaryDirectory() as out:
            res = judgelab.run(_items(n, tag), rubric, judge, concurrency=args.concurrency, cache=False,
                               progress=False, return_stats=True,
                               executor=RayExecutor(workers=workers, block_size=block, out=out))
        assert res.stats.ok == n, res.stats.summary()
        return n / res.stats.wall_s

    distributed(max(args.workers), "warm")  # starts the actors (each imports litellm once); not timed
    plain = judgelab.run(_items(n, "plain"), rubric, judge, concurrency=args.concurrency, cache=False,
                         progress=False, return_stats=True)
    assert plain.stats.ok == n
    plain_rate = n / plain.stats.wall_s
    rates = {w: distributed(w, f"w{w}") for w in args.workers}
    ray.shutdown()
    stop.set()
    for p in servers:
        p.join(timeout=5)

    ideal = SERVERS * SLOTS / args.delay
    print(f"{n} requests, {SERVERS} servers x {SLOTS} slots at {args.delay * 1000:.0f} ms (ideal {ideal:.0f}/s), "
          f"concurrency {args.concurrency} per actor, blocks of {block}")
    print(f"plain judgelab.run (one process):  {plain_rate:7.1f} requests/s")
    for w, rate in rates.items():
        print(f"RayExecutor, {w} actor(s):          {rate:7.1f} requests/s   x{rate / rates[args.workers[0]]:.2f} "
              f"of {args.workers[0]} actor(s)")
    if 1 in rates:
        print(f"Ray path at 1 actor / plain run:    {rates[1] / plain_rate:.2f}  (overhead "
              f"{(plain_rate / rates[1] - 1) * 100:+.0f}% time per request)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
