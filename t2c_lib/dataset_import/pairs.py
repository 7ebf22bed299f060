"""Question/Cypher pairs from a CSV or JSONL file, the two columns named on the command line.

A `.jsonl` file holds one JSON object a line; any other name is read as CSV with a header. The
file is hostile input like a dataset: its size and pair count are capped, a row without a question
or a query is refused with its row number, and the texts are kept as written (the gold screen
judges the queries later).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from t2c_lib.dataset_import.graph import SourceError, read_source_text, shown
from t2c_lib.files.outputs import JsonLineError, numbered_json_lines

MAX_PAIRS_BYTES = 64 * 1024 * 1024
MAX_PAIRS = 100_000


def read_pairs(path: Path, question: str = "question", cypher: str = "cypher") -> list[tuple[str, str]]:
    """(question, cypher) for every row of `path`, in file order."""
    text = read_source_text(path, MAX_PAIRS_BYTES, f"{MAX_PAIRS_BYTES // 2**20} MiB of pairs")
    rows = _jsonl_rows(path, text) if path.suffix.lower() == ".jsonl" else _csv_rows(path, text)
    pairs = []
    for number, row in rows:
        if number > MAX_PAIRS:
            raise SourceError(f"{path}: more than {MAX_PAIRS:,} pairs")
        if question not in row or cypher not in row:
            missing = question if question not in row else cypher
            raise SourceError(
                f"{path} row {number}: no column {shown(missing)} (columns: {', '.join(map(str, row))[:200]})"
            )
        q, c = (str(row[k] if row[k] is not None else "").strip() for k in (question, cypher))
        if not q or not c:
            raise SourceError(f"{path} row {number}: an empty {'question' if not q else 'query'}")
        pairs.append((q, c))
    if not pairs:
        raise SourceError(f"{path}: no pairs")
    return pairs


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, str]]]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return [
            (n, row)
            for n, row in enumerate(reader, start=1)
            if any(isinstance(v, str) and v.strip() for v in row.values())
        ]
    except csv.Error as exc:
        raise SourceError(f"{path}: not valid CSV ({exc})") from None


def _jsonl_rows(path: Path, text: str) -> list[tuple[int, dict[str, object]]]:
    rows = []
    try:
        for n, row in numbered_json_lines(text):
            if not isinstance(row, dict):
                raise SourceError(f"{path} line {n}: not a JSON object")
            rows.append((n, row))
    except JsonLineError as exc:
        raise SourceError(f"{path} line {exc.number}: not a JSON object") from None
    return rows
