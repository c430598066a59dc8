"""Loaders for released judge data: each returns a judgments table, item metadata and provenance.

A local copy is read from ``data_dir=`` or ``$JUDGELAB_DATA_DIR`` (folders ``LLMBar/``,
``LLM_summeval/``, ``OpenQA-eval/`` side by side); otherwise the needed files are downloaded
from the source repository at the pinned commit (base URL: ``base_url=`` or
``$JUDGELAB_DATA_BASE_URL``) into ``$JUDGELAB_CACHE`` (default ``~/.cache/judgelab/data``) and
checked against the committed sha256 manifest in ``judgelab/datasets/manifests/``.
"""

from judgelab.datasets.llmbar import llmbar, llmbar_combinations, llmbar_splits
from judgelab.datasets.llmbar_published import (
    llmbar_kappa,
    llmbar_kappa_as_published,
    llmbar_kappa_comparison,
    llmbar_published_statistics,
)
from judgelab.datasets.openqa import openqa
from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import ChecksumError, DataNotFoundError, SourceInfo
from judgelab.datasets.summeval import summeval, summeval_combinations

__all__ = [
    "ChecksumError",
    "DataNotFoundError",
    "DatasetResult",
    "SourceInfo",
    "llmbar",
    "llmbar_combinations",
    "llmbar_kappa",
    "llmbar_kappa_as_published",
    "llmbar_kappa_comparison",
    "llmbar_published_statistics",
    "llmbar_splits",
    "openqa",
    "summeval",
    "summeval_combinations",
]
