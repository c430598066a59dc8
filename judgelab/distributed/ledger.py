"""One budget and one progress count for a run spread over many workers (held by one Ray actor).

Every request of the run has a global order (its place in the single-process table) and, when a budget
is set, an estimate (the upper bound the engine reserves before calling: the prompt plus the full
``max_tokens`` output). A worker reserves before each call and settles after it, like
:class:`judgelab.engine.budget.BudgetGuard`, and reports each request finished.

Reservations are decided in global order, so the calls made (and the ``skipped_budget`` rows) are
those of a single process judging the requests one after the other:

* a request is granted at once when its estimate fits in the room left after what is spent, what is
  reserved and the estimates *held* for every earlier request that has not asked yet;
* a request that does not fit waits while an earlier request is unfinished (it may free room: a cache
  hit, or an actual cost below its estimate); once every earlier request is finished, it is granted
  if it fits, else refused, and every later request is refused too.

Holding room for the earlier requests is what makes the result independent of which worker asks
first: a later request can never take the room an earlier one would have had. The equality is exact
when each request makes one reservation and actual costs do not exceed their estimates (the engine's
estimates are upper bounds); a re-ask of an unparseable answer makes a second reservation, which no
earlier hold covered, so with re-asks the cut may fall one request earlier than a single process's.
Nothing is ever granted past ``max_cost_usd``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

__all__ = ["Fenwick", "Ledger"]


class Fenwick:
    """Prefix sums over a fixed-length array with point updates, both in O(log n)."""

    def __init__(self, values: Sequence[float]) -> None:
        self.n = len(values)
        self.tree = [0.0] * (self.n + 1)
        self.values = [0.0] * self.n
        for i, v in enumerate(values):
            if v:
                self.add(i, float(v))

    def add(self, i: int, delta: float) -> None:
        self.values[i] += delta
        j = i + 1
        while j <= self.n:
            self.tree[j] += delta
            j += j & -j

    def set(self, i: int, value: float) -> None:
        self.add(i, value - self.values[i])

    def before(self, i: int) -> float:
        """The sum of the values at positions ``< i``."""
        total, j = 0.0, i
        while j > 0:
            total += self.tree[j]
            j -= j & -j
        return total


class Ledger:
    """The run's budget and finished-request count; ``estimates[order]`` is each request's reservation
    (all zero without a budget), ``done`` the orders already finished (written by an earlier run)."""

    def __init__(self, max_cost_usd: float | None = None, estimates: Sequence[float] = (),
                 done: Sequence[int] = ()) -> None:
        self.reset(max_cost_usd, estimates, done)

    def reset(self, max_cost_usd: float | None, estimates: Sequence[float], done: Sequence[int] = ()) -> bool:
        """Start the ledger of a new run (the actor serves the runs of one driver one after the other)."""
        self.max_cost_usd = max_cost_usd
        n = len(estimates)
        finished = [False] * n
        for order in done:
            finished[order] = True
        self.finished = finished
        self.held = Fenwick([0.0 if finished[i] else float(e) for i, e in enumerate(estimates)])
        self.unfinished = Fenwick([0.0 if finished[i] else 1.0 for i in range(n)])
        self.estimates = [float(e) for e in estimates]
        self.spent = 0.0
        self.reserved = 0.0
        self.refused_from: int | None = None  # every request from this order on is refused
        self.calls = 0  # reservations granted
        self.done_count = sum(finished)
        self._changed: asyncio.Condition | None = None
        return True

    # -- decisions (pure: the actor awaits around them) ----------------------------------------------
    def decide(self, order: int, estimate: float) -> bool | None:
        """True (granted, reserved), False (refused) or None (wait for an earlier request to finish)."""
        if self.max_cost_usd is None:
            self.calls += 1
            return True
        if math.isnan(estimate):
            return False
        if self.refused_from is not None and order >= self.refused_from:
            return False
        room = self.max_cost_usd - self.spent - self.reserved - self.held.before(order)
        if estimate <= room:
            self.reserved += estimate
            self.held.set(order, 0.0)  # its room is now a reservation
            self.calls += 1
            return True
        if self.unfinished.before(order) > 0:
            return None
        self.refused_from = order if self.refused_from is None else min(self.refused_from, order)
        return False

    def settle_now(self, estimate: float, actual: float) -> None:
        if self.max_cost_usd is None:
            return
        self.reserved -= estimate
        self.spent += estimate if math.isnan(actual) else actual

    def finish_now(self, order: int) -> None:
        if self.finished[order]:
            return
        self.finished[order] = True
        self.done_count += 1
        self.held.set(order, 0.0)
        self.unfinished.set(order, 0.0)

    # -- the actor's methods (async: a waiting reservation does not block the others) -----------------
    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def reserve(self, order: int, estimate: float) -> bool:
        changed = self._condition()
        async with changed:
            while True:
                verdict = self.decide(order, estimate)
                if verdict is not None:
                    return verdict
                await changed.wait()

    async def settle(self, estimate: float, actual: float) -> None:
        changed = self._condition()
        async with changed:
            self.settle_now(estimate, actual)
            changed.notify_all()

    async def finish(self, orders: list[int]) -> None:
        changed = self._condition()
        async with changed:
            for order in orders:
                self.finish_now(order)
            changed.notify_all()

    async def progress(self) -> tuple[int, int, float]:
        """(finished requests, calls granted, spent USD)."""
        return self.done_count, self.calls, self.spent
