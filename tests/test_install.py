"""The install `make install` does from uv.lock: the embedded judge's llama.cpp is the build pyproject.toml asks
for, and a change of the lock (or of pyproject.toml) makes the next `make` reinstall."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _llama_cmake_args() -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return project["tool"]["uv"]["extra-build-variables"]["llama-cpp-python"]["CMAKE_ARGS"]


def test_llama_cpp_is_built_with_the_flags_in_pyproject():
    """The installed llama.cpp reports exactly the CPU features pyproject's CMAKE_ARGS switch on (AVX, AVX2, FMA,
    F16C, BMI2) and none of the native build's AVX-512 / AMX code paths (that build segfaults on CPUs with AMX).
    A wheel built without the flags (a default pip or uv build, a cached wheel of another build) fails here."""
    args = _llama_cmake_args()
    assert "-DGGML_NATIVE=OFF" in args.split()
    wanted = re.findall(r"-DGGML_(AVX2?|FMA|F16C|BMI2)=ON", args)
    assert len(wanted) == 5, args
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    # in a child process: loading libgomp here would fix OpenMP's wait policy for the tests that run the judge
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    info = out.stdout  # "CPU : SSE3 = 1 | AVX = 1 | ...": the features compiled in
    features = dict(re.findall(r"(\w+) = (\d+)", info))
    assert all(features.get(f) == "1" for f in wanted), info
    assert not [f for f in features if f.startswith(("AVX512", "AMX"))], info


def _plan(folder: Path) -> str:
    out = subprocess.run(["make", "-n", "VENV=venv", "venv/.installed"], cwd=folder, capture_output=True, text=True,
                         timeout=60, env={**os.environ, "MAKEFLAGS": ""})
    assert out.returncode == 0, out.stderr
    return out.stdout + out.stderr


def test_a_changed_lock_or_pyproject_reinstalls(tmp_path):
    """make's own plan (`make -n`, nothing runs): with the install stamp newer than pyproject.toml and uv.lock the
    install is up to date; a newer uv.lock, or a newer pyproject.toml, makes it run `uv sync --locked` again."""
    for name in ("Makefile", "pyproject.toml", "uv.lock", "requirements-uv.txt"):
        shutil.copy2(REPO / name, tmp_path / name)
    uv = tmp_path / ".uv" / "bin" / "uv"
    stamp = tmp_path / "venv" / ".installed"
    for path in (uv, stamp):
        path.parent.mkdir(parents=True)
        path.write_text("")
    t0 = 1_700_000_000
    for name in ("Makefile", "pyproject.toml", "uv.lock", "requirements-uv.txt"):
        os.utime(tmp_path / name, (t0, t0))
    os.utime(uv, (t0 + 10, t0 + 10))
    os.utime(stamp, (t0 + 20, t0 + 20))
    assert "sync" not in _plan(tmp_path)
    for changed in ("uv.lock", "pyproject.toml"):
        os.utime(tmp_path / changed, (t0 + 30, t0 + 30))
        assert "uv sync --locked" in _plan(tmp_path), changed
        os.utime(tmp_path / changed, (t0, t0))
