"""Bias probes: reusable experiments that perturb the judge's input, rerun it, and report each bias
with its uncertainty.

Every probe is ``judgelab.probes.<name>(items, rubric, model, **run_options) -> ProbeResult`` (the
run options are those of :func:`judgelab.run`: api_base, cache, concurrency, ...), and its module
has an analysis-only ``analyze(table, ...)`` that computes the same summary from an existing
judgments table, without calls (e.g. ``position.analyze(llmbar(...).table)``).

A probe reports like every statistic: its ``summary`` is a tidy frame with ``metric, estimate,
ci_low, ci_high, p_value, n, method``, plus ``condition`` and ``policy``, then ``note``
(:data:`judgelab.probes.result.SUMMARY_COLUMNS`); ``result.metric(name, condition)`` picks one row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgelab.errors import ConfigError, user_errors
from judgelab.probes import authority as _authority
from judgelab.probes import conversations as _conversations
from judgelab.probes import injection as _injection
from judgelab.probes import length as _length
from judgelab.probes import position as _position
from judgelab.probes import positive_bias as _positive_bias
from judgelab.probes import repeats as _repeats
from judgelab.probes import scale_order as _scale_order
from judgelab.probes import self_preference as _self_preference
from judgelab.probes import sycophancy as _sycophancy
from judgelab.probes.result import ProbeResult
from judgelab.rubrics.base import Rubric


@dataclass(frozen=True)
class Probe:
    """A bias probe: call it to run the experiment; ``.analyze(table, ...)`` analyses an existing table.

    Both guard their arguments (:func:`judgelab.errors.user_errors`): a caller's mistake is a JudgelabError.
    """

    name: str
    run: Callable[..., ProbeResult]
    analyze: Callable[..., ProbeResult]

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", user_errors(self.run))
        object.__setattr__(self, "analyze", user_errors(self.analyze))

    def __call__(self, items: Any, rubric: Rubric | str, model: str, **kw: Any) -> ProbeResult:
        return self.run(items, rubric, model, **kw)


# The package attributes below (judgelab.probes.position, ...) are these Probe objects; each
# module (judgelab/probes/position.py, ...) holds the experiment and its analysis.
position = Probe("position", _position.position, _position.analyze)
length = Probe("length", _length.length, _length.analyze)
authority = Probe("authority", _authority.authority, _authority.analyze)
sycophancy = Probe("sycophancy", _sycophancy.sycophancy, _sycophancy.analyze)
self_preference = Probe("self_preference", _self_preference.self_preference, _self_preference.analyze)
scale_order = Probe("scale_order", _scale_order.scale_order, _scale_order.analyze)
injection = Probe("injection", _injection.injection, _injection.analyze)
repeats = Probe("repeats", _repeats.repeats, _repeats.analyze)
positive_bias = Probe("positive_bias", _positive_bias.positive_bias, _positive_bias.analyze)

PROBES: dict[str, Probe] = {p.name: p for p in (position, length, authority, sycophancy, self_preference,
                                                 scale_order, injection, repeats, positive_bias)}

# probes of conversation judges (judgelab/probes/conversations.py): items whose candidates are chat-message lists
turn_history = Probe("turn_history", _conversations.turn_history, _conversations.turn_history_analyze)
conversation_order = Probe("conversation_order", _conversations.conversation_order,
                           _conversations.conversation_order_analyze)
pushback = Probe("pushback", _conversations.pushback, _conversations.pushback_analyze)
CONVERSATION_PROBES: dict[str, Probe] = {p.name: p for p in (turn_history, conversation_order, pushback)}


def run_probe(name: str, items: Any, rubric: Rubric | str, model: str, **kw: Any) -> ProbeResult:
    """Run the probe called ``name`` (one of :data:`PROBES`); ``kw`` goes to the probe and the runner."""
    if name not in PROBES:
        raise ConfigError(f"unknown probe {name!r}; available: {', '.join(sorted(PROBES))}")
    return PROBES[name](items, rubric, model, **kw)


__all__ = [
    "CONVERSATION_PROBES",
    "conversation_order",
    "pushback",
    "turn_history",
    "PROBES",
    "Probe",
    "ProbeResult",
    "authority",
    "injection",
    "length",
    "position",
    "positive_bias",
    "repeats",
    "run_probe",
    "scale_order",
    "self_preference",
    "sycophancy",
]
