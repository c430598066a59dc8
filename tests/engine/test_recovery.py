"""The recovery file: where answers the cache refused go, and how they come back."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from judgelab.backends.redaction import register_secret
from judgelab.engine.cache import RequestCache
from judgelab.engine.recovery import RECOVERY_DIR_ENV, RecoveryFile, read_recovery


def test_answers_go_to_the_first_folder_that_takes_them_and_come_back_whole(tmp_path, monkeypatch):
    """A recovery folder that does not exist is passed over for the next one (the system's temporary folder);
    every answer kept there is put back by restore, and a second answer goes to the same file."""
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(tmp_path / "missing" / "folder"))
    recovery = RecoveryFile(tmp_path / "cache.sqlite")
    first = recovery.keep("k1", {"text": "answer one", "finish_reason": "stop"})
    second = recovery.keep("k2", {"text": "answer two"})
    assert first == second and first is not None and first.parent == Path(tempfile.gettempdir())
    assert recovery.kept == 2 and recovery.lost == 0
    try:
        with RequestCache(tmp_path / "cache.sqlite") as cache:
            assert cache.restore(first) == 2
            assert cache.get("k1") == {"text": "answer one", "finish_reason": "stop"}
    finally:
        first.unlink()


def test_no_folder_that_takes_them_is_counted_as_lost(tmp_path, monkeypatch):
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")  # a file where the folders should be: nothing can be created under it
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(blocked))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(blocked))
    monkeypatch.setenv("HOME", str(blocked))
    recovery = RecoveryFile(blocked / "cache.sqlite")
    assert recovery.keep("k", {"text": "x"}) is None
    assert recovery.path is None and recovery.lost == 1


def test_a_secret_in_an_answer_is_masked_in_the_recovery_file(tmp_path, monkeypatch):
    secret = "sk-recovery-" + os.urandom(8).hex()
    register_secret(secret)
    monkeypatch.setenv(RECOVERY_DIR_ENV, str(tmp_path))
    path = RecoveryFile().keep("k", {"text": f"the key is {secret}"})
    assert path is not None and secret not in path.read_text()
    assert read_recovery(path)[0][1]["text"].startswith("the key is ")
