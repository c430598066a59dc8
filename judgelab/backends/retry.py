"""Retries with exponential backoff and full jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from judgelab.backends.call import ModelCallError, ModelReply

__all__ = ["call_with_retries", "CallOutcome", "RetryPolicy"]


@dataclass
class RetryPolicy:
    max_retries: int = 5  # retries after the first attempt
    base_s: float = 0.5
    cap_s: float = 30.0
    max_retry_after_s: float = 120.0  # a longer Retry-After is clipped to this

    def delay(self, retry_number: int, retry_after: float | None, rng: random.Random) -> float:
        backoff = rng.uniform(0, min(self.cap_s, self.base_s * 2**retry_number))
        if retry_after is not None:
            return max(min(retry_after, self.max_retry_after_s), backoff)
        return backoff


@dataclass
class CallOutcome:
    reply: ModelReply | None
    attempts: int
    error: ModelCallError | None = None
    faults: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # why each failed attempt failed, in order


async def call_with_retries(
    call: Callable[[], Awaitable[ModelReply]],
    policy: RetryPolicy,
    rng: random.Random,
    on_retry: Callable[[ModelCallError], None] | None = None,
) -> CallOutcome:
    """Run ``call`` until it succeeds, fails in a non-retryable way, or retries run out."""
    faults: Counter[str] = Counter()
    failures: list[str] = []
    attempt = 0
    while True:
        attempt += 1
        try:
            reply = await call()
            return CallOutcome(reply, attempt, None, faults, failures)
        except ModelCallError as err:
            faults[err.kind] += 1
            failures.append(str(err))
            if err.kind != "retryable" or attempt > policy.max_retries:
                return CallOutcome(None, attempt, err, faults, failures)
            if on_retry is not None:
                on_retry(err)
            await asyncio.sleep(policy.delay(attempt - 1, err.retry_after, rng))
