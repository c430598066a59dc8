"""Large offline runs through a provider's batch API (via litellm): submit, poll, resume, collect.

``batch_run(items, rubric, model, state_path=...)`` builds the same requests :func:`judgelab.run`
would send, uploads them as one JSONL file, creates the batch, and polls it. Every step is written
to ``state_path`` (JSON) before the next begins, so a process that dies (or a notebook that is
closed) resumes by calling ``batch_run`` again with the same arguments: it never submits twice, it
picks up the batch id and polls. When the batch is done, the output (and error) files are read into
ONE judgments table, parsed by the rubric exactly like live replies; a request with no result or an
error line is an ``api_error`` row with the provider's reason.

Cost: tokens x litellm's batch prices for the model (``input_cost_per_token_batches``, usually half
the live price); NaN when litellm has no batch price for it. Batch runs are single-shot: no re-ask
of unparseable replies (rerun those rows live with :func:`judgelab.run`).

Keys: the state file holds ids and statuses only, redacted on every write; a failure of the
provider's batch API is a :class:`BatchAPIError` whose message has any key masked.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.backends.pricing import batch_price, offline_litellm
from judgelab.backends.redaction import install_log_redaction, redact, register_credentials, secrets_in
from judgelab.backends.reply import body_is_completion, reply_from_dict
from judgelab.engine.config import RunConfig
from judgelab.engine.items import read_items
from judgelab.engine.rows import Job, plan_jobs, read_model_reply, reply_detail, scored_rows, unscored_rows
from judgelab.engine.sync import sync_twin
from judgelab.errors import JudgelabError
from judgelab.judgments import API_ERROR
from judgelab.rubrics.base import ParseFailure, Rubric

__all__ = ["TERMINAL", "BatchAPIError", "BatchResult", "BatchStateError", "abatch_run", "batch_run"]

TERMINAL = ("completed", "failed", "expired", "cancelled")
litellm = offline_litellm()


@dataclass
class BatchResult:
    """The provider's batch status, the judgments table once the batch is done, and the saved state."""

    status: str  # the provider's batch status; "completed" when the table is final
    table: pd.DataFrame | None  # None until the batch is done
    state: dict[str, Any]


class BatchStateError(JudgelabError, ValueError):
    """The state file belongs to a different run (other items, rubric, model or options)."""


class BatchAPIError(JudgelabError, RuntimeError):
    """The provider's batch API refused or failed a step (upload, create, poll, download); keys masked."""


async def _provider(step: str, call: Any, *args: Any, **kwargs: Any) -> Any:
    """One batch API call; its failure becomes a :class:`BatchAPIError` naming the step, with keys masked."""
    try:
        return await call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - re-raised as one sentence, nothing swallowed
        secrets = (kwargs.get("api_key"), *secrets_in(kwargs.get("api_base")))
        raise BatchAPIError(redact(f"batch {step} failed: {type(exc).__name__}: {exc}", secrets)) from None


def _requests(jobs: list[Job], rubric: Rubric, model: str,
              config: RunConfig) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(JSONL lines for the batch file, custom_id -> what the collector needs to rebuild the rows)."""
    lines, index = [], {}
    for job in jobs:
        params = config.request_params(rubric, job.request, job.repeat)  # the very parameters a live run sends
        custom_id = f"r{len(lines)}"
        body = {"model": model.split("/", 1)[-1], "messages": job.request.messages, **params}
        lines.append({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body})
        index[custom_id] = {"job": job.order, "item_id": str(job.item["item_id"]), "condition": job.condition,
                            "swapped": job.swapped, "repeat": job.repeat, "prompt_hash": job.request.prompt_hash(),
                            "temperature": params["temperature"], "seed": params.get("seed")}
    return lines, index


def _fingerprint(model: str, rubric: Rubric, lines: list[dict[str, Any]]) -> str:
    blob = json.dumps({"model": model, "rubric": rubric.fingerprint(), "lines": lines}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _save(path: Path, state: dict[str, Any]) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(redact(state), indent=1, sort_keys=True))
    os.replace(tmp, path)  # atomic: a crash leaves the old state or the new one, never half a file


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


async def abatch_run(items: Any, rubric: Rubric | str, model: str, *, state_path: str | os.PathLike[str],
                     api_base: str | None = None, api_key: str | None = None, provider: str = "openai",
                     judge: str | None = None, swap: bool = False, order: str = "given", condition: str = "original",
                     repeats: int = 1, temperature: float | None = None, seed: int | None = 0,
                     max_tokens: int | None = None, poll_interval: float = 30.0,
                     max_wait: float | None = None) -> BatchResult:
    """Submit (once), poll until done or ``max_wait`` seconds pass, and collect; see the module docstring.

    The items, rubric and options mean what they mean in :func:`judgelab.run` (``swap``, ``order``,
    ``condition``, ``repeats``, ``temperature``, ``seed``, ``max_tokens``); ``state_path`` is the JSON
    file that makes the run resumable; ``provider`` is litellm's name for the batch API's provider.
    """
    from judgelab.rubrics import load_rubric

    rubric = load_rubric(rubric) if isinstance(rubric, str | Path) else rubric
    config = RunConfig(judge=judge, swap=swap, order=order, condition=condition, repeats=repeats,
                       temperature=temperature, seed=seed, max_tokens=max_tokens)
    item_df = read_items(items)
    jobs = plan_jobs(item_df, rubric, condition=condition, swap=swap, order=order, seed=seed, repeats=repeats)
    lines, index = _requests(jobs, rubric, model, config)
    conn: dict[str, Any] = {"custom_llm_provider": provider}
    if api_base:
        conn["api_base"] = api_base
    if api_key:
        conn["api_key"] = api_key
    register_credentials(api_key, api_base)  # refuses a key too short to be masked
    install_log_redaction()
    path = Path(state_path)
    fingerprint = _fingerprint(model, rubric, lines)
    state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if state and state.get("fingerprint") != fingerprint:
        raise BatchStateError(f"state file {path} belongs to a different batch run (other items, rubric, model or "
                              "options); use a new state_path")
    if not state:
        state = {"fingerprint": fingerprint, "model": model, "judge": judge or model, "n_requests": len(lines),
                 "status": "preparing", "submitted_at": None, "polls": 0}
        path.parent.mkdir(parents=True, exist_ok=True)
        _save(path, state)
    if not state.get("input_file_id"):
        data = ("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n").encode()
        upload = await _provider("upload", litellm.acreate_file, file=("judgelab-batch.jsonl", io.BytesIO(data)),
                                 purpose="batch", **conn)
        state["input_file_id"] = _field(upload, "id")
        _save(path, state)
    if not state.get("batch_id"):
        created = await _provider("create", litellm.acreate_batch, completion_window="24h",
                                  endpoint="/v1/chat/completions", input_file_id=state["input_file_id"],
                                  metadata={"judgelab_fingerprint": fingerprint}, **conn)
        state.update(batch_id=_field(created, "id"), status=_field(created, "status"), submitted_at=time.time())
        _save(path, state)
    started = time.monotonic()
    while state["status"] not in TERMINAL:
        if max_wait is not None and time.monotonic() - started >= max_wait:
            return BatchResult(state["status"], None, state)
        batch = await _provider("poll", litellm.aretrieve_batch, batch_id=state["batch_id"], **conn)
        state.update(status=_field(batch, "status"), polls=state["polls"] + 1,
                     output_file_id=_field(batch, "output_file_id"), error_file_id=_field(batch, "error_file_id"))
        _save(path, state)
        if state["status"] not in TERMINAL:
            await asyncio.sleep(poll_interval)
    results: dict[str, dict[str, Any]] = {}
    for key in ("output_file_id", "error_file_id"):
        if state.get(key):
            content = await _provider("download", litellm.afile_content, file_id=state[key], **conn)
            unreadable = _read_output(content.content, results)
            if unreadable:  # said in every row the file should have answered and did not
                state["unreadable_output_lines"] = state.get("unreadable_output_lines", 0) + unreadable
    table = _collect(jobs, rubric, state, index, results)
    return BatchResult(state["status"], table, state)


def _read_output(data: bytes, results: dict[str, dict[str, Any]]) -> int:
    """Read a batch output (or error) file into ``results`` (custom_id -> line); how many of its lines are
    not a result line (not JSON, no custom_id): never an exception, whatever the file holds."""
    unreadable = 0
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and isinstance(record.get("custom_id"), str):
            results[record["custom_id"]] = record
        else:
            unreadable += 1
    return unreadable


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _collect(jobs: list[Job], rubric: Rubric, state: dict[str, Any], index: dict[str, dict[str, Any]],
             results: dict[str, dict[str, Any]]) -> pd.DataFrame:
    price = batch_price(state["model"])
    run_id = f"batch-{state['fingerprint']}"
    rows = []
    for custom_id, where in index.items():
        request = jobs[where["job"]].request
        record = results.get(custom_id)
        response = _mapping(_mapping(record).get("response"))
        body = _mapping(response.get("body"))
        reply = reply_from_dict(body) if body_is_completion(body) else None
        tokens_in = reply.input_tokens if reply is not None else None
        tokens_out = reply.output_tokens if reply is not None else None
        cost = math.nan
        if price is not None and tokens_in is not None and tokens_out is not None:
            cost = tokens_in * price[0] + tokens_out * price[1]
        base = {"run_id": run_id, "item_id": where["item_id"], "rubric": rubric.name, "rubric_version": rubric.version,
                "judge": state["judge"], "condition": where["condition"], "repeat": where["repeat"],
                "temperature": where["temperature"], "seed": where["seed"],
                "prompt_hash": where["prompt_hash"], "call_id": f"{state['batch_id']}:{custom_id}",
                "input_tokens": tokens_in, "output_tokens": tokens_out, "cost_usd": cost, "cached": False,
                "attempts": 1, "system_fingerprint": reply.system_fingerprint if reply is not None else None,
                "created_at": pd.Timestamp.now(tz="UTC")}
        detail = {"swapped": where["swapped"], "batch_id": state["batch_id"], "custom_id": custom_id}
        error = _mapping(record).get("error")
        if record is None or error or response.get("status_code") != 200 or reply is None:
            why = _mapping(error).get("message") or error or response.get("status_code")
            reason = ("no result for this request in the batch output" if record is None else
                      f"batch request failed: {why}" if why else "batch request failed: its result holds no completion")
            if record is None and state.get("unreadable_output_lines"):
                reason += f" ({state['unreadable_output_lines']} line(s) of the batch output could not be read)"
            if state["status"] != "completed":
                reason += f" (batch {state['status']})"
            rows += unscored_rows(base, request, API_ERROR, reason, detail)
            continue
        base |= {"raw_output": reply.text, "reasoning": reply.reasoning, "reasoning_tokens": reply.reasoning_tokens}
        detail |= reply_detail(reply)
        try:
            parsed = read_model_reply(rubric, reply, request)
        except ParseFailure as failure:
            rows += unscored_rows(base, request, failure.status, failure.reason, detail)
            continue
        rows += scored_rows(base, request, parsed, detail)
    return judgments.validate(judgments.make_table(rows))


batch_run = sync_twin(abatch_run, "batch_run")
