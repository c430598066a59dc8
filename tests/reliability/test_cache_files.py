"""A request cache file that cannot be used (corrupt, a folder) is one clear sentence naming it,
through the API and the CLI, before any call; a good cache survives being shared and reopened."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import judgelab
from judgelab.cli import app
from judgelab.engine.cache import CacheError, RequestCache
from tests.reliability.helpers import direct_items, write_jsonl
from tests.support.fault_server import FaultServer, direct_score_answer, tag_key


@pytest.fixture
def corrupt_cache(tmp_path):
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a SQLite database, only text long enough to fill a page header" * 20)
    return path


def test_corrupt_cache_is_a_clear_error_before_any_call(corrupt_cache):
    with FaultServer(answer=direct_score_answer, key_fn=tag_key()) as srv:
        with pytest.raises(CacheError) as info:
            judgelab.run(direct_items(2), "direct_score", "openai/stub-judge", api_base=srv.base_url,
                         cache=corrupt_cache, progress=False)
        assert srv.count == 0
    assert str(info.value) == (f"cannot use the request cache {corrupt_cache}: file is not a database; "
                               "move it away or choose another cache file")


@pytest.mark.parametrize("kind", ["corrupt", "folder"])
def test_cli_reports_an_unusable_cache_in_one_sentence(tmp_path, corrupt_cache, kind):
    cache = corrupt_cache if kind == "corrupt" else tmp_path
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(2))
    result = CliRunner().invoke(app, ["run", "--rubric", "direct_score", "--data", str(data), "--model",
                                      "openai/stub-judge", "--api-base", "http://127.0.0.1:9/v1",
                                      "--cache", str(cache), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot use the request cache {cache}: "), result.stderr


def test_reopened_cache_keeps_every_entry(tmp_path):
    path = tmp_path / "c.sqlite"
    with RequestCache(path) as cache:
        for i in range(50):
            cache.put(f"k{i}", {"text": str(i)})
    with RequestCache(path) as again:
        assert len(again) == 50 and again.get("k49") == {"text": "49"}
