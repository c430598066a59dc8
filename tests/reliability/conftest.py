"""Fixtures for the reliability tests."""

from __future__ import annotations

import functools

import pytest

from judgelab import runner
from judgelab.backends.retry import RetryPolicy
from tests.reliability.helpers import register_priced_model


@pytest.fixture(scope="session", autouse=True)
def _priced_model() -> None:
    register_priced_model()


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Backoff base 10 ms instead of 500 ms: the same policy, scaled so fault-heavy tests stay fast."""
    monkeypatch.setattr(runner, "RetryPolicy", functools.partial(RetryPolicy, base_s=0.01))
