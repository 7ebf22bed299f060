"""A small table for notebook cells: HTML in Jupyter, aligned text elsewhere, without importing pandas.

The inference and evaluation notebooks show a few rows each (a cell's outcomes; a cell's
numbers under every scoring preset) and imported pandas for nothing else: about 0.9 s of CPU in
each of their runs, 36 runs in a thesis grid (measured on 2026-11-25 on the 2-core development
machine). `table()` shows the same rows without it; `Table.frame()` gives the pandas DataFrame
for further work in an interactive session. The analysis notebook keeps pandas: its tables are
DataFrames anyway.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TEXT_WIDTH = 60
"""A cell's text longer than this is cut (with `...`) in the plain-text view; the HTML view shows it whole."""


def cell_text(value: Any) -> str:
    """How a value shows: floats rounded to 6 decimals, None empty, the rest as str()."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


@dataclass(frozen=True)
class Table:
    """Rows under named columns, optionally with a row label each (`index`)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    index: tuple[str, ...] | None = None

    def frame(self) -> Any:
        """The same rows as a pandas DataFrame (pandas is imported here, on demand)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=list(self.columns), index=list(self.index) if self.index else None)

    def _labelled(self) -> tuple[list[str], list[list[str]]]:
        header = ([""] if self.index else []) + list(self.columns)
        body = [
            ([self.index[i]] if self.index else []) + [cell_text(v) for v in row] for i, row in enumerate(self.rows)
        ]
        return header, body

    def _repr_html_(self) -> str:
        header, body = self._labelled()
        head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
        lines = [f'<table class="t2c-table" border="1"><thead><tr>{head}</tr></thead><tbody>']
        for row in body:
            cells = [
                f"<th>{html.escape(v)}</th>" if self.index and j == 0 else f"<td>{html.escape(v)}</td>"
                for j, v in enumerate(row)
            ]
            lines.append(f"<tr>{''.join(cells)}</tr>")
        lines.append("</tbody></table>")
        return "\n".join(lines)

    def __repr__(self) -> str:
        header, body = self._labelled()
        cut = [[v if len(v) <= TEXT_WIDTH else v[: TEXT_WIDTH - 3] + "..." for v in row] for row in body]
        widths = [max(len(r[j]) for r in [header, *cut]) for j in range(len(header))]
        fmt = lambda r: "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip()  # noqa: E731
        return "\n".join([fmt(header), *(fmt(r) for r in cut)])


def table(
    rows: Iterable[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]],
    columns: Sequence[str],
    *,
    sort_by: str | None = None,
    limit: int | None = None,
) -> Table:
    """`columns` of `rows` (a list of records, or a mapping of row label -> record), sorted and cut if asked.

    A column a record lacks shows empty; rows sort by `sort_by` (stable), then the first `limit` are kept.
    """
    if isinstance(rows, Mapping):
        labels: list[str] | None = [str(k) for k in rows]
        records = list(rows.values())
    else:
        labels, records = None, list(rows)
    order = list(range(len(records)))
    if sort_by is not None:
        order.sort(key=lambda i: (records[i].get(sort_by) is None, records[i].get(sort_by)))
    order = order[:limit] if limit is not None else order
    return Table(
        columns=tuple(columns),
        rows=tuple(tuple(records[i].get(c) for c in columns) for i in order),
        index=tuple(labels[i] for i in order) if labels is not None else None,
    )
