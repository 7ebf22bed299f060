"""How t2c writes values that a dataset, a model or a user chose: as data, never as code or a broken file.

Every file t2c writes goes through these few helpers:

- **Spreadsheet cells as text.** A CSV or XLSX cell whose text begins with `=`, `+`, `-`, `@`,
  a tab or a carriage return is a formula to Excel, LibreOffice and Google Sheets (CSV
  injection). `csv_cell` writes such text with a leading single quote (the OWASP rule);
  `xlsx_text_cells` stores it as a string cell marked quote-prefixed, never as a formula.
  Numbers are left alone, and so is text that is only a number (`-5`, `+1e3`, `-inf`):
  a spreadsheet reads it as that number, not as a formula. A carriage return inside text
  is written as a line feed, so the csv writer quotes the cell and no reader splits the row.
- **JSON without NaN.** Python writes `NaN` and `Infinity`, which are not JSON (jq,
  JavaScript and most readers refuse the file). `to_json` writes `null` for them instead.
- **JSONL split on `\\n` only.** `str.splitlines` also splits on U+2028, U+2029, U+0085 and
  other separators that JSON keeps raw inside strings; `numbered_json_lines` splits on newline only,
  and `jsonl_line` writes those three characters escaped so no reader can split a record.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_JSONL_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def formula_like(value: Any) -> bool:
    """True for text a spreadsheet would run as a formula: it begins with one of FORMULA_STARTS and is not a plain number."""
    return isinstance(value, str) and value[:1] in FORMULA_STARTS and not _PLAIN_NUMBER.fullmatch(value)


def csv_cell(value: Any) -> Any:
    """The value as a CSV cell: formula-like text gets a leading `'`, a carriage return inside text becomes `\\n`.

    Numbers and any other value stay as they are. The carriage return: Python's csv writer with
    `lineterminator="\\n"` (every t2c CSV) leaves a field holding a lone CR unquoted, and every reader
    (csv, pandas, spreadsheets) then ends the row there; as `\\n` the field is quoted and stays one cell
    (XLSX does the same: XML reads a CR in text as a line feed).
    """
    if not isinstance(value, str):
        return value
    text = "'" + value if formula_like(value) else value
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def csv_frame(frame: Any) -> Any:
    """A copy of a pandas DataFrame whose column names and text cells are `csv_cell`s.

    Only a column holding a cell that changes is touched (as object values), so numeric columns
    and every table without hostile text are written byte for byte as before.
    """
    out = frame.copy()
    out.columns = [csv_cell(c) for c in out.columns]
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if getattr(column.dtype, "kind", "O") in "biufcmM":  # numbers and dates stay what they are
            continue
        if any(csv_cell(v) is not v for v in column):
            out.isetitem(position, column.map(csv_cell).astype(object))
    return out


def xlsx_text_cells(worksheet: Any) -> int:
    """Store every formula-like cell of an openpyxl worksheet as a quote-prefixed string; return how many.

    openpyxl makes any string that begins with `=` a formula cell (data type `f`); t2c writes no
    formulas, so each such cell and each other formula-like string becomes text again.
    """
    changed = 0
    for row in worksheet.iter_rows():
        for cell in row:
            if cell.data_type == "f" or formula_like(cell.value):
                cell.data_type = "s"
                cell.quotePrefix = True
                changed += 1
    return changed


def json_safe(value: Any) -> Any:
    """The value with every NaN and infinity, also inside lists, tuples and maps, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def to_json(value: Any, **options: Any) -> str:
    """`json.dumps` that writes null for NaN and infinity (never the non-JSON `NaN`); same options otherwise."""
    return json.dumps(json_safe(value), allow_nan=False, **options)


def jsonl_line(record: Any) -> str:
    """One JSONL record and its newline: sorted keys, UTF-8 text, no NaN, no character a reader could split on."""
    text = to_json(record, ensure_ascii=False, sort_keys=True)
    if any(ch in text for ch in _JSONL_BREAKS):
        table = str.maketrans(_JSONL_BREAKS)  # its own line: inside translate() mypy infers the wrong value type
        text = text.translate(table)
    return text + "\n"


def decode_json(text: str | bytes) -> Any:
    """`json.loads`, except that text nested past the interpreter's recursion limit raises JSONDecodeError like any
    other text that is not JSON: 100,000 `[` in a reply or a file must not escape as a RecursionError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deep to decode", text if isinstance(text, str) else "", 0) from None


class JsonLineError(ValueError):
    """A line of JSONL text that does not decode; `number` is its line number (from 1)."""

    def __init__(self, number: int) -> None:
        super().__init__(f"line {number}: not JSON")
        self.number = number


def numbered_json_lines(text: str, *, skip_torn: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) for each non-blank line of JSONL text, split on `\\n` only. A line that does not
    decode raises JsonLineError, or is skipped with `skip_torn` (a kill mid-write)."""
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = decode_json(line)
        except ValueError:
            if skip_torn:
                continue
            raise JsonLineError(number) from None
        yield number, value


def read_jsonl_records(path: Path) -> list[Any]:
    """The records of a JSONL file (none if it is missing); a torn line (a kill mid-write) is skipped."""
    if not path.is_file():
        return []
    return [value for _, value in numbered_json_lines(path.read_text(encoding="utf-8"), skip_torn=True)]


__all__ = [
    "FORMULA_STARTS",
    "csv_cell",
    "csv_frame",
    "decode_json",
    "formula_like",
    "json_safe",
    "jsonl_line",
    "JsonLineError",
    "numbered_json_lines",
    "read_jsonl_records",
    "to_json",
    "xlsx_text_cells",
]
