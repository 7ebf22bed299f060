"""Results as files: CSV, JSON, Excel or Parquet by the file's extension, with a JSON sidecar.

Each format is written by the usual library for it through pandas (CSV and JSON by pandas
itself, `.xlsx` by openpyxl, `.parquet` by pyarrow). Cells that are not plain values (lists,
maps, nodes, paths) are written as JSON text, so every format holds the same table. A text
cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) is written as
text: with a leading `'` in CSV, as a quote-prefixed string cell in `.xlsx` (`t2c_lib.files.outputs`). The
sidecar `<file>.meta.json` records the question, the final query and "succeeded at attempt
k of n".
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from t2c_lib.errors import ExportError, user_path
from t2c_lib.files.outputs import csv_frame, to_json, xlsx_text_cells
from t2c_lib.graph.base import to_jsonable

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.base import QueryResult
    from t2c_lib.records import AgentState

FORMATS = {".csv": "csv", ".json": "json", ".xlsx": "xlsx", ".parquet": "parquet"}
SIDECAR_SUFFIX = ".meta.json"


def export_format(path: str | Path) -> str:
    """The format a path's extension names; a clear error for any other extension."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"cannot export to {str(path)!r}: the extension must be one of {', '.join(FORMATS)}")
    return FORMATS[suffix]


def result_frame(result: QueryResult) -> pd.DataFrame:
    """A query result as a DataFrame: plain values kept, graph values as plain dicts and lists."""
    rows = [[to_jsonable(v) for v in row] for row in result.rows]
    return pd.DataFrame(rows, columns=list(result.columns)) if rows else pd.DataFrame(columns=list(result.columns))


def flat_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as it is written: every list or map cell turned into JSON text."""
    out = frame.copy()
    for column in out.columns:
        if out[column].map(lambda v: isinstance(v, (list, dict, tuple))).any():
            out[column] = out[column].map(
                lambda v: to_json(v, ensure_ascii=False, sort_keys=True) if isinstance(v, (list, dict, tuple)) else v
            )
    return out


@dataclass(frozen=True)
class ExportInfo:
    """What the sidecar records about an exported result."""

    question: str
    final_query: str
    attempt: int
    attempts_allowed: int

    def to_dict(self) -> dict[str, Any]:
        """The fields in their order, then the outcome in words."""
        return {**asdict(self), "outcome": f"succeeded at attempt {self.attempt} of {self.attempts_allowed}"}


def export_frame(frame: pd.DataFrame, path: str | Path, info: ExportInfo) -> tuple[Path, Path]:
    """Write `frame` in the format of `path`'s extension and its sidecar; return both paths."""
    path = Path(path)
    fmt = export_format(path)
    table = flat_frame(frame)
    tmp = path.with_name(f".{path.name}.tmp")
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    meta = {
        **info.to_dict(),
        "file": path.name,
        "format": fmt,
        "columns": [str(c) for c in table.columns],
        "rows": len(table),
    }
    with user_path(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "csv":
            csv_frame(table).to_csv(tmp, index=False)  # formula-like text quoted: a spreadsheet opens it as text
        elif fmt == "json":
            table.to_json(tmp, orient="records", force_ascii=False, indent=2)
        elif fmt == "xlsx":
            with pd.ExcelWriter(tmp, engine="openpyxl") as writer:
                table.to_excel(writer, index=False)
                for sheet in writer.sheets.values():
                    xlsx_text_cells(sheet)  # openpyxl stores text beginning with '=' as a formula otherwise
        else:
            table.to_parquet(tmp, index=False, engine="pyarrow")
        os.replace(tmp, path)
        sidecar.write_text(to_json(meta, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path, sidecar


def read_export(path: str | Path) -> pd.DataFrame:
    """Read an exported file back with the same library (JSON: values as written, no dtype or date guessing)."""
    path = Path(path)
    fmt = export_format(path)
    if fmt == "csv":
        return pd.read_csv(path)
    if fmt == "json":
        return pd.read_json(path, orient="records", dtype=False)
    if fmt == "xlsx":
        return pd.read_excel(path, engine="openpyxl")
    return pd.read_parquet(path, engine="pyarrow")


def export_state(state: AgentState, path: str | Path) -> tuple[Path, Path]:
    """`t2c ask --export`: the final result of a successful run, with its sidecar."""
    if not state.success or state.result is None:
        raise ExportError("nothing to export: no query passed the validator chain")
    info = ExportInfo(
        state.question, state.final_query, state.final_iteration or state.iterations, state.max_iterations
    )
    return export_frame(result_frame(state.result), path, info)
