"""Every error a caller can cause through the public API is a JudgelabError (never a bare KeyError, TypeError or
ValueError from inside): the public functions are walked with bad arguments.

The walk covers ``judgelab.__all__``, ``judgelab.stats.__all__``, ``judgelab.datasets.__all__``, every probe's run
and analysis, the ensembles' public functions and ``judgments.majority`` / ``combine``. Functions that would call a
model (run, arun, run_grid, batch_run, estimate, reparse ...) get only arguments that fail before any call, and the
socket layer is closed for the whole module (a mock, because no request may leave this machine): a call that
reached the network would fail loudly instead. The importers (from_inspect, from_promptfoo, from_deepeval) are in
``judgelab.__all__``: junk paths and options end in their ImportFileError.
"""

from __future__ import annotations

import inspect
import socket
import typing
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab import datasets, judgments, probes, stats
from judgelab.errors import JudgelabError
from judgelab.judgments import make_table

# calls a model, starts a server or a widget: only hand-picked arguments that fail first (test_model_paths_...)
MODEL_PATHS = {"run", "arun", "run_grid", "arun_grid", "estimate", "aestimate", "batch_run", "abatch_run", "reparse",
               "router_judge"}
FRAME_PARAMS = {"data", "table", "frame", "df", "ratings", "results", "cm", "meta", "dist", "pa", "verdicts",
                "cheap", "strong", "cheap_rows", "strong_rows", "strong_all", "tables"}
OPTION_PARAMS = {"method", "policy", "average", "interval", "weights", "metric", "ties", "unscored", "aggregate",
                 "alternative", "variant", "level", "how", "rule", "tie", "kind", "strategy", "layout",
                 "cluster_resampling", "duplicates", "rating_winner", "conditions", "escalate_when"}


@pytest.fixture(autouse=True)
def _no_network_and_a_scratch_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise RuntimeError("no network in the error walk")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.chdir(tmp_path)  # a function that writes (save, export_review, report) writes here


def _table() -> pd.DataFrame:
    """A small valid judgments table: gold winners, and one judge in both orders with winners and scores."""
    rows = []
    for i in range(6):
        base = {"run_id": "r", "item_id": f"i{i}", "rubric": "r", "criterion": "overall", "repeat": 0}
        rows.append({**base, "judge": "gold", "condition": "original", "winner": "AB"[i % 2], "score": float(i % 3)})
        for condition in ("original", "swapped"):
            rows.append({**base, "judge": "j1", "condition": condition, "winner": "AB"[(i // 2) % 2],
                         "score": float(i % 4)})
    return make_table(rows)


BAD_VALUES: dict[str, Callable[[], Any]] = {
    "a number": lambda: 42,
    "an unknown name": lambda: "no_such_name",
    "a list of unknown names": lambda: ["no_such_name"],
    "an empty frame": pd.DataFrame,
    "an empty judgments table": judgments.empty_table,
    "a frame of other columns": lambda: pd.DataFrame({"a": [1, 2], "b": [3, 4]}),
}


def _public_functions() -> list[tuple[str, Callable[..., Any]]]:
    found: dict[str, Callable[..., Any]] = {}
    for module, names in ((judgelab, judgelab.__all__), (stats, stats.__all__), (datasets, datasets.__all__)):
        for name in names:
            value = getattr(module, name)
            if inspect.isfunction(value) and name not in MODEL_PATHS and name != "__version__":
                found[f"{module.__name__}.{name}"] = value
    for name, probe in probes.PROBES.items():
        found[f"probes.{name}.analyze"] = probe.analyze
    from judgelab.ensembles import cascades, confidence, latent, panels, review

    for module in (panels, cascades, confidence, review, latent):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                found[f"{module.__name__}.{name}"] = value
    from judgelab import labels

    for name in labels.__all__:
        if inspect.isfunction(getattr(labels, name)):
            found[f"labels.{name}"] = getattr(labels, name)
    found["judgments.majority"] = judgments.majority
    found["judgments.combine"] = judgments.combine
    found["distributed.RayExecutor"] = judgelab.distributed.RayExecutor  # a class: its constructor checks everything
    from judgelab.distributed import data as ray_data_steps

    for name in ray_data_steps.__all__:
        found[f"distributed.data.{name}"] = getattr(ray_data_steps, name)
    return sorted(found.items())


FUNCTIONS = _public_functions()


def _bad_calls(func: Callable[..., Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every required argument given one kind of bad value; then a valid table with unknown names and, one at a
    time, each option outside its allowed values."""
    signature = inspect.signature(func)
    required = [p for p in signature.parameters.values() if p.default is p.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    for kind, make in BAD_VALUES.items():
        yield kind, {p.name: make() for p in required}
    names = [p.name for p in required]
    if not (set(names) & FRAME_PARAMS or "data" in signature.parameters):
        return
    base = {n: (_table() if n in FRAME_PARAMS else "no_such_name") for n in names}
    if "data" in signature.parameters and "data" not in base:
        base["data"] = _table()
    yield "a table with unknown names", base
    for param in signature.parameters.values():
        if param.name in OPTION_PARAMS and param.name not in FRAME_PARAMS:
            yield f"a table with {param.name}='no_such_option'", {**base, param.name: "no_such_option"}


def _outcome(func: Callable[..., Any], kwargs: dict[str, Any]) -> str | None:
    """None when the call succeeded or raised a JudgelabError, else what it raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(**kwargs)
    except JudgelabError:
        return None
    except Exception as exc:  # noqa: BLE001 - the point: anything else is reported
        return f"{type(exc).__name__}: {str(exc)[:160]}"
    return None


@pytest.mark.parametrize(("name", "func"), FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_bad_arguments_raise_judgelab_errors(name: str, func: Callable[..., Any]) -> None:
    """Invariant: wrong types, unknown column / judge / criterion names, unknown options and empty frames end in a
    JudgelabError (or the call succeeds, when the value happens to be valid) -- never another exception."""
    failures = [f"[{kind}] {outcome}" for kind, kwargs in _bad_calls(func)
                if (outcome := _outcome(func, kwargs)) is not None]
    assert not failures, f"{name}:\n" + "\n".join(failures)


junk = st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=8), st.none(), st.booleans(),
                 st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                 st.just(pd.DataFrame({"x": [1.0]})), st.just(np.array([[1, 2], [3, 4]])))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FUNCTIONS), st.data())
def test_generated_junk_in_any_argument_is_a_judgelab_error(case: tuple[str, Callable[..., Any]],
                                                            data: st.DataObject) -> None:
    """Invariant: the valid table plus a generated junk value (number, NaN, text, None, list, dict, frame, 2-D array)
    in any one argument -- required or optional -- succeeds or raises a JudgelabError."""
    name, func = case
    signature = inspect.signature(func)
    params = [p for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not params:
        return
    kwargs = {p.name: (_table() if p.name in FRAME_PARAMS else "j1") for p in params if p.default is p.empty}
    target = data.draw(st.sampled_from(params), label="argument")
    kwargs[target.name] = data.draw(junk, label="value")
    outcome = _outcome(func, kwargs)
    assert outcome is None, f"{name}({target.name}={kwargs[target.name]!r}) raised {outcome}"


def test_model_paths_refuse_bad_arguments_before_any_call() -> None:
    """The runner's entry points check their arguments before calling a model."""
    items = pd.DataFrame({"item_id": ["a"], "question": ["q"], "answer": ["x"]})
    for call in (lambda: judgelab.run(items, "no_such_rubric", "some-model"),
                 lambda: judgelab.run(42, "direct_score", "some-model"),
                 lambda: judgelab.estimate(items, "no_such_rubric", "some-model"),
                 lambda: judgelab.run_grid(items, ["no_such_rubric"], ["some-model"]),
                 lambda: judgelab.batch_run(items, "no_such_rubric", "some-model", state_path="batch.json"),
                 lambda: judgelab.reparse(42, "direct_score"),
                 lambda: probes.position(items, "no_such_rubric", "some-model"),
                 lambda: judgelab.run(items, "direct_score", "some-model", executor=42)):
        assert _outcome(call, {}) is None


def test_the_guard_names_the_argument_and_keeps_the_cause() -> None:
    """A translated error names the function and the argument, and chains the original exception; a function's
    own check keeps its class and sentence (the guard speaks only when the call failed otherwise)."""
    with pytest.raises(JudgelabError, match=r"pairwise_accuracy\(\): table must be a pandas DataFrame, got 42"):
        stats.pairwise_accuracy(42)
    with pytest.raises(JudgelabError, match=r"policy must be one of .*'exclude', 'tie', 'wrong', 'net'"):
        stats.pairwise_accuracy(_table(), policy="ties")  # the function's own check (and class) stands
    with pytest.raises(JudgelabError, match=r"pairwise_accuracy\(\): by must be a list of names, got 42"):
        stats.pairwise_accuracy(_table(), by=42)
    from judgelab.ensembles import confidence

    with pytest.raises(JudgelabError, match=r"has no column 'condition'") as info:
        confidence.position_consistency(pd.DataFrame({"judge": ["a"]}))
    assert isinstance(info.value.__cause__, KeyError)
    assert typing.get_type_hints(stats.pairwise_accuracy)  # the wrapper keeps the signature and annotations
    assert inspect.signature(stats.pairwise_accuracy).parameters["policy"].default == "exclude"


@pytest.mark.parametrize("call", [
    lambda: judgelab.show(_table(), columns=0),
    lambda: judgelab.show(_table(), columns=[["item_id"]]),
    lambda: judgelab.show(_table(), max_rows=-1),
    lambda: judgelab.stats.n_for_correlation(float("nan")),
    lambda: judgelab.stats.n_for_correlation(0.3, float("nan")),
    lambda: judgelab.stats.n_for_correlation_difference(0.5, 0.3, r_between=float("nan")),
    lambda: probes.self_preference.analyze(_table(), pd.DataFrame({"x": [1.0]})),
], ids=["show-columns-int", "show-columns-nested", "show-max-rows", "n_for_correlation-nan",
        "n_for_correlation-null-nan", "n_for_correlation_difference-nan", "self_preference-items-without-ids"])
def test_junk_the_generated_walks_found_is_a_judgelab_error(call: Callable[[], Any]) -> None:
    """Values the generated walks drew once (a seeded CI run, an exhaustive walk of 13 junk values over every
    argument of every public function): each is refused with a JudgelabError, replayed here on every run."""
    with pytest.raises(JudgelabError):
        call()
