"""One sentence for every user error in a bad environment: every command and API call, every fault of the files and
folders it touches, generated as the product of the two.

Faults (how each is produced: the tests run as root, for whom file modes do not forbid anything, so no chmod):

* a folder where a file is expected (an existing directory given as the file);
* a file where a folder is expected (an existing regular file given as the folder, HOME or XDG_CACHE_HOME);
* a path under a regular file (``<file>/x``: every open or mkdir fails with ENOTDIR);
* a path in /proc (the kernel refuses to create anything there, root included);
* a missing file, and a missing parent of an input;
* an unreadable file: a symlink with the right suffix to ``/proc/self/mem``, whose read at offset 0 fails with EIO
  for every user;
* a file in the wrong format (bytes that are not YAML, JSONL, Parquet, SQLite or JSON);
* an immutable folder or file (``chattr +i``: root cannot create, write or delete there either): an unwritable
  HOME/XDG_CACHE_HOME, a read-only cache file, an unwritable output folder; skipped where chattr is not available.

Commands: ``judgelab run`` (and ``--dry-run``), ``probe``, ``report``, ``rubrics show``, ``demo --out`` (through
typer's CliRunner: the command code, exit codes and stderr) and the Python API ``judgelab.run``, ``load``,
``save``, ``report``. Each applies every fault to every file or folder it takes (the rubric, the items, the output
folder, the cache file, the default cache's home, a run folder, a table, an HTML file) and asserts: the CLI exits
2 with ONE line on stderr starting "error: " that names the path given, and no traceback; the API raises a
JudgelabError whose one-line message names the path. A stub server on 127.0.0.1 answers, so a fault that went
unnoticed would end in a successful run (and fail the test), not in a connection error.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import judgelab
from judgelab.cli import app
from judgelab.errors import JudgelabError
from tests.reliability.helpers import direct_items, write_jsonl
from tests.support.fault_server import direct_score_answer
from tests.support.openai_stub import StubServer

MODEL = "openai/env-judge"
PAIRS = [{"item_id": f"p{k}", "prompt": f"Question {k}?", "response_a": f"Answer {k}.", "response_b": f"Reply {k}."}
         for k in range(2)]


def _answer(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    if "Response A" in prompt or "response_a" in prompt:
        comparison = [{"criterion": c, "analysis": "compared", "winner": "A"} for c in ("helpfulness", "accuracy")]
        return json.dumps({"comparison": comparison, "reasoning": "first", "winner": "A", "confidence": 0.9})
    return direct_score_answer(body, "env")


class World:
    """A scratch folder with good inputs, a benign run folder, a stub server, and the fault makers."""

    def __init__(self, root: Path, server: StubServer) -> None:
        self.root, self.server = root, server
        self.items = write_jsonl(root / "items.jsonl", direct_items(2))
        self.pairs = write_jsonl(root / "pairs.jsonl", PAIRS)
        self.rubric = root / "rubric.yaml"
        builtin = Path(judgelab.__file__).parent / "rubrics" / "builtin" / "direct_score.yaml"
        self.rubric.write_text(builtin.read_text().replace("system: direct_score", "system: builtin:direct_score")
                               .replace("user: direct_score", "user: builtin:direct_score"))
        self.file = root / "a-regular-file"
        self.file.write_text("x")
        self.run_dir = root / "a-run"
        self.run_dir.mkdir()
        table = judgelab.run(self.items, "direct_score", MODEL, api_base=server.base_url, cache=False, progress=False)
        judgelab.save(table, self.run_dir / "judgments.parquet")
        (self.run_dir / "run.json").write_text(json.dumps({"rubric_file": "direct_score", "items_file": str(self.items)}))
        self.table = table
        self.count = 0
        self.immutable: list[Path] = []

    def fresh(self, name: str) -> Path:
        self.count += 1
        folder = self.root / f"case-{self.count}"
        folder.mkdir()
        return folder / name

    def chattr(self, path: Path) -> None:
        """Make ``path`` immutable (root cannot write, create or delete in it either); skip where unsupported."""
        if shutil.which("chattr") is None:
            pytest.skip("chattr is not available: an unwritable path cannot be made for root here")
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i is not supported here: {done.stderr.strip()}")
        self.immutable.append(path)

    def release(self) -> None:
        for path in reversed(self.immutable):
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        self.immutable.clear()


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Iterator[World]:
    with StubServer(_answer) as server:
        w = World(tmp_path_factory.mktemp("environments"), server)
        try:
            yield w
        finally:
            w.release()


@pytest.fixture
def fresh_world(world) -> Iterator[World]:
    try:
        yield world
    finally:
        world.release()


# ------------------------------------------------------------------------------ faults, by the kind of path
# a fault: (world, a file name with the right suffix, a good file to copy from or None) -> the path to give
Fault = Callable[[World, str, "Path | None"], Path]


def _directory(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    path.mkdir()
    return path


def _under_a_file(w: World, name: str, good: Path | None) -> Path:
    return w.file / name


def _in_proc(w: World, name: str, good: Path | None) -> Path:
    return Path("/proc/judgelab-no-such-folder") / name


def _missing(w: World, name: str, good: Path | None) -> Path:
    return w.fresh("missing-folder") / name


def _unreadable(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    path.symlink_to("/proc/self/mem")
    return path


def _garbage(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    path.write_bytes(b"\x00\xff\xfe not what it should be \x89PNG\r\n\x1a\n" * 20)
    return path


def _existing_file(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    path.write_text("I am a file")
    return path


def _immutable_folder(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    w.chattr(path.parent)
    return path


def _immutable_folder_as_folder(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    path.mkdir()
    w.chattr(path)
    return path


def _immutable_file(w: World, name: str, good: Path | None) -> Path:
    path = w.fresh(name)
    if good is not None:
        shutil.copy(good, path)
    else:
        path.write_text("")
    w.chattr(path)
    return path


def _run_json(content: bytes | None) -> Fault:
    """A copy of the benign run folder whose run.json holds ``content`` (None: a symlink to /proc/self/mem)."""

    def make(w: World, name: str, good: Path | None) -> Path:
        folder = w.fresh(name)
        shutil.copytree(w.run_dir, folder)
        (folder / "run.json").unlink()
        if content is None:
            (folder / "run.json").symlink_to("/proc/self/mem")
        else:
            (folder / "run.json").write_bytes(content)
        return folder

    return make


INPUT_FAULTS: dict[str, Fault] = {"a folder": _directory, "under a file": _under_a_file, "missing": _missing,
                                  "unreadable (EIO)": _unreadable, "not the format": _garbage}
OUTPUT_FILE_FAULTS: dict[str, Fault] = {"a folder": _directory, "under a file": _under_a_file, "in /proc": _in_proc,
                                        "in an immutable folder": _immutable_folder,
                                        "an immutable file": _immutable_file}
OUTPUT_FOLDER_FAULTS: dict[str, Fault] = {"a file": _existing_file, "under a file": _under_a_file,
                                          "in /proc": _in_proc, "immutable": _immutable_folder_as_folder}
CACHE_FAULTS: dict[str, Fault] = {**OUTPUT_FILE_FAULTS, "unreadable (EIO)": _unreadable, "not SQLite": _garbage}
# the default cache lives in $XDG_CACHE_HOME/judgelab, else $HOME/.cache/judgelab
HOME_FAULTS: dict[str, Fault] = {"a file": _existing_file, "under a file": _under_a_file, "in /proc": _in_proc,
                                 "immutable": _immutable_folder_as_folder}


@dataclass(frozen=True)
class Slot:
    """One path a command takes: its name, the file name it should have, the faults that apply, a good file."""

    name: str
    file_name: str
    faults: dict[str, Fault]
    good: Callable[[World], Path | None] = lambda w: None


RUBRIC = Slot("rubric", "rubric.yaml", INPUT_FAULTS, lambda w: w.rubric)
ITEMS = Slot("items", "items.jsonl", INPUT_FAULTS, lambda w: w.items)
PAIR_ITEMS = Slot("items", "pairs.jsonl", INPUT_FAULTS, lambda w: w.pairs)
OUT = Slot("out", "out", OUTPUT_FOLDER_FAULTS)
CACHE = Slot("cache", "cache.sqlite", CACHE_FAULTS)
XDG = Slot("XDG_CACHE_HOME", "xdg", HOME_FAULTS)
HOME = Slot("HOME", "home", HOME_FAULTS)
RUN_FOLDER = Slot("run folder", "a-run", {"a file": _existing_file, "under a file": _under_a_file,
                                          "missing": _missing, "a folder without a table": _directory,
                                          "run.json not JSON": _run_json(b"{not json"),
                                          "run.json not an object": _run_json(b"[1, 2]"),
                                          "run.json unreadable (EIO)": _run_json(None)})
TABLE = Slot("table", "judgments.parquet", INPUT_FAULTS)
HTML = Slot("html", "report.html", {k: v for k, v in OUTPUT_FILE_FAULTS.items()})
SAVED = Slot("table to write", "judgments.parquet", OUTPUT_FILE_FAULTS)


# ------------------------------------------------------------------------------ commands
# a command: (world, {slot name: path given}) -> (CLI args, or a Python thunk)
def _common(w: World) -> list[str]:
    return ["--model", MODEL, "--api-base", w.server.base_url]


def _cache_args(paths: dict[str, Path]) -> list[str]:
    return ["--cache", str(paths["cache"])] if "cache" in paths else []


CLI: dict[str, tuple[tuple[Slot, ...], Callable[[World, dict[str, Path]], list[str]]]] = {
    "run": ((RUBRIC, ITEMS, OUT, CACHE, XDG, HOME), lambda w, p: [
        "run", "--rubric", str(p.get("rubric", w.rubric)), "--data", str(p.get("items", w.items)), "--out",
        str(p.get("out", w.fresh("out"))), *_common(w), *_cache_args(p)]),
    "run --dry-run": ((RUBRIC, ITEMS, CACHE, XDG, HOME), lambda w, p: [
        "run", "--dry-run", "--rubric", str(p.get("rubric", w.rubric)), "--data", str(p.get("items", w.items)),
        *_common(w), *_cache_args(p)]),
    "probe": ((PAIR_ITEMS, OUT, CACHE, XDG), lambda w, p: [
        "probe", "position", "--rubric", "pairwise", "--data", str(p.get("items", w.pairs)), "--out",
        str(p.get("out", w.fresh("out"))), *_common(w), *_cache_args(p)]),
    "report": ((RUN_FOLDER, HTML, ITEMS, RUBRIC), lambda w, p: [
        "report", str(p.get("run folder", w.run_dir)), "--out", str(p.get("html", w.fresh("report.html"))),
        *(["--data", str(p["items"])] if "items" in p else []),
        *(["--rubric", str(p["rubric"])] if "rubric" in p else [])]),
    "rubrics show": ((RUBRIC,), lambda w, p: ["rubrics", "show", str(p["rubric"])]),
    "demo": ((OUT, CACHE, XDG), lambda w, p: ["demo", "--out", str(p.get("out", w.fresh("demo"))),
                                               *_cache_args(p)]),
}

API: dict[str, tuple[tuple[Slot, ...], Callable[[World, dict[str, Path]], Callable[[], Any]]]] = {
    "judgelab.run": ((RUBRIC, ITEMS, CACHE, XDG, HOME), lambda w, p: lambda: judgelab.run(
        p.get("items", w.items), p.get("rubric", w.rubric), MODEL, api_base=w.server.base_url,
        cache=p.get("cache", True), progress=False)),
    "judgelab.load": ((TABLE,), lambda w, p: lambda: judgelab.load(p["table"])),
    "judgelab.save": ((SAVED,), lambda w, p: lambda: judgelab.save(w.table, p["table to write"])),
    "judgelab.report": ((RUN_FOLDER, HTML), lambda w, p: lambda: judgelab.report(
        p.get("run folder", w.run_dir), p.get("html", w.fresh("report.html")))),
}


def _cases(commands: dict[str, Any]) -> list[Any]:
    return [pytest.param(command, slot, fault, id=f"{command} | {slot.name} {fault}")
            for command, (slots, _) in commands.items() for slot in slots for fault in slot.faults]


def _env_for(slot: Slot, path: Path) -> dict[str, str | None]:
    """The environment of a run whose default cache home is faulty (no JUDGELAB_CACHE, no --cache)."""
    if slot is XDG:
        return {"XDG_CACHE_HOME": str(path), "JUDGELAB_CACHE": None}
    if slot is HOME:
        return {"HOME": str(path), "XDG_CACHE_HOME": None, "JUDGELAB_CACHE": None}
    return {}


def _shown(path: Path) -> str:
    """What the sentence must name: the path as given (for a faulty home, the home itself)."""
    return str(path)


@pytest.mark.parametrize(("command", "slot", "fault"), _cases(CLI))
def test_the_command_line_says_one_sentence(fresh_world, command, slot, fault):
    w = fresh_world
    path = slot.faults[fault](w, slot.file_name, slot.good(w))
    env = _env_for(slot, path)
    paths = {} if env else {slot.name: path}
    args = CLI[command][1](w, paths)
    if command in ("run", "run --dry-run", "probe", "demo") and slot not in (CACHE, XDG, HOME):
        args.append("--no-cache")  # the fault is elsewhere: keep the shared cache out of it
    result = CliRunner().invoke(app, args, env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("note: ")]
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (args, result.exit_code,
                                                                              result.exception, result.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert _shown(path) in lines[0], (lines[0], str(path))


@pytest.mark.parametrize(("command", "slot", "fault"), _cases(API))
def test_the_python_api_raises_one_judgelab_error(fresh_world, monkeypatch, command, slot, fault):
    w = fresh_world
    path = slot.faults[fault](w, slot.file_name, slot.good(w))
    env = _env_for(slot, path)
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    call = API[command][1](w, {} if env else {slot.name: path})
    with pytest.raises(JudgelabError) as error:
        call()
    message = str(error.value)
    assert "\n" not in message and _shown(path) in message, message


@pytest.mark.parametrize("exc", [PermissionError(13, "Permission denied", "/some/file"),
                                 OSError(28, "No space left on device", "/full/disk/x.parquet"),
                                 IsADirectoryError(21, "Is a directory", "/a/b", "/c/d"), OSError("no errno")])
def test_an_os_error_no_command_handled_is_still_one_line(monkeypatch, exc):
    """The safety net under every command: an OSError that escaped (the machine's files, not a judgelab bug) is
    one line naming the path and the reason, exit 2, no traceback."""
    import judgelab.rubrics

    def broken(*args: Any, **kwargs: Any) -> str:
        raise exc

    monkeypatch.setattr(judgelab.rubrics, "describe_rubric", broken)
    result = CliRunner().invoke(app, ["rubrics", "show", "direct_score"])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert (exc.filename or "") in lines[0] and (exc.strerror or str(exc)) in lines[0]
