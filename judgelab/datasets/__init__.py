"""Loaders for released judge data: each returns a judgments table, item metadata and provenance;
and :func:`from_frame`, which turns ANY frame or file of judge verdicts into a judgments table.

A local copy is read from ``data_dir=`` or ``$JUDGELAB_DATA_DIR`` (folders ``LLMBar/``,
``LLM_summeval/``, ``OpenQA-eval/`` side by side); otherwise the needed files are downloaded
from the source repository at the pinned commit (base URL: ``base_url=`` or
``$JUDGELAB_DATA_BASE_URL``) into ``$JUDGELAB_CACHE`` (default ``~/.cache/judgelab/data``) and
checked against the committed sha256 manifest in ``judgelab/datasets/manifests/``.
"""

import inspect

from judgelab.datasets.frame import FrameImportError, example_path, from_frame, read_frame
from judgelab.datasets.llmbar import llmbar, llmbar_combinations, llmbar_splits
from judgelab.datasets.llmbar_published import (
    llmbar_kappa,
    llmbar_kappa_as_published,
    llmbar_kappa_comparison,
    llmbar_published_statistics,
)
from judgelab.datasets.mtbench import (
    mt_bench_items,
    mt_bench_judge_prompts,
    mt_bench_pairs,
    mt_bench_questions,
)
from judgelab.datasets.openqa import openqa
from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import ChecksumError, DataNotFoundError, SourceInfo
from judgelab.datasets.summeval import summeval, summeval_combinations
from judgelab.errors import user_errors

__all__ = [
    "ChecksumError",
    "DataNotFoundError",
    "DatasetResult",
    "FrameImportError",
    "SourceInfo",
    "example_path",
    "from_frame",
    "llmbar",
    "llmbar_combinations",
    "llmbar_kappa",
    "llmbar_kappa_as_published",
    "llmbar_kappa_comparison",
    "llmbar_published_statistics",
    "llmbar_splits",
    "openqa",
    "read_frame",
    "summeval",
    "summeval_combinations",
    "mt_bench_items",
    "mt_bench_judge_prompts",
    "mt_bench_pairs",
    "mt_bench_questions",
]


# Public functions guard their arguments (judgelab.errors.user_errors): a caller's mistake ends in a JudgelabError
# naming the argument. Modules inside judgelab import the plain functions from their own modules.
for _name in __all__:
    if inspect.isfunction(globals()[_name]):
        globals()[_name] = user_errors(globals()[_name])
del _name
