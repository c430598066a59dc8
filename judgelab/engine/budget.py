"""The guard that stops issuing calls past a budget (estimates come from :mod:`judgelab.backends.pricing`)."""

from __future__ import annotations

import math
import threading

from judgelab.backends.pricing import UnknownPriceError

__all__ = ["BudgetGuard"]


class BudgetGuard:
    """Reserve an estimate before each call; settle with the actual cost afterwards.

    A call is refused when spent + reserved + its estimate would exceed the budget, so no call is
    ever issued past ``max_cost_usd`` as long as the estimates are upper bounds (they assume the
    full max_tokens output).
    """

    def __init__(self, max_cost_usd: float | None) -> None:
        self.max_cost_usd = max_cost_usd
        self.spent = 0.0
        self.reserved = 0.0
        self.exhausted = False
        self._lock = threading.Lock()

    def try_reserve(self, estimate: float) -> bool:
        if self.max_cost_usd is None:
            return True
        if math.isnan(estimate):
            raise UnknownPriceError("the price of this model is unknown")
        with self._lock:
            if self.exhausted or self.spent + self.reserved + estimate > self.max_cost_usd:
                self.exhausted = True
                return False
            self.reserved += estimate
            return True

    def settle(self, estimate: float, actual: float) -> None:
        if self.max_cost_usd is None:
            return
        with self._lock:
            self.reserved -= estimate
            self.spent += estimate if math.isnan(actual) else actual
