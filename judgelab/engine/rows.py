"""The ONE place where requests are planned and a request plus its reply becomes judgments-table rows.

The live runner, the batch runner and reparse all go through here, so an unscored row, a
"parser forgot a row" row or a swapped pair looks the same whichever path produced it:

* :func:`plan_jobs` — items x conditions x repeats -> the requests to send, in a stable order;
* :func:`read_reply` — raw text (+ the provider's finish reason) -> parsed rows or a :class:`ParseFailure`;
  :func:`read_model_reply` does the same for a whole :class:`~judgelab.backends.reply.ModelReply` (an
  unreadable reply or a provider's refusal first);
* :func:`scored_rows` / :func:`unscored_rows` — parsed rows (or a failure) + the call's fields -> table rows.

Nothing a parser raises escapes :func:`read_reply`: an exception becomes a ``parse_error`` whose reason
names its class, and a parsed value that is not one (a non-finite or non-numeric score, two values for
one row) is a ``parse_error`` too, so an answer in the cache can always be turned into rows again.

What the engine itself puts in a row's ``detail``: ``swapped``; ``earlier_raw_outputs`` (what the judge said
before a re-ask or a retry of an unscored answer); ``failed_attempts`` (why each failed attempt of the request
failed, retried or final: a timeout, a 429 ...); ``unreadable_reply`` (the reply held no answer: its
``raw_output`` is the reply as received); ``reply_notes`` (values of the reply recorded as unknown, e.g. a
negative token count); ``logprob_note``.

The free-text fields of every row (``raw_output``, ``reasoning``, ``unscored_reason``, ``detail``) pass
through :func:`judgelab.backends.redaction.redact` here, so no path writes a key into a table.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgelab.backends.redaction import redact
from judgelab.judgments import OK, PARSE_ERROR, REFUSAL
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, Rubric, check_fields
from judgelab.rubrics.parsing import THINKING_ONLY

if TYPE_CHECKING:
    from judgelab.backends.reply import ModelReply

__all__ = ["UNREADABLE", "Job", "UnreadableReply", "checked_rows", "item_order_seed", "iter_jobs", "plan_jobs", "read_model_reply",
           "read_reply", "reply_detail", "scored_rows", "unscored_rows"]

UNREADABLE = "unreadable reply"  # the start of the reason of a reply that held no answer to parse
_REASON_CHARS = 300  # how much of an exception's message a reason quotes


@dataclass(frozen=True)
class Job:
    """One request of one item, in one condition and repeat; ``order`` is its place in the table."""

    order: int
    item: Mapping[str, Any]
    condition: str
    swapped: bool
    repeat: int
    request: JudgeRequest


def item_order_seed(seed: int, item_id: str) -> bool:
    """Seeded per-item coin: True means 'show the candidates swapped' (stable across runs and machines)."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return bool(digest[0] & 1)


def _conditions(condition: str, swap: bool, order: str, seed: int, item_id: str) -> list[tuple[str, bool]]:
    swapped_label = "swapped" if condition == "original" else f"{condition}+swapped"
    if swap:
        return [(condition, False), (swapped_label, True)]
    if order == "random" and item_order_seed(seed, item_id):
        return [(swapped_label, True)]
    return [(condition, False)]


def plan_jobs(items: pd.DataFrame, rubric: Rubric, *, condition: str = "original", swap: bool = False,
              order: str = "given", seed: int | None = 0, repeats: int = 1) -> list[Job]:
    """Every request the items need, after checking each item has the rubric's required fields.

    ``swap`` asks both candidate orders (conditions ``condition`` and ``swapped``); ``order="random"``
    shows each item once, in a seeded per-item order; each request is asked ``repeats`` times.
    """
    records = items.to_dict(orient="records")
    _check_items(records, items, rubric)
    return list(_jobs(records, rubric, condition, swap, order, seed, repeats))


_RECORDS_CHUNK = 10_000  # items turned into dicts at a time by iter_jobs


def iter_jobs(items: pd.DataFrame, rubric: Rubric, *, condition: str = "original", swap: bool = False,
              order: str = "given", seed: int | None = 0, repeats: int = 1) -> Iterator[Job]:
    """:func:`plan_jobs` one request at a time: the same jobs in the same order, for a caller that needs each
    request only once (a dry run over a million items would otherwise hold every rendered prompt at once).

    The items are checked here, before the first job is made: a missing field is refused up front, as
    :func:`plan_jobs` refuses it. They become dicts ``_RECORDS_CHUNK`` at a time (once to check them, once to
    plan), never all at once: at 10^7 items the dicts alone would take more memory than the table.
    """
    _check_items(_records(items), items, rubric)
    return _jobs(_records(items), rubric, condition, swap, order, seed, repeats)


def _records(items: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """The items as dicts, made ``_RECORDS_CHUNK`` at a time."""
    for start in range(0, len(items), _RECORDS_CHUNK):
        yield from items.iloc[start:start + _RECORDS_CHUNK].to_dict(orient="records")


def _check_items(records: Iterable[dict[str, Any]], items: pd.DataFrame, rubric: Rubric) -> None:
    """Refuse, before any request, an item missing a required field (each of ``records``, the items as dicts)
    and a judged item the rubric may not judge (e.g. one in its few-shot pool)."""
    for item in records:
        check_fields(item, rubric)
    exclude = getattr(rubric, "exclude_judged_items", None)
    if callable(exclude):  # e.g. few-shot pools must never contain an item being judged
        exclude(list(items["item_id"]))


def _jobs(records: Iterable[dict[str, Any]], rubric: Rubric, condition: str, swap: bool, order: str,
          seed: int | None, repeats: int) -> Iterator[Job]:
    n = 0
    for item in records:
        for cond, swapped in _conditions(condition, swap, order, seed or 0, str(item["item_id"])):
            requests = rubric.requests(item, swapped=swapped)
            for repeat in range(repeats):
                for request in requests:
                    yield Job(n, item, cond, swapped, repeat, request)
                    n += 1


class UnreadableReply(ParseFailure):
    """A paid reply that holds no answer to parse (no choices, content that is not text ...): a parse error
    that is never re-asked (asking again with it as the judge's turn makes no sense), kept as received."""

    def __init__(self, why: str) -> None:
        super().__init__(f"{UNREADABLE}: {why}")


def read_model_reply(rubric: Rubric, reply: ModelReply, request: JudgeRequest) -> list[ParsedRow]:
    """:func:`read_reply` of a whole reply: an unreadable one raises :class:`UnreadableReply`, a provider's
    refusal field with no answer text is a refusal."""
    if reply.unreadable is not None:
        raise UnreadableReply(reply.unreadable)
    if reply.refusal and not reply.text.strip():
        raise ParseFailure(f"the judge refused: {reply.refusal[:_REASON_CHARS]} (the provider's refusal field)",
                           status=REFUSAL)
    return read_reply(rubric, reply.text, request, reply.finish_reason, reasoning=reply.reasoning)


def read_reply(rubric: Rubric, text: str, request: JudgeRequest, finish_reason: str | None = None, *,
               reasoning: str | None = None) -> list[ParsedRow]:
    """The rubric's parse of one reply; raises :class:`ParseFailure` with a precise reason.

    A provider's content filter is a refusal; an empty text is a parse error; when the reply was
    cut at max_tokens the reason says so. ``reasoning`` (a reasoning model's thinking, delivered apart
    from the text) is never parsed; when the reply was cut at max_tokens after some reasoning and the
    answer cannot be read, the reason starts with ``thinking only`` like an unclosed ``<think>`` block.
    Any other exception the parser raises is a parse failure naming the exception's class, and so is a
    parsed row whose values are not values (:func:`checked_rows`).
    """
    if finish_reason == "content_filter":
        raise ParseFailure("provider content filter stopped the answer", status=REFUSAL)
    try:
        if not isinstance(text, str):
            raise ParseFailure(f"the output is a {type(text).__name__}, not text")
        if not text.strip():
            raise ParseFailure("empty output")
        try:
            parsed = rubric.parse(text, request)
        except ParseFailure:
            raise
        except Exception as exc:  # noqa: BLE001 - a parser's bug must not lose a paid answer: it becomes a row
            raise ParseFailure(f"the parser raised {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:_REASON_CHARS]}") from None
        return checked_rows(parsed)
    except ParseFailure as failure:
        if finish_reason == "length" and (reasoning or "").strip() and not failure.reason.startswith(THINKING_ONLY):
            raise ParseFailure(f"{THINKING_ONLY}: the reasoning used up the token budget before the answer was "
                               f"complete; {failure.reason} (output truncated at max_tokens)", failure.status) from None
        if finish_reason == "length":
            raise ParseFailure(failure.reason + " (output truncated at max_tokens)", failure.status) from None
        raise


def _finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def checked_rows(parsed: Any) -> list[ParsedRow]:
    """The parser's rows, when every one is a row of values the table can hold; else a ParseFailure saying
    which value is not one (a score that is NaN, infinite, text or a boolean; two values for one row; a row
    with no score, winner or verdict at all)."""
    if not isinstance(parsed, list | tuple):
        raise ParseFailure(f"the parser returned a {type(parsed).__name__}, not a list of rows")
    seen: set[RowKey] = set()
    for p in parsed:
        if not isinstance(p, ParsedRow) or not isinstance(p.key, RowKey):
            raise ParseFailure(f"the parser returned a {type(p).__name__} where a row belongs")
        where = p.key.criterion + (f" (side {p.key.side})" if p.key.side else "")
        if p.key in seen:
            raise ParseFailure(f"the parser returned two values for {where}")
        seen.add(p.key)
        for name in ("score", "confidence"):
            value = getattr(p, name)
            if value is not None and not _finite_number(value):
                raise ParseFailure(f"the {name} for {where} is {value!r:.60}, not a finite number")
        for name in ("winner", "verdict"):
            value = getattr(p, name)
            if value is not None and not isinstance(value, str):
                raise ParseFailure(f"the {name} for {where} is {value!r:.60}, not text")
        if p.score is None and p.winner is None and p.verdict is None:
            raise ParseFailure(f"the parser returned no value for {where}")
        if not isinstance(p.detail, Mapping):
            raise ParseFailure(f"the parser's detail for {where} is a {type(p.detail).__name__}, not a mapping")
        if p.detail:
            try:  # the table stores detail as JSON: what cannot be written would fail the whole table later
                json.dumps(p.detail, default=str)
            except (TypeError, ValueError, RecursionError) as exc:
                raise ParseFailure(f"the parser's detail for {where} cannot be stored ({type(exc).__name__})") from None
    return list(parsed)


def reply_detail(reply: ModelReply) -> dict[str, Any]:
    """What a reply adds to its rows' ``detail``: that it was unreadable (so :func:`judgelab.reparse` keeps its
    rows as they are: the raw reply is no answer to parse) and the notes on values recorded as unknown."""
    out: dict[str, Any] = {}
    if reply.unreadable is not None:
        out["unreadable_reply"] = True
    if reply.notes:
        out["reply_notes"] = list(reply.notes)
    return out


_FREE_TEXT = ("raw_output", "reasoning", "unscored_reason", "detail", "system_fingerprint")  # what a server wrote


def _redacted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row.update(redact({k: row[k] for k in _FREE_TEXT if row.get(k) is not None}))
    return rows


def unscored_rows(base: Mapping[str, Any], request: JudgeRequest, status: str, reason: str,
                  detail: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One unscored row per row the request was expected to produce."""
    return _redacted([{**base, "criterion": k.criterion, "side": k.side, "turn": k.turn, "status": status,
                       "unscored_reason": reason, "detail": dict(detail)} for k in request.expected_rows])


def scored_rows(base: Mapping[str, Any], request: JudgeRequest, parsed: Sequence[ParsedRow],
                detail: Mapping[str, Any],
                extra: Callable[[ParsedRow], Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One ok row per parsed row, plus a visible parse_error row for every expected row the parser forgot.

    ``extra(parsed_row)`` may add columns to a row (e.g. a logprob score); a ``"detail"`` key in
    what it returns is merged into the row's detail.
    """
    rows, seen = [], set()
    for p in parsed:
        seen.add(p.key)
        row: dict[str, Any] = {**base, "criterion": p.key.criterion, "side": p.key.side, "turn": p.key.turn, "status": OK,
                               "score": p.score, "winner": p.winner, "verdict": p.verdict,
                               "confidence": p.confidence}
        row_detail = {**detail, **p.detail}
        if extra is not None:
            added = dict(extra(p))
            row_detail.update(added.pop("detail", {}))
            row.update(added)
        row["detail"] = row_detail
        rows.append(row)
    forgotten = [k for k in request.expected_rows if k not in seen]
    for k in forgotten:
        where = k.criterion + (f" (side {k.side})" if k.side else "")
        rows.append({**base, "criterion": k.criterion, "side": k.side, "turn": k.turn, "status": PARSE_ERROR,
                     "unscored_reason": f"the parser returned no value for {where}", "detail": dict(detail)})
    return _redacted(rows)
