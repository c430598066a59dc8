"""What one Ray actor does: judge blocks of planned requests with judgelab's own engine.

The actor holds one engine (its own concurrency, retries, re-asks, health) and a request cache on its
own machine; the run's budget and progress live in the ledger actor (:mod:`judgelab.distributed.ledger`),
reached through :class:`RemoteBudget`. The API key never travels in a task argument: the actor reads it
from its own environment (``api_key_env``), because Ray records task arguments and ``runtime_env``
variables (object spilling, the GCS, the dashboard) where a key must not go.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.engine.cache import RequestCache
from judgelab.engine.config import RunConfig
from judgelab.engine.rows import Job
from judgelab.errors import ConfigError
from judgelab.rubrics.base import Rubric

__all__ = ["BlockJudge", "BlockResult", "RemoteBudget"]

_ORDER: contextvars.ContextVar[int] = contextvars.ContextVar("judgelab_request_order")


class RemoteBudget:
    """The engine's budget guard, held by the ledger actor: a reservation is awaited (it may wait for an
    earlier request of another worker), a settlement is sent without waiting."""

    def __init__(self, ledger: Any, max_cost_usd: float | None) -> None:
        self.ledger, self.max_cost_usd = ledger, max_cost_usd

    def try_reserve(self, estimate: float) -> Any:
        return self.ledger.reserve.remote(_ORDER.get(), estimate)  # an ObjectRef: the engine awaits it

    def settle(self, estimate: float, actual: float) -> None:
        if self.max_cost_usd is not None:
            self.ledger.settle.remote(estimate, actual)


class _RecordingCache(RequestCache):
    """The worker's cache, remembering the keys it stored (sent back to be merged into the run's cache)."""

    stored: list[str]

    def put(self, key: str, value: Any, token: str | None = None) -> None:
        super().put(key, value, token)
        self.stored.append(key)


@dataclasses.dataclass
class BlockResult:
    index: int
    table: pd.DataFrame
    entries: dict[str, Any]  # key -> cached answer, for every answer this block paid for
    counters: dict[str, int]
    faults: dict[str, int]
    aborted: str | None


_COUNTERS = ("api_calls", "cache_hits", "retries", "reasks", "shared_waits")


class BlockJudge:
    """The body of one worker actor (wrapped with ``ray.remote`` by the executor; an async actor, so the
    engine's calls and the budget's replies share Ray's event loop)."""

    def __init__(self) -> None:
        self.cache: _RecordingCache | None = None

    def configure(self, rubric: Rubric, model: str, caller: Any, config: RunConfig, cache_path: str | bool | None,
                  api_key_env: str | None, ledger: Any) -> bool:
        """Set up the engine of one run (an actor serves the runs of one driver one after the other: it starts
        once, since starting a worker process and importing litellm takes seconds)."""
        from judgelab.engine.runner import engine_for

        self.close()

        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ConfigError(f"the environment variable {api_key_env} is not set on this Ray worker; set it in "
                                  "the environment every node starts with (ray start inherits it)")
            config = dataclasses.replace(config, api_key=key)
        self.cache: _RecordingCache | None = None
        if cache_path is not False:
            self.cache = _RecordingCache(None if cache_path in (None, True) else Path(str(cache_path)))
            self.cache.stored = []
        self.ledger = ledger
        self.engine = engine_for(pd.DataFrame({"item_id": []}), rubric, model, config, self.cache, caller,
                                 budget=RemoteBudget(ledger, config.max_cost_usd))
        self.concurrency = config.concurrency
        if config.max_cost_usd is not None:  # a price registered on the driver only (litellm.register_model) is
            from judgelab.backends.pricing import UnknownPriceError, estimate_call_cost  # unknown here

            probe = estimate_call_cost(model, [{"role": "user", "content": "price probe"}], 1)[1]
            if math.isnan(probe):
                raise UnknownPriceError(f"max_cost_usd is set but litellm on the Ray workers knows no price for model "
                                        f"{model!r} (litellm.register_model on the driver does not reach them); put "
                                        "it in the price map the workers load, or run without a budget")
        return True

    async def judge(self, index: int, jobs: list[Job]) -> BlockResult:
        from judgelab.engine.runner import RunStats

        engine = self.engine
        engine.stats, engine.faults = RunStats(), Counter()
        if engine.config.retry_unscored:
            engine.stats.retried_unscored = 0
        if self.cache is not None:
            self.cache.stored = []
        rows = await self._judge(jobs)
        rows.sort(key=lambda r: r["_order"])
        for r in rows:
            r.pop("_order")
        entries: dict[str, Any] = {}
        if self.cache is not None:
            for key in dict.fromkeys(self.cache.stored):
                value = self.cache.get(key)
                if value is not None:
                    entries[key] = value
        counters = {name: getattr(engine.stats, name) for name in _COUNTERS}
        if engine.stats.retried_unscored is not None:
            counters["retried_unscored"] = engine.stats.retried_unscored
        return BlockResult(index, judgments.make_table(rows), entries, counters, dict(engine.faults),
                           engine.abort_reason)

    async def _judge(self, jobs: list[Job]) -> list[dict[str, Any]]:
        queue = list(reversed(jobs))
        rows: list[dict[str, Any]] = []
        # with a budget, an earlier request's end may free room another worker waits for: report each at once;
        # without one, finishes only feed the progress bar: report them in batches (a Ray call costs CPU)
        batch = 1 if self.engine.config.max_cost_usd is not None else 32
        finished: list[int] = []

        async def worker() -> None:
            while queue:
                job = queue.pop()
                token = _ORDER.set(job.order)
                try:
                    done = await self.engine.process(job)
                finally:
                    _ORDER.reset(token)
                for row in done:
                    row["_order"] = job.order
                rows.extend(done)
                finished.append(job.order)
                if len(finished) >= batch:
                    self.ledger.finish.remote(finished[:])
                    finished.clear()
                await asyncio.sleep(0)  # cache hits never wait: let the calls in flight read their replies

        await asyncio.gather(*(worker() for _ in range(max(1, min(self.concurrency, len(jobs))))))
        if finished:
            self.ledger.finish.remote(finished)
        return rows

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
            self.cache = None
