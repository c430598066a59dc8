"""The base of every error judgelab raises on purpose.

Errors a user can cause and fix (a bad file, an unknown rubric, a missing field, an option out of
range) derive from :class:`JudgelabError`; the CLI prints those as one sentence and exits 2. Any
other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

__all__ = ["ConfigError", "JudgelabError"]


class JudgelabError(Exception):
    """An error judgelab raised on purpose; the message says what to change."""


class ConfigError(JudgelabError, ValueError):
    """An option of a run, a probe or a command that cannot be used as given."""
