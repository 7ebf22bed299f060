"""Sanity checks on a result before it is answered: warnings and a quality score from 0 to 100.

Each check is a small function over the result that returns the warnings it finds; every
warning costs the score its `penalty` (the score never goes below 0). The checks look at
the shape of the data only: a warning says "look again", not "wrong".

| code | when | penalty |
| --- | --- | --- |
| `EMPTY` | no rows | 60 |
| `NULL_COLUMN` | a column whose every value is null | 25 each |
| `CONSTANT_COLUMN` | a column with one value over 3+ rows (the filter may be in the column) | 5 each |
| `NEGATIVE_COUNT` | a negative value in a column named like a count or total | 40 |
| `TOO_MANY_ROWS` | more rows than the graph has nodes and relationships (a cartesian product?) | 40 |
| `DUPLICATE_ROWS` | the same row more than once | 10 |
| `LOST_FILTER` | a follow-up's query dropped a filter of the previous query its message did not ask to drop (`constraints.py`) | 50 each |

The last looks at the follow-up's query beside the previous one, not at the data: a result
that lost a constraint of the conversation can look perfect on its own (50 rows instead of 6).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from t2c_lib.graph.base import to_jsonable

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.graph.base import QueryResult


class CheckCode(str, Enum):
    EMPTY = "EMPTY"
    NULL_COLUMN = "NULL_COLUMN"
    CONSTANT_COLUMN = "CONSTANT_COLUMN"
    NEGATIVE_COUNT = "NEGATIVE_COUNT"
    TOO_MANY_ROWS = "TOO_MANY_ROWS"
    DUPLICATE_ROWS = "DUPLICATE_ROWS"
    LOST_FILTER = "LOST_FILTER"


PENALTIES = {
    CheckCode.EMPTY: 60,
    CheckCode.NULL_COLUMN: 25,
    CheckCode.CONSTANT_COLUMN: 5,
    CheckCode.NEGATIVE_COUNT: 40,
    CheckCode.TOO_MANY_ROWS: 40,
    CheckCode.DUPLICATE_ROWS: 10,
    CheckCode.LOST_FILTER: 50,
}

MESSAGES = {
    "id": {
        CheckCode.EMPTY: "Hasil kosong.",
        CheckCode.NULL_COLUMN: "Kolom {column} tidak berisi nilai apa pun.",
        CheckCode.CONSTANT_COLUMN: "Kolom {column} bernilai sama di setiap baris.",
        CheckCode.NEGATIVE_COUNT: "Kolom {column} berisi jumlah negatif.",
        CheckCode.TOO_MANY_ROWS: "Hasil ({rows} baris) lebih besar daripada graf ({size} node dan relasi).",
        CheckCode.DUPLICATE_ROWS: "Ada baris yang muncul lebih dari sekali.",
        CheckCode.LOST_FILTER: "Filter pertanyaan sebelumnya ({constraint}) hilang dari kueri ini; jika memang dimaksud, sebutkan.",
    },
    "en": {
        CheckCode.EMPTY: "The result is empty.",
        CheckCode.NULL_COLUMN: "Column {column} holds no value at all.",
        CheckCode.CONSTANT_COLUMN: "Column {column} has the same value in every row.",
        CheckCode.NEGATIVE_COUNT: "Column {column} holds a negative count.",
        CheckCode.TOO_MANY_ROWS: "The result ({rows} rows) is larger than the graph ({size} nodes and relationships).",
        CheckCode.DUPLICATE_ROWS: "Some rows appear more than once.",
        CheckCode.LOST_FILTER: "The previous question's filter ({constraint}) is gone from this query; if that was meant, say so.",
    },
}

COUNT_NAME = re.compile(r"count|jumlah|total|sum|banyak|num|n_|sks", re.I)
"""Column names whose values cannot be negative (counts, totals, credits)."""


@dataclass(frozen=True)
class ResultWarning:
    """One finding of a check."""

    code: CheckCode
    message: str
    column: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"code": self.code.value, "message": self.message, "column": self.column}


@dataclass(frozen=True)
class ResultCheck:
    """Every warning about a result and its quality score (100 = nothing to warn about)."""

    warnings: tuple[ResultWarning, ...]
    quality: int

    @property
    def messages(self) -> list[str]:
        return [w.message for w in self.warnings]


Finding = tuple[CheckCode, dict[str, object]]


def _empty(result: QueryResult, graph_size: int | None) -> list[Finding]:
    return [(CheckCode.EMPTY, {})] if not result.rows else []


def _null_columns(result: QueryResult, graph_size: int | None) -> list[Finding]:
    return [
        (CheckCode.NULL_COLUMN, {"column": c})
        for i, c in enumerate(result.columns)
        if result.rows and all(row[i] is None for row in result.rows)
    ]


def _constant_columns(result: QueryResult, graph_size: int | None) -> list[Finding]:
    if len(result.rows) < 3 or len(result.columns) < 2:
        return []
    found: list[Finding] = []
    for i, column in enumerate(result.columns):
        values = {_key(row[i]) for row in result.rows}
        if len(values) == 1 and result.rows[0][i] is not None:
            found.append((CheckCode.CONSTANT_COLUMN, {"column": column}))
    return found


def _negative_counts(result: QueryResult, graph_size: int | None) -> list[Finding]:
    found: list[Finding] = []
    for i, column in enumerate(result.columns):
        if COUNT_NAME.search(column) and any(
            isinstance(row[i], (int, float)) and not isinstance(row[i], bool) and row[i] < 0 for row in result.rows
        ):
            found.append((CheckCode.NEGATIVE_COUNT, {"column": column}))
    return found


def _too_many_rows(result: QueryResult, graph_size: int | None) -> list[Finding]:
    if graph_size and len(result.rows) > graph_size:
        return [(CheckCode.TOO_MANY_ROWS, {"rows": len(result.rows), "size": graph_size})]
    return []


def _duplicate_rows(result: QueryResult, graph_size: int | None) -> list[Finding]:
    keys = [_key(row) for row in result.rows]
    return [(CheckCode.DUPLICATE_ROWS, {})] if len(set(keys)) < len(keys) else []


CHECKS: tuple[Callable[[QueryResult, int | None], list[Finding]], ...] = (
    _empty,
    _null_columns,
    _constant_columns,
    _negative_counts,
    _too_many_rows,
    _duplicate_rows,
)
"""The checks, in the order their warnings are listed."""


def check_result(result: QueryResult, language: str = "en", graph_size: int | None = None) -> ResultCheck:
    """Run every check on `result`; `graph_size` (nodes + relationships) enables the row-count check."""
    messages = MESSAGES.get(language, MESSAGES["en"])
    warnings = []
    for check in CHECKS:
        for code, facts in check(result, graph_size):
            column = facts.get("column")
            warnings.append(
                ResultWarning(
                    code,
                    messages[code].format(**{k: str(v) for k, v in facts.items()}),
                    str(column) if column is not None else None,
                )
            )
    quality = max(0, 100 - sum(PENALTIES[w.code] for w in warnings))
    return ResultCheck(tuple(warnings), quality)


def _key(value: object) -> str:
    return json.dumps(to_jsonable(value), sort_keys=True, ensure_ascii=False)


def follow_up_check(
    check: ResultCheck, previous_query: str, query: str, message: str, language: str = "en"
) -> ResultCheck:
    """`check` with a `LOST_FILTER` warning (and its penalty) for every filter of `previous_query` that the follow-up's
    `query` dropped though `message` did not ask for it (`constraints.lost_filters`)."""
    from t2c_lib.chat.constraints import lost_filters

    messages = MESSAGES.get(language, MESSAGES["en"])
    lost = [
        ResultWarning(CheckCode.LOST_FILTER, messages[CheckCode.LOST_FILTER].format(constraint=str(f)), f.prop)
        for f in lost_filters(previous_query, query, message)
    ]
    if not lost:
        return check
    warnings = (*check.warnings, *lost)
    return ResultCheck(warnings, max(0, 100 - sum(PENALTIES[w.code] for w in warnings)))
