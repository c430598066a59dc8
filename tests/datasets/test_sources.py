"""Download path: pinned URLs, sha256 checks, the cache, and clear errors.

The internet is not reachable in tests, so a real HTTP server on 127.0.0.1 (started and
stopped by the fixture) serves a temporary copy of a few source files under the same
``<owner>/<repo>/<commit>/<path>`` layout as raw.githubusercontent.com.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from judgelab.datasets import ChecksumError, DataNotFoundError, llmbar, llmbar_combinations, openqa
from judgelab.datasets.sources import MANIFEST_DIR, SOURCES, build_manifest, fetch_files

MIRRORED = {
    "OpenQA-eval": ["data/NQ301_human.tsv", "data/NQ301_BEM.tsv", "data/NQ301_gpt-4.tsv"],
    "LLMBar": [
        "Dataset/LLMBar/Natural/dataset.json",
        "Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla/result.json",
        "Dataset/Processed/LLMEval^2/dataset.json",
        "Dataset/Processed/LLMEval^2/evaluators/GPT-4/Vanilla_NoRules/result.json",
    ],
}


class _Mirror:
    def __init__(self, root: Path, url: str, requests: list[str]) -> None:
        self.root, self.url, self.requests = root, url, requests

    def path_of(self, folder: str, path: str) -> Path:
        source = SOURCES[folder]
        return self.root / source.repo / source.commit / path


@pytest.fixture()
def mirror(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Mirror]:
    root = tmp_path / "mirror"
    for folder, paths in MIRRORED.items():
        source = SOURCES[folder]
        for p in paths:
            target = root / source.repo / source.commit / p
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_dir / folder / p, target)
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            requests.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.delenv("JUDGELAB_DATA_DIR", raising=False)  # force the download path
    monkeypatch.delenv("JUDGELAB_DATA_BASE_URL", raising=False)
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path / "cache"))
    try:
        yield _Mirror(root, f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_download_verifies_caches_and_matches_the_local_copy(
    mirror: _Mirror, data_dir: Path, tmp_path: Path
) -> None:
    downloaded = openqa("gpt-4", base_url=mirror.url)
    assert len(mirror.requests) == 3
    assert downloaded.source.location == str(tmp_path / "cache" / "OpenQA-eval")
    local = openqa("gpt-4", data_dir=data_dir)
    pd.testing.assert_frame_equal(downloaded.table, local.table)
    pd.testing.assert_frame_equal(downloaded.items, local.items)
    openqa("gpt-4", base_url=mirror.url)
    assert len(mirror.requests) == 3  # verified cache hit: nothing fetched again


def test_llmbar_downloads_by_manifest_including_quoted_paths(
    mirror: _Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(llmbar_combinations()) == 197  # from the committed manifest, no network needed
    monkeypatch.setenv("JUDGELAB_DATA_BASE_URL", mirror.url)
    natural = llmbar("Natural", "GPT-4", "Vanilla")
    assert len(natural.items) == 100
    odd = llmbar("LLMEval^2", "GPT-4", "Vanilla_NoRules")
    assert len(odd.items) == 200
    assert any("LLMEval%5E2" in r for r in mirror.requests)


def test_corrupted_download_is_a_checksum_error_naming_the_file(mirror: _Mirror, tmp_path: Path) -> None:
    served = mirror.path_of("OpenQA-eval", "data/NQ301_BEM.tsv")
    served.write_bytes(served.read_bytes().replace(b"Yes", b"No!", 1))
    with pytest.raises(ChecksumError, match=r"checksum mismatch for OpenQA-eval/data/NQ301_BEM\.tsv"):
        openqa("BEM", base_url=mirror.url)
    assert not (tmp_path / "cache" / "OpenQA-eval" / "data" / "NQ301_BEM.tsv").exists()


def test_a_tampered_cache_file_is_fetched_again(mirror: _Mirror, tmp_path: Path) -> None:
    paths, _ = fetch_files("OpenQA-eval", ["data/NQ301_human.tsv"], base_url=mirror.url)
    cached = paths["data/NQ301_human.tsv"]
    good = cached.read_bytes()
    cached.write_bytes(good[:-10] + b"tampered!\n")
    fetch_files("OpenQA-eval", ["data/NQ301_human.tsv"], base_url=mirror.url)
    assert cached.read_bytes() == good and len(mirror.requests) == 2


def test_unreachable_or_unknown_files_are_clear_errors(mirror: _Mirror) -> None:
    with pytest.raises(
        DataNotFoundError, match="could not download OpenQA-eval/data/NQ301_text-davinci-003.tsv"
    ):
        openqa("text-davinci-003", base_url=mirror.url)  # not on the mirror: HTTP 404
    with pytest.raises(DataNotFoundError, match="not in the pinned release"):
        fetch_files("OpenQA-eval", ["data/invented.tsv"], base_url=mirror.url)


def test_missing_data_folder_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DataNotFoundError, match=r"data folder .*nowhere \(from data_dir\) does not exist"):
        openqa("gpt-4", data_dir=tmp_path / "nowhere")
    monkeypatch.setenv("JUDGELAB_DATA_DIR", str(tmp_path / "gone"))
    with pytest.raises(DataNotFoundError, match="from JUDGELAB_DATA_DIR"):
        llmbar("Natural", "GPT-4", "Vanilla")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataNotFoundError, match="has no LLMBar/ subfolder"):
        llmbar("Natural", "GPT-4", "Vanilla", data_dir=tmp_path / "empty")
    monkeypatch.setenv("JUDGELAB_DATA_DIR", str(tmp_path / "empty"))
    with pytest.raises(DataNotFoundError, match="file data/NQ301_human.tsv is missing"):
        (tmp_path / "empty" / "OpenQA-eval").mkdir()
        openqa("gpt-4")


@pytest.mark.parametrize("folder", sorted(SOURCES))
def test_committed_manifest_matches_the_shared_data(folder: str, data_dir: Path) -> None:
    committed = json.loads((MANIFEST_DIR / f"{folder}.json").read_text(encoding="utf-8"))
    rebuilt = build_manifest(data_dir / folder)
    assert committed["commit"] == SOURCES[folder].commit
    assert committed["files"] == rebuilt["files"]
    assert not any("LICENSE-NOTE" in f["path"] for f in committed["files"])
