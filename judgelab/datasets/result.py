"""The small typed record every dataset loader returns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgelab.datasets.sources import SourceInfo
from judgelab.judgments import combine, make_table, validate

__all__ = ["DatasetResult"]


@dataclass(frozen=True)
class DatasetResult:
    """A released data set as judgelab sees it.

    ``table`` is a validated judgments table (judge rows and human/gold rows side by side),
    ``items`` one row per item with its texts and labels (``item_id`` joins the two), and
    ``source`` the repository, commit, license and files the numbers came from.
    """

    name: str
    table: pd.DataFrame
    items: pd.DataFrame
    source: SourceInfo
    notes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_rows(cls, name: str, rows: Iterable[Mapping[str, Any]], items: Iterable[Mapping[str, Any]],
                  source: SourceInfo, **notes: Any) -> DatasetResult:
        """A loader's result from its judgment rows (validated into a table) and item records."""
        return cls(name=name, table=validate(make_table(rows)), items=pd.DataFrame(list(items)), source=source,
                   notes=notes)

    @classmethod
    def combined(cls, name: str, results: Iterable[DatasetResult], **notes: Any) -> DatasetResult:
        """Several loads of one data set (one per judge) as one: their tables through
        :func:`judgelab.judgments.combine` (one copy of the gold / human rows they share), the first load's
        items (the same items in every load), the union of the files read."""
        results = list(results)
        first = results[0]
        files = tuple(dict.fromkeys(f for r in results for f in r.source.files))
        source = SourceInfo(first.source.repo, first.source.commit, first.source.license, files,
                            first.source.location)
        return cls(name=name, table=combine([r.table for r in results]), items=first.items, source=source,
                   notes=notes)

    def __repr__(self) -> str:
        return (
            f"DatasetResult({self.name!r}: {len(self.table)} judgment rows, {len(self.items)} items, "
            f"{self.source.repo}@{self.source.commit[:12]})"
        )

    def _repr_html_(self) -> str:
        """The notebook view: the data set, its source, the summary line and the table's head."""
        from judgelab.viz.notebook_views import result_html

        return result_html(f"{self.name} ({self.source.repo}@{self.source.commit[:12]})", self.table)
