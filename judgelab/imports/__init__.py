"""Judgments other tools already made, imported into the judgments table with their provenance.

``from_inspect`` (Inspect AI eval logs), ``from_promptfoo`` (promptfoo JSON results: llm-rubric, g-eval,
select-best) and ``from_deepeval`` (a DeepEval test run's metrics). Every row's ``detail["imported_from"]`` names
the tool, its version, the file and the run; a file that is not what the importer reads is one sentence
(:class:`ImportFileError`). Each module's docstring lists what it maps and what it cannot.
"""

from __future__ import annotations

from judgelab.imports.common import ImportFileError
from judgelab.imports.deepeval import from_deepeval
from judgelab.imports.inspect_logs import from_inspect
from judgelab.imports.promptfoo import from_promptfoo

__all__ = ["ImportFileError", "from_deepeval", "from_inspect", "from_promptfoo"]
