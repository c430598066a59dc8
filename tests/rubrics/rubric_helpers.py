"""Shared helpers for the rubric tests: example items and a request for a given rubric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "data" / "examples"


def examples(name: str) -> list[dict[str, Any]]:
    path = EXAMPLES / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
