"""Redaction keeps what it found in the environment between calls (it runs several times per model call);
these tests prove that the kept set follows the environment: a key set, changed or removed after the first
call, and a key registered later, are handled by the very next call."""

from __future__ import annotations

import logging

import pytest

from judgelab.backends import redaction
from judgelab.backends.redaction import MASK, RedactingFilter, known_secrets, redact, register_secret


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch) -> None:
    # these tests read what is masked before a key is known: keys (and their fragments) registered by earlier
    # tests in the same process must not count
    monkeypatch.setattr(redaction, "_REGISTERED", frozenset())


LATE_KEY = "sk-late-env-0123456789abcdef"
OTHER_KEY = "sk-rotated-env-fedcba9876543210"


def test_a_key_set_in_the_environment_after_the_first_call_is_redacted(monkeypatch):
    monkeypatch.delenv("LATE_SERVICE_API_KEY", raising=False)
    text = f"the server said: bad value {LATE_KEY}"
    assert redact(text) == text  # not a secret yet: the environment has no such variable
    monkeypatch.setenv("LATE_SERVICE_API_KEY", LATE_KEY)
    assert redact(text) == f"the server said: bad value {MASK}"
    assert redact({"raw_output": text, "detail": [text]}) == {"raw_output": f"the server said: bad value {MASK}",
                                                              "detail": [f"the server said: bad value {MASK}"]}
    assert LATE_KEY in known_secrets()


def test_a_changed_or_removed_environment_key_is_followed(monkeypatch):
    monkeypatch.setenv("LATE_SERVICE_API_KEY", LATE_KEY)
    assert redact(LATE_KEY) == MASK
    monkeypatch.setenv("LATE_SERVICE_API_KEY", OTHER_KEY)  # rotated in place: same name, same number of variables
    assert redact(OTHER_KEY) == MASK
    monkeypatch.delenv("LATE_SERVICE_API_KEY")
    assert OTHER_KEY not in known_secrets() and redact(OTHER_KEY) == OTHER_KEY


def test_a_log_record_after_a_late_environment_key_is_redacted(monkeypatch):
    monkeypatch.delenv("LATE_SERVICE_TOKEN", raising=False)
    first = logging.LogRecord("judgelab", logging.INFO, __file__, 1, "value %s", (LATE_KEY,), None)
    RedactingFilter().filter(first)
    assert first.getMessage() == f"value {LATE_KEY}"
    monkeypatch.setenv("LATE_SERVICE_TOKEN", LATE_KEY)
    record = logging.LogRecord("judgelab", logging.INFO, __file__, 1, "value %s", (LATE_KEY,), None)
    RedactingFilter().filter(record)
    assert record.getMessage() == f"value {MASK}"


def test_a_key_registered_after_the_first_call_is_redacted():
    late = "registered-late-key-5566778899"
    assert redact(f"x {late} y") == f"x {late} y"
    register_secret(late)
    assert redact(f"x {late} y") == f"x {MASK} y"
    assert redact("plain words stay", secrets=["another-extra-key-123"]) == "plain words stay"
    assert redact("has another-extra-key-123 inside", secrets=["another-extra-key-123"]) == f"has {MASK} inside"


def test_the_fast_path_leaves_no_pattern_behind():
    # texts that only the patterns (not the values) catch still go through them
    assert redact("GET https://user:pw-secret-123@host/v1?api-key=abc123456") == "GET https://***@host/v1?api-key=***"
    assert redact("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer ***"
    assert redact("Ocp-Apim-Subscription-Key: abcdefghijkl") == "Ocp-Apim-Subscription-Key: ***"
    assert redact({"extra_headers": {"x-api-key": "short"}, "n": 3, "ok": True, "none": None}) == {
        "extra_headers": {"x-api-key": MASK}, "n": 3, "ok": True, "none": None}
