"""from_inspect on a log Inspect AI itself writes, offline: its mockllm model answers and grades (model_graded_qa,
model_graded_fact), with every outside connection refused while the eval runs."""

from __future__ import annotations

import socket

import pytest

import judgelab
from judgelab import judgments
from judgelab.imports import ImportFileError

pytest.importorskip("inspect_ai")


def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse every connection that is not to this machine: the eval must run without the network."""
    real = socket.socket.connect

    def connect(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost") and not isinstance(address, str | bytes):
            raise OSError(f"test is offline: connection to {address!r} refused")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: (_ for _ in ()).throw(
        OSError(f"test is offline: no name lookup of {host!r}")) if host not in ("127.0.0.1", "localhost", "::1")
        else socket._socket.getaddrinfo(host, *a, **k))  # type: ignore[attr-defined]


GRADES = ["The answer is right. GRADE: C", "Wrong. GRADE: I", "Hmm, no grade here", "GRADE: P"]


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two samples x two epochs x two model-graded scorers and one exact-match scorer, written by Inspect."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match, model_graded_fact, model_graded_qa
    from inspect_ai.solver import generate

    folder = tmp_path_factory.mktemp("inspect_logs")
    mp = pytest.MonkeyPatch()
    mp.setenv("INSPECT_LOG_DIR", str(folder))
    mp.setenv("INSPECT_DISPLAY", "none")
    _offline(mp)
    try:
        def out(text: str) -> ModelOutput:
            o = ModelOutput.from_content("mockllm/model", text)
            # usage given: mockllm otherwise counts tokens with tiktoken, which downloads its encoding
            o.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
            return o

        actor = get_model("mockllm/model", custom_outputs=[out("4"), out("Paris")] * 2)
        grader = get_model("mockllm/model", custom_outputs=[out(g) for g in GRADES] * 2)
        task = Task(dataset=[Sample(input="What is 2+2?", target="4", id="q1"),
                             Sample(input="Capital of France?", target="Paris", id="q2")],
                    solver=generate(), epochs=2,
                    scorer=[model_graded_qa(model=grader), model_graded_fact(model=grader, partial_credit=True),
                            match()])
        (log,) = eval(task, model=actor, display="none", max_samples=1, log_dir=str(folder))
    finally:
        mp.undo()
    assert log.status == "success", log.error
    return log.location


def test_an_inspect_log_becomes_a_judgments_table(inspect_log: str) -> None:
    """Samples are items, epochs repeats, the scorer the rubric, the grader model the judge, the explanation the
    raw output; C/P/I become 1/0.5/0 with the letter kept; a grade the grader did not give is a parse error; the
    exact-match scorer is no judge and is named as skipped; every row says where it came from."""
    table = judgelab.from_inspect(inspect_log)
    judgments.validate(table)
    assert set(table["rubric"]) == {"model_graded_qa", "model_graded_fact"}
    assert table.attrs["skipped_scorers"] == ["match"]
    assert sorted(set(table["item_id"])) == ["q1", "q2"] and sorted(set(table["repeat"])) == [0, 1]
    assert set(table["judge"]) == {"mockllm/model"} and set(table["system"]) == {"mockllm/model"}
    assert len(table) == 2 * 2 * 2
    ok = table[table["status"] == "ok"]
    assert {(v, s) for v, s in zip(ok["verdict"], ok["score"], strict=True)} <= {("C", 1.0), ("I", 0.0), ("P", 0.5)}
    assert all(r in GRADES for r in table["raw_output"].dropna()) or all(
        any(g in r for g in GRADES) for r in table["raw_output"].dropna())
    failed = table[table["status"] != "ok"]
    assert len(failed) >= 1 and (failed["status"] == "parse_error").all()
    assert failed["unscored_reason"].str.contains("no usable value").all()
    source = judgments.detail(table.iloc[0])["imported_from"]
    assert source["tool"] == "inspect_ai" and source["version"] and source["file"] == inspect_log
    assert set(table["run_id"]) == {f"inspect:{source['run_id']}:{r}" for r in ("model_graded_qa", "model_graded_fact")}
    every = judgelab.from_inspect(inspect_log, scorers="all")
    assert set(every["rubric"]) == {"model_graded_qa", "model_graded_fact", "match"}
    assert set(every.loc[every["rubric"] == "match", "judge"]) == {"scorer:match"}


def test_every_statistic_and_probe_reads_the_imported_table(inspect_log: str) -> None:
    """The imported table is a judgments table like any other: repeat agreement and a two-judge agreement run."""
    from judgelab.probes import repeats

    table = judgelab.from_inspect(inspect_log)
    qa = table[table["rubric"] == "model_graded_qa"]
    result = repeats.analyze(qa, n_resamples=200)
    assert len(result.summary) and {"metric", "estimate", "n"} <= set(result.summary.columns)


@pytest.mark.parametrize("content", [b"", b"not a log", b'{"version": 2}', b"\x00\x01PK"])
def test_a_foreign_or_broken_file_is_one_sentence(tmp_path, content: bytes) -> None:
    bad = tmp_path / "log.eval"
    bad.write_bytes(content)
    with pytest.raises(ImportFileError) as caught:
        judgelab.from_inspect(bad)
    assert str(bad) in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ImportFileError, match="no Inspect AI log"):
        judgelab.from_inspect(tmp_path / "absent.eval")
