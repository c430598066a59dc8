"""judgelab's rubrics as map steps of a Ray Data pipeline, in front of any OpenAI-compatible endpoint.

For self-hosted judges at scale (vLLM, SGLang or Ray Serve behind an OpenAI-compatible URL), the calls
can be made by Ray Data itself (``ray.data.llm.HttpRequestProcessorConfig`` + ``build_processor``, or
your own ``map_batches`` client), with judgelab on both sides of them:

* :func:`request_rows` (a ``map_batches`` step, pandas batches of items) -> one row per request with the
  OpenAI ``payload`` (JSON text) judgelab.run would send (messages and the run's parameters) and the request's
  ``call_id``, ``prompt_hash``, condition and repeat;
* the endpoint's answer goes into a ``response`` column (the chat-completion body, a dict or JSON text);
* :func:`judgment_rows` (``map_batches`` again) -> the judgments-table rows: the rubric's parser on each
  answer, unscored rows (``parse_error``, ``refusal``, ``api_error``) for the rest;
* :func:`assemble` -> ONE judgments table in judgelab.run's row order.

The rows equal those of ``judgelab.run(items, rubric, model, api_base=..., run_id=..., max_reasks=0)``
against the same endpoint (same call ids, seeds, prompts, parsed values), except what says how the
answer was obtained: ``latency_s`` (not measured here), ``attempts`` (1) and ``created_at``. The pipeline
is single-shot, like a provider batch: an unparseable answer is not asked again (rerun those rows live).
Pass ``run_id`` explicitly (a map step sees one batch of items, not the whole set the default run id
hashes). Never put an API key in the pipeline's arguments (Ray records them): a self-hosted endpoint
usually needs none; otherwise read it from the workers' environment in your own call step.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.errors import ConfigError

__all__ = ["assemble", "judgment_rows", "request_rows"]

_PLAN = ("item_json", "condition", "swapped", "repeat", "request_index", "cond_index")


def _engine(rubric: Any, model: str, options: Mapping[str, Any]) -> tuple[Any, Any]:
    from judgelab.engine.config import RunConfig
    from judgelab.engine.runner import engine_for
    from judgelab.rubrics import load_rubric

    if not isinstance(model, str) or not model:
        raise ConfigError(f"model must be a model name, not {model!r}")
    if not isinstance(rubric, str) and not (callable(getattr(rubric, "requests", None))
                                            and callable(getattr(rubric, "parse", None))):
        raise ConfigError(f"rubric must be a rubric or a rubric name, not {type(rubric).__name__}")
    unknown = sorted(set(options) - set(RunConfig.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"unknown option(s) {unknown}; the steps take judgelab.run's options")
    if not isinstance(options.get("run_id"), str | None):
        raise ConfigError("run_id must be a name")
    if not options.get("run_id"):
        raise ConfigError("request_rows and judgment_rows need run_id= (a map step sees one batch of items, not the "
                          "whole set a default run id is computed from)")
    if options.get("api_key"):
        raise ConfigError("do not pass api_key to a Ray Data step (Ray records its arguments); read the key from the "
                          "workers' environment in the step that calls the endpoint")
    rubric = load_rubric(rubric) if isinstance(rubric, str) else rubric
    config = RunConfig(**options)
    return rubric, engine_for(pd.DataFrame({"item_id": []}), rubric, model, config, None)


def request_rows(items: pd.DataFrame, rubric: Any, model: str, **options: Any) -> pd.DataFrame:
    """Every request a batch of items needs, as rows: ``payload`` (the OpenAI chat-completions body), ``call_id``,
    ``prompt_hash`` and the plan fields :func:`judgment_rows` reads back. ``options``: judgelab.run's options
    (``run_id`` required; ``api_base`` as judgelab.run would get it, since it is part of the call id)."""
    from judgelab.engine.items import read_items
    from judgelab.engine.rows import plan_jobs

    if not isinstance(items, pd.DataFrame):
        raise ConfigError(f"request_rows takes a pandas batch of items (batch_format='pandas'), not "
                          f"{type(items).__name__}")
    rubric, engine = _engine(rubric, model, options)
    config = engine.config
    item_df = read_items(items.drop(columns=["item_position"], errors="ignore"))
    positions = list(items["item_position"]) if "item_position" in items else [None] * len(items)
    jobs = plan_jobs(item_df, rubric, condition=config.condition, swap=config.swap, order=config.order,
                     seed=config.seed, repeats=config.repeats)
    by_id = {str(i): p for i, p in zip(item_df["item_id"], positions, strict=True)}
    rows: list[dict[str, Any]] = []
    conditions: dict[str, dict[str, int]] = {}  # item -> condition -> its place among the item's conditions
    requests: dict[tuple[str, str, int], int] = {}  # (item, condition, repeat) -> requests planned so far
    for job in jobs:
        params = config.request_params(rubric, job.request, job.repeat)
        messages = list(job.request.messages)
        item_id = str(job.item["item_id"])
        seen = conditions.setdefault(item_id, {})
        cond_index = seen.setdefault(job.condition, len(seen))
        slot = (item_id, job.condition, job.repeat)
        request_index = requests.get(slot, 0)
        requests[slot] = request_index + 1
        rows.append({"item_id": item_id, "item_position": by_id[item_id],
                     "item_json": json.dumps(dict(job.item), default=str), "condition": job.condition,
                     "swapped": job.swapped, "repeat": job.repeat, "request_index": request_index,
                     "cond_index": cond_index, "call_id": engine.key(messages, params, job.repeat),
                     "prompt_hash": job.request.prompt_hash(),
                     # JSON text: a column of nested dicts of varying shape is not one Arrow type
                     "payload": json.dumps({"model": model.split("/", 1)[-1], "messages": messages, **params})})
    return pd.DataFrame(rows)


def _body(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str | bytes):
        try:
            data = json.loads(value)
        except ValueError:
            return None
        return data if isinstance(data, Mapping) else None
    return None


def judgment_rows(answers: pd.DataFrame, rubric: Any, model: str, **options: Any) -> pd.DataFrame:
    """The judgments-table rows of answered requests: rows of :func:`request_rows` plus ``response`` (the
    endpoint's chat-completion body, a dict or JSON text; None or anything else is an ``api_error`` row, with
    ``error`` as the reason when that column is there). Same ``options`` as :func:`request_rows`."""
    from judgelab.backends.pricing import cost_from_tokens
    from judgelab.backends.reply import body_is_completion, reply_from_dict
    from judgelab.engine.rows import read_model_reply, reply_detail, scored_rows, unscored_rows
    from judgelab.judgments import API_ERROR
    from judgelab.rubrics.base import ParseFailure

    if not isinstance(answers, pd.DataFrame):
        raise ConfigError(f"judgment_rows takes a pandas batch (batch_format='pandas'), not {type(answers).__name__}")
    rubric, engine = _engine(rubric, model, options)
    missing = [c for c in (*_PLAN, "call_id", "prompt_hash", "payload", "response") if c not in answers.columns]
    if missing:
        raise ConfigError(f"judgment_rows needs the columns of request_rows plus response; missing {missing}")
    out: list[dict[str, Any]] = []
    for record in answers.to_dict(orient="records"):
        item = json.loads(record["item_json"])
        request = rubric.requests(item, swapped=bool(record["swapped"]))[int(record["request_index"])]
        params = json.loads(record["payload"])
        body = _body(record["response"])
        reply = reply_from_dict(body) if body is not None and body_is_completion(body) else None
        cost = cost_from_tokens(model, body.get("usage")) if reply is not None and body is not None else 0.0
        base = {"run_id": engine.run_id, "item_id": record["item_id"], "rubric": rubric.name,
                "rubric_version": rubric.version, "judge": engine.judge, "condition": record["condition"],
                "repeat": int(record["repeat"]), "temperature": params.get("temperature"), "seed": params.get("seed"),
                "prompt_hash": record["prompt_hash"], "call_id": record["call_id"],
                "raw_output": reply.text if reply else None, "reasoning": reply.reasoning if reply else None,
                "input_tokens": reply.input_tokens if reply else None,
                "output_tokens": reply.output_tokens if reply else None,
                "reasoning_tokens": reply.reasoning_tokens if reply else None,
                "cost_usd": cost, "latency_s": math.nan, "cached": False, "attempts": 1,
                "system_fingerprint": reply.system_fingerprint if reply else None,
                "created_at": pd.Timestamp.now(tz="UTC")}
        detail: dict[str, Any] = {"swapped": bool(record["swapped"])}
        order = {k: record[k] for k in ("item_position", "cond_index", "repeat", "request_index")}
        if reply is None:
            reason = record.get("error") or "the endpoint returned no chat completion for this request"
            rows = unscored_rows(base, request, API_ERROR, str(reason), detail)
        else:
            detail.update(reply_detail(reply))
            try:
                rows = scored_rows(base, request, read_model_reply(rubric, reply, request), detail)
            except ParseFailure as failure:
                rows = unscored_rows(base, request, failure.status, failure.reason, detail)
        for i, row in enumerate(rows):
            out.append({**row, **{f"_{k}": v for k, v in order.items()}, "_row": i})
    # the table's own column types (detail as JSON text: dicts of varying keys would become one Arrow struct)
    private = [k for k in (out[0] if out else {}) if k.startswith("_")]
    table = judgments.make_table([{k: v for k, v in r.items() if not k.startswith("_")} for r in out])
    return table.assign(**{k: [r[k] for r in out] for k in private})


def assemble(rows: pd.DataFrame) -> pd.DataFrame:
    """ONE judgments table from the rows of :func:`judgment_rows` (e.g. ``dataset.to_pandas()``), in judgelab.run's
    order: items as given (``item_position`` when the items carried it, else item id), conditions, repeats,
    requests."""
    keys = ["_item_position", "_cond_index", "_repeat", "_request_index", "_row"]
    if not isinstance(rows, pd.DataFrame):
        raise ConfigError(f"assemble takes the rows of judgment_rows as a DataFrame, not {type(rows).__name__}")
    if rows.empty:
        return judgments.make_table([])
    missing = [k for k in keys if k not in rows.columns]
    if missing:
        raise ConfigError(f"assemble takes the rows of judgment_rows; these have no {missing}")
    if rows.empty:
        return judgments.make_table([])
    if rows["_item_position"].isna().any():
        keys[0] = "item_id"
    ordered = rows.sort_values(keys, kind="stable").drop(columns=[c for c in rows.columns if c.startswith("_")])
    return judgments.validate(judgments.make_table(ordered.to_dict(orient="records")))
