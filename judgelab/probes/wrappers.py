"""Rubric wrappers that change what the judge sees while keeping the base rubric's parser.

Each wrapper implements the rubric/engine contract (judgelab/rubrics/base.py) by delegating to a
base rubric and rewriting the request messages; its fingerprint extends the base's, so the cache
never confuses a wrapped request with a plain one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from judgelab.errors import ConfigError
from judgelab.rubrics.base import JudgeRequest, ParsedRow, Rubric

__all__ = ["ChallengeRubric", "OpinionRubric", "UnfencedRubric", "WrappedRubric", "changes_prompt", "unfence"]


class WrappedRubric:
    """Delegates the contract to ``base``; subclasses rewrite messages in ``rewrite``."""

    wrapper = "wrapped"

    def __init__(self, base: Rubric) -> None:
        self.base = base
        self.name, self.version, self.mode = base.name, base.version, base.mode
        self.required_fields = tuple(base.required_fields)
        self.scale = base.scale
        self.default_temperature = base.default_temperature
        self.candidate_fields = tuple(getattr(base, "candidate_fields", ()) or ())

    def rewrite(self, messages: list[dict[str, str]], item: Mapping[str, Any]) -> list[dict[str, str]]:
        raise NotImplementedError

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        return [dataclasses.replace(r, messages=self.rewrite([dict(m) for m in r.messages], item))
                for r in self.base.requests(item, swapped=swapped)]

    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        return self.base.parse(raw, request)

    def settings(self) -> Any:
        """Everything of this wrapper that changes a prompt (hashed into the fingerprint)."""
        return None

    def fingerprint(self) -> str:
        blob = json.dumps([self.base.fingerprint(), self.wrapper, self.settings()], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.base!r}>"


def _last_user(messages: list[dict[str, str]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    raise ConfigError("the rubric's request has no user message to rewrite")


class _PerItemRubric(WrappedRubric):
    """A wrapper whose rewrite depends on the item: ``per_item`` maps item_id -> what to add."""

    missing = "nothing given for item {item_id!r}"  # the KeyError's message for an item without an entry

    def __init__(self, base: Rubric, per_item: Mapping[str, Any]) -> None:
        super().__init__(base)
        self.per_item = dict(per_item)

    def for_item(self, item: Mapping[str, Any]) -> Any:
        item_id = str(item.get("item_id"))
        if item_id not in self.per_item:
            raise KeyError(self.missing.format(item_id=item_id))
        return self.per_item[item_id]


class ChallengeRubric(_PerItemRubric):
    """Second turn of a conversation: the judge's first answer, then a user challenge.

    ``followups`` maps item_id -> (the judge's first raw output, the challenge text). The judge
    answers in the base rubric's format, so the base parser reads the revised verdict.
    """

    wrapper = "challenge"
    missing = "no first answer recorded for item {item_id!r}; it cannot be challenged"

    def __init__(self, base: Rubric, followups: Mapping[str, tuple[str, str]]) -> None:
        super().__init__(base, followups)

    def rewrite(self, messages: list[dict[str, str]], item: Mapping[str, Any]) -> list[dict[str, str]]:
        first, challenge = self.for_item(item)
        return messages + [{"role": "assistant", "content": first}, {"role": "user", "content": challenge}]

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        reqs = super().requests(item, swapped=swapped)
        if len(reqs) != 1:
            raise ConfigError(f"the sycophancy challenge needs a one-request rubric; {self.name!r} makes {len(reqs)}")
        return reqs

    def settings(self) -> Any:
        return None  # the first answer and the challenge are in the messages, hence in the cache key


class OpinionRubric(_PerItemRubric):
    """The user's opinion stated before the judge judges: ``opinions`` maps item_id -> text."""

    wrapper = "opinion"
    missing = "no user opinion given for item {item_id!r}"

    def __init__(self, base: Rubric, opinions: Mapping[str, str]) -> None:
        super().__init__(base, opinions)

    def rewrite(self, messages: list[dict[str, str]], item: Mapping[str, Any]) -> list[dict[str, str]]:
        i = _last_user(messages)
        messages[i]["content"] = f"{self.for_item(item)}\n\n{messages[i]['content']}"
        return messages


_NEUTRALISED = "<\\/"  # how judgelab.rubrics.prompting.neutralize writes "</"
_FENCE = re.compile(r'<([A-Za-z_][A-Za-z0-9_\-]*) id="[0-9a-f]{12}">\n(.*?)\n</\1 id="[0-9a-f]{12}">', re.S)


def unfence(text: str) -> str:
    """Remove judgelab's fences (judgelab.rubrics.prompting.fence) and restore neutralised closing tags."""

    def plain(m: re.Match[str]) -> str:
        body = m.group(2).replace(_NEUTRALISED, "</")
        return f"<{m.group(1)}>\n{body}\n</{m.group(1)}>"

    return _FENCE.sub(plain, text)


class UnfencedRubric(WrappedRubric):
    """The base rubric with its candidate-text fencing removed: the injection probe's control arm."""

    wrapper = "unfenced"

    def rewrite(self, messages: list[dict[str, str]], item: Mapping[str, Any]) -> list[dict[str, str]]:
        return [{**m, "content": unfence(m["content"])} for m in messages]


def changes_prompt(wrapper: Callable[[Rubric], WrappedRubric], rubric: Rubric, item: Mapping[str, Any]) -> bool:
    """Whether a wrapper changes the messages of this item at all (e.g. unfencing an unfenced rubric)."""
    plain = [r.messages for r in rubric.requests(item)]
    return plain != [r.messages for r in wrapper(rubric).requests(item)]
