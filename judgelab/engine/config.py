"""RunConfig: every option of a judge run except the items, the rubric, the model and the cache.

One frozen value instead of a dict of loose keys: the runner, the batch runner and the dry-run
estimate read the same fields, and the fields that change an answer (sampling, repeats, order,
API base) are the ones hashed into the run id. The API key is held but never printed or hashed:
every key the config holds (``api_key``, one inside ``api_base``, a header in ``extra_params``) is
registered for redaction, its repr is redacted, and the run id hashes the redacted api base and
parameters, so a rotated key keeps the run id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from judgelab.backends.redaction import redact, register_credentials
from judgelab.errors import ConfigError
from judgelab.rubrics.base import JudgeRequest, Rubric

__all__ = ["ORDERS", "REASONING_EFFORTS", "RunConfig"]

ORDERS = ("given", "random")
# litellm's reasoning_effort values (providers map them to their own thinking budgets)
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
# the options that change what is asked or how it is sampled: part of the run id
_RUN_ID_FIELDS = ("condition", "swap", "order", "repeats", "temperature", "seed", "max_tokens", "logprobs",
                  "extra_params", "api_base")


@dataclass(frozen=True)
class RunConfig:
    """The options of one run (see :func:`judgelab.arun` for what each means)."""

    judge: str | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    repeats: int = 1
    temperature: float | None = None
    seed: int | None = 0
    swap: bool = False
    order: str = "given"
    condition: str = "original"
    max_cost_usd: float | None = None
    max_retries: int = 5
    retry_base_s: float = 0.5
    max_reasks: int = 1
    timeout: float = 120.0
    logprobs: bool = False
    top_logprobs: int = 5
    json_mode: bool = True
    max_tokens: int | None = None
    extra_params: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    progress: bool = True
    retry_unscored: bool = False
    reasoning_effort: str | None = None

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise ConfigError(f"order must be 'given' or 'random', not {self.order!r}")
        if self.repeats < 1:
            raise ConfigError("repeats must be at least 1")
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1")
        if self.max_reasks < 0 or self.max_retries < 0:
            raise ConfigError("max_reasks and max_retries cannot be negative")
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ConfigError(f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}, not "
                              f"{self.reasoning_effort!r}")
        if not isinstance(self.condition, str) or not self.condition:
            raise ConfigError(f"condition must be a non-empty name, not {self.condition!r}")
        # frozen all the way down: a caller mutating its dict afterwards cannot change a running config
        object.__setattr__(self, "extra_params", MappingProxyType(dict(self.extra_params or {})))
        # every credential (api_key, one inside api_base, every header value of extra_params) is masked from now on;
        # one too short to be masked is refused
        register_credentials(self.api_key, self.api_base, dict(self.extra_params))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return redact(f"RunConfig({shown})")

    def judge_name(self, model: str) -> str:
        """The name written in the table's ``judge`` column (default: the model)."""
        return self.judge or model

    def temperature_for(self, rubric: Rubric) -> float:
        if self.temperature is not None:
            return float(self.temperature)
        return float(rubric.default_temperature) if rubric.default_temperature is not None else 0.0

    def request_params(self, rubric: Rubric, request: JudgeRequest, repeat: int) -> dict[str, Any]:
        """The sampling parameters sent with one request (and hashed into its cache key)."""
        params: dict[str, Any] = {"temperature": self.temperature_for(rubric)}
        if self.seed is not None:
            params["seed"] = int(self.seed) + repeat
        max_tokens = self.max_tokens or request.max_tokens
        if max_tokens:
            params["max_tokens"] = int(max_tokens)
        if self.json_mode and request.response_format is not None:
            params["response_format"] = request.response_format
        if self.logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = int(self.top_logprobs)
        if self.reasoning_effort is not None:  # in the params, so the cache keys of two efforts differ
            params["reasoning_effort"] = self.reasoning_effort
        params.update(self.extra_params)
        return params

    def run_id_for(self, rubric: Rubric, model: str, item_ids: Sequence[str]) -> str:
        """``self.run_id``, else a hash of what was run: options that change answers, rubric, model, items."""
        if self.run_id:
            return self.run_id
        desc: dict[str, Any] = {k: getattr(self, k) for k in _RUN_ID_FIELDS}
        desc["extra_params"] = redact(dict(self.extra_params))
        desc["api_base"] = redact(self.api_base)
        if self.reasoning_effort is not None:  # only when set: run ids of runs without it stay as they were
            desc["reasoning_effort"] = self.reasoning_effort
        desc.update(rubric=rubric.fingerprint(), model=model, judge=self.judge_name(model), items=list(item_ids))
        return "run-" + hashlib.sha256(json.dumps(desc, sort_keys=True, default=str).encode()).hexdigest()[:12]
