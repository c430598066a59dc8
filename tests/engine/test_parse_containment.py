"""Nothing a parser raises or returns escapes the engine: it becomes a parse_error row naming what went wrong, in
a live run, in a rerun from the cache, in reparse and in a batch collection alike.

The judge is an in-process judge object (``model_name`` + async ``acall``) returning a fixed reply, so that
hypothesis can draw hundreds of parser behaviours in seconds; the engine path from reply to rows is the one
every model takes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab import judgments
from judgelab.backends.reply import ModelReply
from judgelab.engine.batch import _collect
from judgelab.engine.cache import RequestCache
from judgelab.engine.config import RunConfig
from judgelab.engine.items import read_items
from judgelab.engine.rows import plan_jobs
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey

ITEMS = [{"item_id": "a", "answer": "x"}, {"item_id": "b", "answer": "y"}]


class Boom(Exception):
    """A parser's own exception class, unknown to judgelab."""


EXCEPTIONS = [ValueError("bad value"), KeyError("scores"), TypeError("NoneType is not subscriptable"),
              RecursionError("maximum recursion depth exceeded"), OverflowError("cannot convert float infinity"),
              ZeroDivisionError("division by zero"), IndexError("list index out of range"), Boom("the parser's own"),
              UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), AttributeError("no attribute 'x'"),
              MemoryError("out of memory"), AssertionError("unreachable")]


def _circular() -> dict[str, Any]:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


# what a parser may hand back instead of good rows, and the words the row's reason must hold
BAD_RESULTS: list[tuple[Any, str]] = [
    ([ParsedRow(RowKey("quality"), score=math.nan)], "not a finite number"),
    ([ParsedRow(RowKey("quality"), score=math.inf)], "not a finite number"),
    ([ParsedRow(RowKey("quality"), score=-math.inf)], "not a finite number"),
    ([ParsedRow(RowKey("quality"), score="4")], "not a finite number"),  # type: ignore[arg-type]
    ([ParsedRow(RowKey("quality"), score=True)], "not a finite number"),  # type: ignore[arg-type]
    ([ParsedRow(RowKey("quality"), score=3.0, confidence=math.nan)], "not a finite number"),
    ([ParsedRow(RowKey("quality"), winner=1)], "not text"),  # type: ignore[arg-type]
    ([ParsedRow(RowKey("quality"), score=3.0), ParsedRow(RowKey("quality"), score=4.0)], "two values"),
    ([ParsedRow(RowKey("quality"), score=3.0, detail=["x"])], "not a mapping"),  # type: ignore[arg-type]
    ([ParsedRow(RowKey("quality"), score=3.0, detail=_circular())], "cannot be stored"),
    (None, "not a list of rows"),
    ({"quality": 3}, "not a list of rows"),
    ([("quality", 3)], "where a row belongs"),
    ([ParsedRow(RowKey("quality"), confidence=0.9)], "no value for quality"),
]


class Misbehaving:
    """A one-criterion rubric whose parse raises ``error`` or returns ``result``."""

    name, version, mode = "misbehaving", "1", "direct"
    required_fields = ("answer",)
    scale = (1, 5)
    default_temperature = 0.0

    def __init__(self, error: BaseException | None = None, result: Any = None) -> None:
        self.error, self.result = error, result

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        return [JudgeRequest([{"role": "user", "content": f"Rate {item['answer']}"}], (RowKey("quality"),),
                             max_tokens=20)]

    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        if self.error is not None:
            raise self.error
        return self.result

    def fingerprint(self) -> str:
        return f"misbehaving-{id(self)}"


class FixedJudge:
    """A judge object: every call returns the same reply, and is counted."""

    model_name = "openai/fixed-judge"

    def __init__(self, text: str = '{"score": 3}') -> None:
        self.text, self.calls = text, 0

    async def acall(self, model: str, messages: list[dict[str, str]], *, params: dict[str, Any],
                    timeout: float = 120.0) -> ModelReply:
        self.calls += 1
        return ModelReply(text=self.text, finish_reason="stop", input_tokens=5, output_tokens=3)


def _check(table, expected_words: str) -> None:
    t = judgments.validate(table)
    assert len(t) == len(ITEMS) and (t["status"] == "parse_error").all()
    assert t["score"].isna().all()
    assert t["unscored_reason"].str.contains(expected_words, regex=False).all(), t["unscored_reason"].tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.one_of(st.sampled_from(EXCEPTIONS).map(lambda e: ("raise", e)),
                      st.sampled_from(BAD_RESULTS).map(lambda r: ("return", r))))
def test_whatever_a_parser_does_the_run_the_rerun_and_reparse_end_in_rows(tmp_path_factory, case):
    """Invariant: for any exception a parser raises (its class named in the reason) and any value it returns
    that is not a row of values (the reason says which), every request ends as parse_error rows, re-asked once;
    a rerun from the cache makes no call and gives the same rows; reparse of the table gives them too."""
    how, what = case
    rubric = Misbehaving(error=what) if how == "raise" else Misbehaving(result=what[0])
    words = type(what).__name__ if how == "raise" else what[1]
    judge = FixedJudge()
    cache = RequestCache(tmp_path_factory.mktemp("cache") / "c.sqlite")
    first = judgelab.run(ITEMS, rubric, judge, cache=cache, progress=False, max_reasks=1)
    _check(first, words)
    assert judge.calls == 2 * len(ITEMS)  # each request asked, then re-asked once with the parse error
    again = judgelab.run(ITEMS, rubric, judge, cache=cache, progress=False, max_reasks=1)
    assert judge.calls == 2 * len(ITEMS)  # the cached answers are read again: no call, no crash
    _check(again, words)
    _check(judgelab.reparse(first, rubric), words)
    cache.close()


def test_a_batch_collection_turns_parser_failures_and_odd_bodies_into_rows():
    """The batch path reads every output line with the same readers: a parser exception, a body with no choices,
    content that is a number and a line that is no result all end as unscored rows with a reason."""
    rubric = Misbehaving(error=ValueError("bad"))
    jobs = plan_jobs(read_items([*ITEMS, {"item_id": "c", "answer": "z"}]), rubric)
    config = RunConfig()
    index = {f"r{i}": {"job": j.order, "item_id": str(j.item["item_id"]), "condition": j.condition,
                       "swapped": j.swapped, "repeat": j.repeat, "prompt_hash": j.request.prompt_hash(),
                       "temperature": config.temperature, "seed": 0} for i, j in enumerate(jobs)}
    state = {"model": "openai/batch-x", "fingerprint": "f", "judge": "j", "batch_id": "b", "status": "completed"}

    def body(content: Any) -> dict[str, Any]:
        return {"custom_id": "", "response": {"status_code": 200, "body": {
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": -1, "completion_tokens": "x"}}}}

    results = {"r0": body('{"score": 3}'), "r1": body(7),
               "r2": {"custom_id": "r2", "response": {"status_code": 200, "body": {"usage": {}}}}}
    table = _collect(jobs, rubric, state, index, results)
    reasons = dict(zip(table["item_id"], table["unscored_reason"], strict=True))
    assert (table["status"] != "ok").all()
    assert "the parser raised ValueError" in reasons["a"]
    assert reasons["b"].startswith("unreadable reply: the message content is a number")
    assert reasons["c"].startswith("unreadable reply: the reply has no choices")
    assert table["input_tokens"].isna().all()  # -1 and "x" are no token counts


def test_a_parse_failure_is_still_a_parse_failure():
    """The rubric's own ParseFailure keeps its reason and status (no 'parser raised' wrapping)."""
    rubric = Misbehaving(error=ParseFailure("no JSON object found in the output"))
    table = judgelab.run(ITEMS, rubric, FixedJudge(), cache=False, progress=False)
    assert set(table["unscored_reason"]) == {"no JSON object found in the output"}
