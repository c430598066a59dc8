"""A non-editable install works: the wheel carries the built-in rubrics, their example items, the data-set
manifests and the study tables, and `judgelab demo` judges its items from an installed copy.

The wheel is built from this checkout and installed with --no-deps into a fresh virtual environment whose
dependencies come from the test environment (a .pth line; the project's own editable hook is not processed
there), and everything runs from a folder outside the checkout, so the only judgelab it can import is the
installed one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _sh(*cmd: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    work = tmp_path_factory.mktemp("wheel")
    _sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"), str(REPO), cwd=work)
    wheel = next((work / "dist").glob("judgelab-*.whl"))
    venv = work / "venv"
    _sh(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=work)
    py = venv / "bin" / "python"
    _sh(sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--quiet", str(wheel), cwd=work)
    site = Path(_sh(str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work).stdout.strip())
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUDGELAB_DATA_DIR")}
    env.update(JUDGELAB_CACHE=str(work / "cache.sqlite"), HOME=str(work))
    return venv, env


@pytest.mark.slow
def test_installed_package_has_its_data_files(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    venv, env = installed
    script = (
        "import json, judgelab\n"
        "from judgelab.rubrics import example_items, list_rubrics, load_rubric\n"
        "from judgelab.datasets import sources\n"
        "from judgelab.studies import paper_table1\n"
        "try:\n"
        "    import judgelab.runner  # the 0.1 path of judgelab.engine.runner: no shim serves it\n"
        "    old_path = 'importable'\n"
        "except ModuleNotFoundError:\n"
        "    old_path = 'gone'\n"
        "print(json.dumps({'file': judgelab.__file__, 'rubrics': list_rubrics(),\n"
        "    'examples': {n: len(example_items(n)) for n in list_rubrics()},\n"
        "    'fingerprints': {n: load_rubric(n).fingerprint() for n in list_rubrics()},\n"
        "    'paper_rows': len(paper_table1()), 'old_path': old_path, 'run_is_callable': callable(judgelab.run),\n"
        "    'byod_rows': len(judgelab.from_frame(judgelab.datasets.example_path('qa_verdicts_wide.csv'),\n"
        "        item_id='answer_id', judges=['judge_large'], gold='human', kind='label'))}))\n"
    )
    out = json.loads(_sh(str(venv / "bin" / "python"), "-c", script, cwd=tmp_path, env=env).stdout)
    assert Path(out["file"]).is_relative_to(venv), f"imported {out['file']}, not the installed copy"
    # the installed rubrics are the checkout's, byte for byte
    from judgelab.rubrics import list_rubrics, load_rubric

    assert out["rubrics"] == list_rubrics() and all(n > 0 for n in out["examples"].values()), out["examples"]

    assert out["fingerprints"] == {n: load_rubric(n).fingerprint() for n in out["rubrics"]}
    assert out["paper_rows"] == 24 and out["old_path"] == "gone" and out["run_is_callable"]
    assert out["byod_rows"] > 0  # the bring-your-own-data example files ship in the wheel
    manifests = _sh(str(venv / "bin" / "python"), "-c",
                    "from judgelab.datasets.sources import MANIFEST_DIR; print(sorted(p.name for p in MANIFEST_DIR.glob('*.json')))",
                    cwd=tmp_path, env=env).stdout
    assert all(f"{name}.json" in manifests for name in ("LLMBar", "LLM_summeval", "OpenQA-eval", "MT-Bench"))


@pytest.mark.slow
@pytest.mark.local_model
def test_installed_demo_judges_its_items(installed: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    venv, env = installed
    proc = _sh(str(venv / "bin" / "judgelab"), "demo", "--out", str(tmp_path / "demo"), cwd=tmp_path, env=env)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    from judgelab.studies.demo import demo_items  # the demo's items ship in the package (studies/demo_data)

    n_items = len(demo_items())
    assert n_items > 0 and summary["items"] == n_items and summary["judgments"] >= n_items
    assert (tmp_path / "demo" / "judgments.parquet").exists()
