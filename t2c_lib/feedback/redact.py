"""Feedback with the failed queries taken out, for refinements that must not show the model a query to copy.

A database's syntax error quotes the query it could not read: LadybugDB prints the query's line
in double quotes and a caret line under the offending token, Neo4j 5 the same. A fresh attempt
(`repair_turns: fresh-strict`) shows the model only what was wrong, so those lines go; what the
parser said about the token (`Invalid input < DESC>: expected ...`) stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

HIDDEN = "(query)"
"""What stands where a failed query was quoted inside a sentence."""

_CARETS = re.compile(r"^\s*\^+\s*$")
MIN_PIECE = 12
"""A quoted line shorter than this (after whitespace is squeezed) is kept unless it is a whole query, and a query
shorter than this is never replaced inside a sentence (a name such as `m.sks` is no query to copy)."""


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _is_piece_of(line: str, queries: list[str]) -> bool:
    """The line, quotes and whitespace aside, is a query (or one of its lines) of at least `MIN_PIECE` characters."""
    body = _squeeze(line.strip().strip("\"'`"))
    if not body:
        return False
    return any(body in q and len(body) >= min(len(q), MIN_PIECE) for q in queries)


def without_queries(feedback: str, queries: Iterable[str]) -> str:
    """`feedback` without the lines that quote any of `queries`, their caret lines, or the queries quoted inline."""
    squeezed = sorted({_squeeze(q) for q in queries if q.strip()}, key=len, reverse=True)
    if not squeezed:
        return feedback
    kept: list[str] = []
    dropped_last = False
    for line in feedback.splitlines():
        if _is_piece_of(line, squeezed) or (dropped_last and _CARETS.match(line)):
            dropped_last = True
            continue
        dropped_last = False
        flat = _squeeze(line)
        for query in squeezed:
            if len(query) >= MIN_PIECE and query in flat:
                flat = flat.replace(query, HIDDEN)
                line = flat
        kept.append(line)
    return "\n".join(kept) + ("\n" if feedback.endswith("\n") else "")
