"""Headless Chromium for the tests that open a page in a real browser: Debian's /usr/bin/chromium (installed by
``make system-deps``) driven by Playwright, which never downloads a browser. Without either, the test skips and
says what is missing."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "LAUNCH_ARGS", "browser", "not_blank"]

CHROMIUM = Path("/usr/bin/chromium")
# no traffic of Chromium's own: no sync, no component updates, no background requests
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]


def browser(instead: str) -> Any:
    """playwright.sync_api, or a skip naming what is missing and ``instead`` (what still ran)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (make system-deps installs Debian's chromium); {instead}")
    return pytest.importorskip("playwright.sync_api", reason="playwright (the test extra) is not installed")


def not_blank(png: bytes, min_width: int = 0) -> bool:
    """Whether a screenshot shows something (text, tables, figures): its grey levels vary."""
    from PIL import Image, ImageStat

    image = Image.open(BytesIO(png)).convert("L")
    return image.size[0] >= min_width and max(ImageStat.Stat(image).stddev) > 20
