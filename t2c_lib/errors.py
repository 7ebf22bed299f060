"""The package's exceptions, below every module that raises them.

`T2CError` is the root: anything raised as one is a message for the user (bad input, a store
that cannot be reached, a refused query). Any other exception escaping the library is a bug.
The store errors live here rather than in `graph/` so the query gate (`cypher/`) can raise
them without importing a store.
"""

from __future__ import annotations


class T2CError(Exception):
    """Root of the errors t2c reports to its user in one line."""


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
