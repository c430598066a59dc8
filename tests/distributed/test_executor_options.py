"""RayExecutor's refusals, which need no cluster: without Ray it says how to install it, bad options and any
credential that would travel to the workers are refused in one sentence before Ray is started."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

import judgelab
from judgelab.distributed import PartitionsError, RayExecutor, RayNotInstalledError
from judgelab.distributed.partitions import check_manifest
from judgelab.errors import ConfigError

ITEMS = pd.DataFrame({"item_id": ["a", "b"], "prompt": ["p", "q"], "response": ["r", "s"]})


def test_without_ray_the_error_says_how_to_install_it(monkeypatch):
    """Ray is installed here, so its absence is simulated: a None entry in sys.modules makes `import ray` fail."""
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RayNotInstalledError, match=r"pip install 'judgelab\[ray\]'") as err:
        RayExecutor(workers=2)
    assert str(err.value).count(".") <= 1  # one sentence


@pytest.mark.parametrize("options", [{"workers": 0}, {"workers": 1.5}, {"block_size": 0}, {"address": ""},
                                     {"api_key_env": "not a name"}, {"out": 3}, {"worker_cache": 4},
                                     {"init_options": [1]}])
def test_bad_options_are_refused(options):
    with pytest.raises(ConfigError):
        RayExecutor(**options)


@pytest.mark.parametrize("secret", [{"api_key": "sk-never-shipped-1234567890"},
                                    {"api_base": "http://127.0.0.1:9/v1?key=sk-never-shipped-1234567890"},
                                    {"extra_params": {"extra_headers": {"x-api-key": "sk-never-shipped-1234567890"}}}])
def test_a_credential_is_never_sent_to_the_workers(secret, tmp_path):
    """The check runs before Ray starts (no cluster here): the run is refused, nothing is written."""
    with pytest.raises(ConfigError, match="api_key_env"):
        judgelab.run(ITEMS, "direct_score", "openai/gpt-4o-mini", progress=False, cache=False,
                     executor=RayExecutor(out=tmp_path / "out"), **secret)
    assert not (tmp_path / "out").exists()


def test_a_folder_of_another_run_is_refused(tmp_path):
    check_manifest(tmp_path, {"run_id": "run-1", "block_size": 4})
    check_manifest(tmp_path, {"run_id": "run-1", "block_size": 4})  # the same run: resumed
    with pytest.raises(PartitionsError, match="block_size"):
        check_manifest(tmp_path, {"run_id": "run-1", "block_size": 8})


def test_an_output_folder_under_a_file_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(PartitionsError, match="part of that path is a file"):
        check_manifest(tmp_path / "file" / "out", {"run_id": "run-1"})
