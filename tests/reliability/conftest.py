"""Fixtures for the reliability tests."""

from __future__ import annotations

import pytest

from tests.reliability.helpers import register_priced_model


@pytest.fixture(scope="session", autouse=True)
def _priced_model() -> None:
    register_priced_model()
