"""The package's exceptions, below every module that raises them.

`T2CError` is the root: anything raised as one is a message for the user (bad input, a store
that cannot be reached, a refused query). Any other exception escaping the library is a bug.
The store errors live here rather than in `graph/` so the query gate (`cypher/`) can raise
them without importing a store. `describe_yaml_error` turns a YAML syntax error into the one
line such an error carries (dataset files and parameter files both use it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import yaml


class T2CError(Exception):
    """Root of the errors t2c reports to its user in one line."""


class UnknownName(T2CError, ValueError):
    """A name that no registry entry has (a strategy, scoring preset, weights, store or metric); the message lists the valid ones."""


class StoreError(T2CError, RuntimeError):
    """Any failure of a graph store; the message is meant for the user."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened (server down, files locked, not loaded)."""


class QueryError(StoreError):
    """The database refused or failed a query.

    `kind` says which stage failed: "syntax" (parser), "semantic" (binder: unknown label,
    property, function), "runtime" (execution), "write" (a write reached a read-only wall),
    "unsafe" (not one read-only statement), "too_large" (over the row or byte budget) or
    "resource" (over a limit on the query's size, nesting, memory or the store's process).
    """

    def __init__(self, message: str, kind: str = "runtime") -> None:
        super().__init__(message)
        self.kind = kind


class UnsafeQuery(QueryError):
    """The query is not one read-only statement (refused by the gate or the database's plan)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unsafe")


class ResultTooLarge(QueryError):
    """The query returns more rows or bytes than the store's budget; nothing more is fetched."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="too_large")


class ResourceLimit(QueryError):
    """The query is over a limit set before or while it runs: length, nesting, memory, or it crashed the worker."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="resource")


class QueryTimeout(StoreError):
    """The query ran past its time limit and was stopped."""


# --- one line for a YAML syntax error ----------------------------------------------------------
# PyYAML's messages span several lines ("while parsing ... in <file>, line 2 ... expected ...,
# line 3"); the command line shows one line per error, so the position must be on it.


def describe_yaml_error(exc: "yaml.YAMLError") -> str:
    """`line 3, column 6: expected ',' or ']', but got ':' (while parsing a flow sequence from line 2, column 15)`."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", "") or "").split())
    if mark is None or not problem:
        return " ".join(str(exc).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context = " ".join(str(getattr(exc, "context", "") or "").split())
    context_mark = getattr(exc, "context_mark", None)
    if context:
        where = f" from line {context_mark.line + 1}, column {context_mark.column + 1}" if context_mark is not None else ""
        text += f" ({context}{where})"
    return text
