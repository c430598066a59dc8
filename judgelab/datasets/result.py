"""The small typed record every dataset loader returns."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgelab.datasets.sources import SourceInfo
from judgelab.judgments import make_table, validate

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

    def __repr__(self) -> str:
        return (
            f"DatasetResult({self.name!r}: {len(self.table)} judgment rows, {len(self.items)} items, "
            f"{self.source.repo}@{self.source.commit[:12]})"
        )

    def _repr_html_(self) -> str:
        """The notebook view: the data set, its source, the summary line and the table's head."""
        from judgelab.viz.report import result_html

        return result_html(f"{self.name} ({self.source.repo}@{self.source.commit[:12]})", self.table)
