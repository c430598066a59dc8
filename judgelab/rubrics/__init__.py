"""Rubrics as data: validated YAML specs + Jinja templates, with verdict rules run by the library.

Public API: :func:`load_rubric`, :func:`list_rubrics`, :func:`describe_rubric`, :func:`diff_rubrics`
(rubric variants: ``load_rubric(...).variant(name=..., **changes)``, see :mod:`judgelab.rubrics.variants`),
:class:`RubricSpecError` (with :class:`RubricTemplateError` and :class:`TemplateRefusedError` for templates,
which render in a sandbox: :mod:`judgelab.rubrics.sandbox`), and the contract types from :mod:`judgelab.rubrics.base`.
"""

from judgelab.rubrics.base import (
    JudgeRequest,
    MissingFieldError,
    ParsedRow,
    ParseFailure,
    RowKey,
    Rubric,
    check_fields,
)
from judgelab.rubrics.pairwise import combine_swapped_passes
from judgelab.rubrics.registry import describe_rubric, diff_rubrics, example_items, list_rubrics, load_rubric
from judgelab.rubrics.sandbox import RubricTemplateError, TemplateRefusedError
from judgelab.rubrics.spec import RubricSpec, RubricSpecError, parse_spec_text

__all__ = [
    "JudgeRequest",
    "MissingFieldError",
    "ParseFailure",
    "ParsedRow",
    "RowKey",
    "Rubric",
    "RubricSpec",
    "RubricSpecError",
    "RubricTemplateError",
    "TemplateRefusedError",
    "check_fields",
    "combine_swapped_passes",
    "describe_rubric",
    "diff_rubrics",
    "example_items",
    "list_rubrics",
    "load_rubric",
    "parse_spec_text",
]
