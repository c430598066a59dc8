"""Shared pieces of the reliability tests: a priced stub model, items that carry their id, the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import litellm

PRICED_MODEL = "openai/fault-priced"  # registered with a known price, so costs can be checked exactly
INPUT_PRICE, OUTPUT_PRICE = 1e-6, 2e-6  # USD per token
CRITERIA = ("factual_accuracy", "instruction_following", "overall")  # the rows of one direct_score request
REPO = Path(__file__).resolve().parents[2]


def register_priced_model() -> None:
    litellm.register_model({PRICED_MODEL: {"input_cost_per_token": INPUT_PRICE, "output_cost_per_token": OUTPUT_PRICE,
                                           "litellm_provider": "openai", "mode": "chat"}})


def direct_items(n: int, prefix: str = "q") -> list[dict[str, Any]]:
    """Items for the built-in direct_score rubric; the response carries a tag the fault server keys on."""
    return [{"item_id": f"{prefix}{i}", "prompt": f"Question {i}: what is {i} + {i}?",
             "response": f"[item:{prefix}{i}] It is {2 * i}."} for i in range(n)]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cli_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO), **extra}
    env.pop("JUDGELAB_CACHE", None)
    return env


def cli_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "judgelab.cli", *args]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_command(*args), capture_output=True, text=True, env=env or cli_env(),
                          timeout=timeout, cwd=REPO)


def summary_line(stdout: str) -> dict[str, Any]:
    """The CLI's ONE JSON line (asserting there is exactly one line on stdout)."""
    lines = stdout.strip().splitlines()
    assert len(lines) == 1, stdout
    return json.loads(lines[0])
