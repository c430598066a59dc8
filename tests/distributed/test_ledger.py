"""The distributed budget (judgelab.distributed.ledger) against a single process judging one request after the
other, over generated runs and generated interleavings of workers. No Ray here: the ledger is plain Python
(the actor only hosts it), so thousands of interleavings run in a second."""

from __future__ import annotations

import asyncio
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.distributed.ledger import Fenwick, Ledger


def _serial(cap: float, estimates: list[float], actuals: list[float], calls: list[bool]) -> list[bool]:
    """What BudgetGuard gives one process judging the requests in order: granted or not, per request that calls."""
    spent, exhausted, out = 0.0, False, []
    for est, act, calls_model in zip(estimates, actuals, calls, strict=True):
        if not calls_model:
            out.append(False)
            continue
        ok = not exhausted and spent + est <= cap
        exhausted = exhausted or not ok
        spent += act if ok else 0.0
        out.append(ok)
    return out


async def _distributed(cap: float, estimates: list[float], actuals: list[float], calls: list[bool], workers: int,
                       rng: random.Random) -> tuple[list[bool], float]:
    """Blocks of requests handed to ``workers`` tasks that interleave at random (random sleeps between steps)."""
    ledger = Ledger(cap, estimates)
    n = len(estimates)
    size = max(1, rng.randint(1, 5))
    blocks = [list(range(i, min(n, i + size))) for i in range(0, n, size)]
    granted = [False] * n
    peak = 0.0

    async def pause() -> None:
        await asyncio.sleep(rng.choice([0, 0, 0.0001, 0.0005]))

    async def worker() -> None:
        nonlocal peak
        while blocks:
            block = blocks.pop(0)
            lanes = rng.randint(1, 3)
            queue = list(block)

            async def lane(queue: list[int] = queue) -> None:
                nonlocal peak
                while queue:
                    order = queue.pop(0)
                    await pause()
                    if calls[order]:
                        granted[order] = await ledger.reserve(order, estimates[order])
                        peak = max(peak, ledger.spent + ledger.reserved)
                        await pause()
                        if granted[order]:
                            await ledger.settle(estimates[order], actuals[order])
                    await ledger.finish([order])

            await asyncio.gather(*(lane() for _ in range(lanes)))

    await asyncio.gather(*(worker() for _ in range(workers)))
    return granted, peak


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 3.0), st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=40),
       st.floats(0.0, 30.0), st.integers(1, 4), st.integers(0, 2**31))
def test_distributed_grants_are_the_serial_grants(requests, cap, workers, seed):
    """Invariant: for any estimates, actual costs not above them (actual = fraction x estimate), cached requests
    (no call), budget, number of workers, block sizes and interleaving, the ledger grants exactly the calls a
    single process judging the requests in order grants, and spent + reserved never exceeds the cap."""
    estimates = [e for e, _, _ in requests]
    actuals = [e * f for e, f, _ in requests]
    calls = [c for _, _, c in requests]
    granted, peak = asyncio.run(_distributed(cap, estimates, actuals, calls, workers, random.Random(seed)))
    assert granted == _serial(cap, estimates, actuals, calls)
    assert peak <= cap + 1e-9


def test_without_a_budget_every_call_is_granted_and_counted():
    ledger = Ledger(None, [0.0] * 3)
    assert all(ledger.decide(i, 0.0) for i in range(3))
    assert asyncio.run(ledger.progress()) == (0, 3, 0.0)


def test_requests_written_by_an_earlier_run_hold_no_room():
    """A rerun's ledger starts with the written blocks finished: their estimates no longer hold room."""
    ledger = Ledger(1.0, [0.9, 0.9, 0.5], done=[0, 1])
    assert ledger.decide(2, 0.5) is True and ledger.done_count == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=30), st.data())
def test_fenwick_prefix_sums(values, data):
    """Invariant: after any point updates, before(i) equals the plain sum of the values at positions < i."""
    tree = Fenwick(values)
    plain = list(values)
    for _ in range(5):
        i = data.draw(st.integers(0, len(plain) - 1))
        v = data.draw(st.floats(-5, 5))
        tree.set(i, v)
        plain[i] = v
    for i in range(len(plain) + 1):
        assert abs(tree.before(i) - sum(plain[:i])) < 1e-6
