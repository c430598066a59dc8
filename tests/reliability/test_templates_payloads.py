"""Every template-injection payload of the catalogue (tests/reliability/template_payloads.py) is refused on every
path that renders a rubric's templates, with one sentence naming the rubric, and has no effect.

Paths: loading the rubric and rendering its requests (what the engine, the RubricExplorer widget and the probes
do), ``describe_rubric`` (``judgelab rubrics show``, the YAML carries an ``example:`` block), ``judgelab.estimate``
(``--dry-run``), ``judgelab.run`` against a local stub server that records every prompt it receives, and
``judgelab.report`` on a run folder whose run.json names the hostile rubric (a run folder someone hands you). A
sample of each category also goes through the command line (``run``, ``run --dry-run``, ``rubrics show``,
``report``; typer's CliRunner, the command code itself) and one payload through the real ``judgelab`` process.

Invariants checked for every payload and path: a JudgelabError (CLI: exit code 2 and one ``error:`` line on
stderr, no traceback) whose one-line message names the rubric and the template field; the canary file a
successful payload would write does not exist; no request reached the server; no report file was written; the
value planted in the environment (under a name that does NOT look secret, so the redaction cannot hide a leak)
and no gadget output (a file's or command's content, a Python object's repr) appear in any message or file.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import judgelab
from judgelab.cli import app
from judgelab.errors import JudgelabError
from judgelab.rubrics import describe_rubric, load_rubric
from tests.reliability.helpers import REPO, cli_env, direct_items, write_jsonl
from tests.reliability.template_payloads import CATALOGUE, GADGET_TELLTALES, Payload, counts
from tests.support.fault_server import direct_score_answer
from tests.support.openai_stub import StubServer

ENV_NAME = "JUDGELAB_TEMPLATE_PROBE_VALUE"  # not secret-looking: only the sandbox can keep it out
MODEL = "openai/template-judge"
BASE_SPEC: dict[str, Any] = {
    "name": "evil", "version": "1", "kind": "direct_score", "mode": "direct",
    "required_fields": ["prompt", "response"], "candidate_fields": ["response"], "scale": {"min": 1, "max": 5},
    "criteria": [{"name": "overall", "definition": "Is it good?"}], "output": {"format": "json"},
    "templates": {"user": "Rate {{ item.response | fence('response') }}"}, "verdict": {"rule": "weighted_mean"},
    "example": {"item_id": "ex1", "prompt": "What is 2 + 2?", "response": "It is 4."},
}


class Lab:
    """The folder a hostile rubric lives in, with the files its payloads aim at, and the server."""

    def __init__(self, root: Path, server: StubServer, secret: str) -> None:
        self.root, self.server, self.secret = root, server, secret
        self.folder = root / "rubric"
        self.canary = root / "CANARY-written-by-a-template"
        self.items = write_jsonl(root / "items.jsonl", direct_items(2))
        self.run_dir = root / "benign-run"
        self.count = 0

    def place(self, payload: Payload) -> tuple[str, Path]:
        """Write a rubric holding ``payload`` (in turn: inline user template, a .j2 file, the system template)."""
        self.count += 1
        name = f"evil-{self.count}"
        source = payload.render(str(self.canary), ENV_NAME).replace("{outside}", str(self.root / "outside.j2"))
        spec = json.loads(json.dumps(BASE_SPEC))
        spec["name"] = name
        where = self.count % 3
        if where == 0:
            spec["templates"]["user"] = source
        elif where == 1:
            (self.folder / f"{name}.user.j2").write_text(source, encoding="utf-8")
            spec["templates"]["user"] = f"{name}.user.j2"
        else:
            spec["templates"]["system"] = source
        path = self.folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
        return name, path

    def leaks(self, text: str) -> list[str]:
        found = [t for t in GADGET_TELLTALES if t in text]
        return found + (["the planted environment value"] if self.secret in text else [])


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("templates")
    secret = "planted-" + secrets.token_hex(12)
    os.environ[ENV_NAME] = secret
    (root / "outside.j2").write_text("OUTSIDE-TEMPLATE-CONTENT {{ 6 * 7 }}")
    folder = root / "rubric"
    (folder / "sub").mkdir(parents=True)
    (folder / "link_out.j2").symlink_to(root / "outside.j2")
    (folder / "linkdir").symlink_to(root, target_is_directory=True)
    (folder / "self.j2").write_text("{% include 'self.j2' %}")
    (folder / "cycle_a.j2").write_text("{% extends 'cycle_b.j2' %}")
    (folder / "cycle_b.j2").write_text("{% extends 'cycle_a.j2' %}")
    (folder / "also.j2").write_text("also")
    (folder / "evil.yaml").write_text(yaml.safe_dump(BASE_SPEC))
    try:
        with StubServer(lambda body: direct_score_answer(body, "tpl")) as server:
            lab = Lab(root, server, secret)
            benign = judgelab.run(lab.items, "direct_score", MODEL, api_base=server.base_url, cache=False,
                                  progress=False)
            lab.run_dir.mkdir()
            judgelab.save(benign, lab.run_dir / "judgments.parquet")
            server.requests.clear()
            yield lab
    finally:
        os.environ.pop(ENV_NAME, None)


def _report_dir(lab: Lab, rubric: Path) -> Path:
    """A copy of the benign run folder whose run.json names ``rubric`` (as `judgelab run` writes it)."""
    folder = lab.root / f"run-{rubric.stem}"
    folder.mkdir()
    (folder / "judgments.parquet").write_bytes((lab.run_dir / "judgments.parquet").read_bytes())
    (folder / "run.json").write_text(json.dumps({"model": MODEL, "rubric": rubric.stem, "rubric_file": str(rubric),
                                                 "rubric_params": {}, "items_file": str(lab.items)}))
    return folder


def _paths(lab: Lab, path: Path, report: bool = True) -> dict[str, Any]:
    """Each Python path that renders the rubric at ``path``, as a thunk (the report, ~0.1 s, when ``report``)."""

    def load_and_render() -> Any:
        rubric = load_rubric(path)
        return [rubric.requests(item) for item in direct_items(2)]

    return {
        "load + requests": load_and_render,
        "describe_rubric (rubrics show)": lambda: describe_rubric(path),
        "estimate (--dry-run)": lambda: judgelab.estimate(lab.items, str(path), MODEL, api_base=lab.server.base_url,
                                                          cache=False),
        "run": lambda: judgelab.run(lab.items, str(path), MODEL, api_base=lab.server.base_url, cache=False,
                                    progress=False),
    } | ({"report of a run folder": lambda: judgelab.report(report_dir, report_dir / "report.html")}
         if report and (report_dir := _report_dir(lab, path)) else {})


def _check(lab: Lab, payload: Payload, report: bool = True) -> list[str]:
    """The broken invariants of one payload, over every Python path (empty: all held)."""
    name, path = lab.place(payload)
    problems = []
    for where, call in _paths(lab, path, report).items():
        try:
            out = call()
        except JudgelabError as exc:
            message = str(exc)
            if "\n" in message or f"rubric {name!r}" not in message or "templates." not in message:
                problems.append(f"{where}: not one sentence naming the rubric and field: {message!r}")
            if lab.leaks(message):
                problems.append(f"{where}: the message shows {lab.leaks(message)}")
        except BaseException as exc:  # noqa: BLE001 - anything else is the failure this test looks for
            problems.append(f"{where}: {type(exc).__name__}: {str(exc)[:200]}")
        else:
            problems.append(f"{where}: not refused; it gave {str(out)[:200]!r}")
    if lab.canary.exists():
        problems.append("the canary file was written")
        lab.canary.unlink()
    if lab.server.requests:
        problems.append(f"{len(lab.server.requests)} request(s) reached the server")
        lab.server.requests.clear()
    if (lab.root / f"run-{path.stem}" / "report.html").exists():
        problems.append("a report was written")
    return [f"{payload.template!r} -> {p}" for p in problems]


CATEGORIES = sorted(counts())
REPORT_EVERY = 6  # the report path reads a whole run folder (~0.1 s): every 6th payload here, all under -m slow


def _category(category: str, report_every: int, lab: Lab) -> None:
    payloads = [p for p in CATALOGUE if p.category == category]
    problems = [problem for k, payload in enumerate(payloads) for problem in _check(lab, payload, k % report_every == 0)]
    assert not problems, f"{len(problems)} broken invariant(s) of {len(payloads)} payloads:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_payload_is_refused_on_every_path_with_no_effect(category, lab):
    _category(category, REPORT_EVERY, lab)


@pytest.mark.slow
@pytest.mark.parametrize("category", CATEGORIES)
def test_every_payload_is_refused_by_the_report_too(category, lab):
    _category(category, 1, lab)


def test_no_file_left_behind_and_nothing_leaked_into_any_file(lab):
    """After the whole catalogue: every file under the lab folder is one the tests wrote, none holds a leak."""
    for payload in CATALOGUE[:: max(len(CATALOGUE) // 60, 1)]:  # a spread of the catalogue (the rest ran above)
        assert not _check(lab, payload)
    for path in lab.root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert path.suffix in {".yaml", ".j2", ".jsonl", ".json", ".parquet"}, path
            if path.suffix in {".json", ".parquet"}:  # what judgelab wrote (the rest the tests wrote)
                text = path.read_bytes().decode("utf-8", "replace")
                assert not lab.leaks(text), (path, lab.leaks(text))
    assert not lab.canary.exists()


def _cli(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("category", CATEGORIES)
def test_the_command_line_refuses_in_one_line(category, lab):
    """The first two payloads of each category through `run`, `run --dry-run`, `rubrics show` and `report`."""
    for payload in [p for p in CATALOGUE if p.category == category][:2]:
        name, path = lab.place(payload)
        report_dir = _report_dir(lab, path)
        out = lab.root / f"out-{name}"
        common = ["--data", str(lab.items), "--model", MODEL, "--api-base", lab.server.base_url, "--no-cache"]
        for args in (["run", "--rubric", str(path), "--out", str(out), *common],
                     ["run", "--rubric", str(path), "--dry-run", *common],
                     ["rubrics", "show", str(path)],
                     ["report", str(report_dir)]):
            code, stdout, stderr = _cli(args)
            lines = stderr.strip().splitlines()
            assert code == 2, (payload.template, args[0], code, stdout, stderr)
            assert len(lines) == 1 and lines[0].startswith("error: ") and f"rubric {name!r}" in lines[0], stderr
            assert "Traceback" not in stderr and not lab.leaks(stdout + stderr), (stdout, stderr)
        assert not (out / "judgments.parquet").exists() and not (report_dir / "report.html").exists()
        assert not lab.canary.exists() and not lab.server.requests


def test_the_real_command_refuses_without_a_traceback(lab):
    """`judgelab rubrics show` in its own process (the console entry point, judgelab.cli.main)."""
    name, path = lab.place(Payload("x", "{{ cycler.__init__.__globals__.os.popen('touch {canary}').read() }}"))
    proc = subprocess.run([sys.executable, "-m", "judgelab.cli", "rubrics", "show", str(path)], capture_output=True,
                          text=True, env=cli_env(), cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and f"rubric {name!r}" in proc.stderr and "refused" in proc.stderr
    assert not lab.canary.exists()


def test_catalogue_counts():
    """The catalogue is as large as its parts say (a guard against a generator that silently shrinks)."""
    assert counts() == {
        "attribute walk from a literal": 7 * 9 * 5,
        "walk from a default Jinja global": 6 * 7 * 3,
        "web framework / builtins name": 16 * 6,
        "walk from an object judgelab passes": 9 * 16 + 16,
        "environment read": 10,
        "format-string trick": 14,
        "include / import / extends outside the folder": 7 * 18,
        "resource bomb": 22,
    }
    assert len({p.template for p in CATALOGUE}) == len(CATALOGUE)


# ------------------------------------------------------------------------------ the other paths that render
SAMPLE = [next(p for p in CATALOGUE if p.category == c) for c in CATEGORIES]  # the first payload of each family


def _pairwise(lab: Lab, payload: Payload) -> tuple[str, Path]:
    """A hostile rubric of the pairwise kind (what the position probe needs), built from the built-in one."""
    lab.count += 1
    name = f"evil-pair-{lab.count}"
    builtin = Path(judgelab.__file__).parent / "rubrics" / "builtin" / "pairwise.yaml"
    spec = yaml.safe_load(builtin.read_text())
    spec["name"] = name
    spec["templates"] = {"user": payload.render(str(lab.canary), ENV_NAME).replace("{outside}", "x.j2")}
    path = lab.folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return name, path


def test_probes_variants_reparse_diff_and_the_explorer_refuse_too(lab):
    """The paths that render a rubric again: a bias probe (position: both orders re-rendered), a variant whose
    new system text is the payload, judgelab.reparse, diff_rubrics, and the RubricExplorer widget. Each refuses
    in one sentence naming the rubric, sends nothing, writes no canary."""
    from judgelab.probes import run_probe
    from judgelab.rubrics import diff_rubrics

    pairs = [{"item_id": "p1", "prompt": "Q?", "response_a": "A.", "response_b": "B."}]
    for payload in SAMPLE:
        name, path = lab.place(payload)
        pair_name, pair_path = _pairwise(lab, payload)
        source = payload.render(str(lab.canary), ENV_NAME).replace("{outside}", "x.j2")
        calls = {  # (the rubric the sentence must name, the call); the loop's values bound as defaults
            "position probe": (pair_name, lambda pp=pair_path: run_probe(
                "position", pairs, str(pp), MODEL, api_base=lab.server.base_url, cache=False, progress=False)),
            "variant": ("direct_score-v", lambda src=source: load_rubric("direct_score").variant(
                name="direct_score-v", system=src).requests(direct_items(1)[0])),
            "reparse": (name, lambda rp=path: judgelab.reparse(judgelab.load(lab.run_dir / "judgments.parquet"), rp,
                                                               lab.items)),
            "diff_rubrics": (name, lambda rp=path: diff_rubrics("direct_score", rp)),
        }
        for where, (rubric_name, call) in calls.items():
            with pytest.raises(JudgelabError) as refused:
                call()
            message = str(refused.value)
            assert "\n" not in message and f"rubric {rubric_name!r}" in message and "templates." in message, \
                (where, payload.template, message)
            assert not lab.leaks(message), (where, message)
        assert not lab.canary.exists() and not lab.server.requests


def test_the_rubric_explorer_refuses_a_hostile_rubric(lab):
    """The RubricExplorer widget renders the prompt of the rubric picked: a hostile one is refused in one sentence."""
    pytest.importorskip("ipywidgets")
    from judgelab.viz.widgets import RubricExplorer

    name, path = lab.place(SAMPLE[0])
    with pytest.raises(JudgelabError, match=f"rubric {name!r}, templates"):
        RubricExplorer(rubrics=[str(path)], rubric=str(path), cache=False)
    assert not lab.canary.exists()
