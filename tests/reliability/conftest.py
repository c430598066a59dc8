"""Fixtures for the reliability tests."""

from __future__ import annotations

import pytest

from tests.reliability.helpers import register_priced_model


@pytest.fixture(scope="session", autouse=True)
def _priced_model() -> None:
    register_priced_model()


@pytest.fixture
def default_sigint():  # type: ignore[no-untyped-def]
    """Ctrl-C's default disposition for one test: the Python handler that raises KeyboardInterrupt, and SIGINT
    not blocked. Another test's library run earlier in the same worker process can leave SIGINT ignored or
    blocked, and a CLI child started from here inherits that state; the interrupt tests need the default.
    Says which state it found (seen once in a two-worker CI run, not reproduced alone), and restores it after."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if previous is not signal.default_int_handler or signal.SIGINT in mask:
        print(f"SIGINT was {previous!r}, blocked: {signal.SIGINT in mask}; restored to the default for this test")
    yield
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    signal.signal(signal.SIGINT, previous)
