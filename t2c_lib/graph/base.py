"""The `GraphStore` protocol every backend implements, and the store-neutral values it returns.

Stores convert their native values (LadybugDB dicts, neo4j driver objects) into
`GraphNode` / `GraphRel` / `GraphPath`, so metrics and tests never see a backend type.
Properties whose names start with `_` are internal (load keys) and never shown to users.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset
    from t2c_lib.graph.schema import GraphSchema

INTERNAL_KEY = "_key"
"""Property holding each node's load key (unique per label); hidden from schema texts."""

DEFAULT_TIMEOUT_S = 10.0
"""Seconds a query may take, execution and fetching its rows together."""

DEFAULT_MAX_ROWS = 10_000
"""Rows a query may return (`T2C_MAX_ROWS`); a larger result is refused, never fetched."""


def max_rows_setting() -> int:
    """The row cap from `T2C_MAX_ROWS` (a positive integer), else DEFAULT_MAX_ROWS."""
    raw = os.environ.get("T2C_MAX_ROWS", "").strip()
    if not raw:
        return DEFAULT_MAX_ROWS
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"T2C_MAX_ROWS must be a positive integer, got {raw!r}")
    return int(raw)


@dataclass(frozen=True)
class GraphNode:
    """A node as a value: its labels and its (user-visible, non-null) properties."""

    labels: tuple[str, ...]
    properties: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class GraphRel:
    """A relationship as a value: its type and its (non-null) properties."""

    type: str
    properties: dict[str, Any] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class GraphPath:
    """A path as alternating nodes and relationships."""

    nodes: tuple[GraphNode, ...]
    rels: tuple[GraphRel, ...]


@dataclass
class QueryResult:
    """Columns and rows of one executed query, plus how long it took."""

    columns: list[str]
    rows: list[list[Any]]
    elapsed_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready `{"columns": [...], "rows": [[...], ...]}` with graph values as dicts."""
        return {"columns": list(self.columns), "rows": [[to_jsonable(v) for v in row] for row in self.rows]}


def to_jsonable(value: Any) -> Any:
    """Turn a result value (possibly a graph value) into plain JSON types."""
    if isinstance(value, GraphNode):
        return {"labels": list(value.labels), "properties": to_jsonable(value.properties)}
    if isinstance(value, GraphRel):
        return {"type": value.type, "properties": to_jsonable(value.properties)}
    if isinstance(value, GraphPath):
        return {"nodes": [to_jsonable(n) for n in value.nodes], "rels": [to_jsonable(r) for r in value.rels]}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


class StoreError(RuntimeError):
    """Any failure of a graph store; the message is meant for the user."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened (server down, files locked, not loaded)."""


class QueryError(StoreError):
    """The database refused or failed a query.

    `kind` says which stage failed: "syntax" (parser), "semantic" (binder: unknown label,
    property, function), "runtime" (execution), "write" (a write reached a read-only wall),
    "unsafe" (the database's plan is not one read statement) or "too_large" (over the row cap).
    """

    def __init__(self, message: str, kind: str = "runtime") -> None:
        super().__init__(message)
        self.kind = kind


class UnsafeQuery(QueryError):
    """The database's own reading of a query is not one read-only statement (wall 1)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unsafe")


class ResultTooLarge(QueryError):
    """The query returns more rows than the store's row cap; no row was fetched."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="too_large")


class QueryTimeout(StoreError):
    """The query ran past its time limit and was stopped."""


@runtime_checkable
class GraphStore(Protocol):
    """What the rest of the package needs from a graph database."""

    name: str

    def load(self, dataset: "Dataset") -> dict[str, int]:
        """Load a dataset idempotently (reload = same graph); return counts per label/type."""
        ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and relationship counts per type, as `{"MK": 64, ...}`."""
        ...

    def query(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> QueryResult:
        """Run one read-only statement within `timeout_s` (execution and fetching) and the row cap.

        Raise UnsafeQuery when the database's plan is not a single read, ResultTooLarge over
        the row cap, QueryTimeout over the time, QueryError otherwise."""
        ...

    def explain(self, cypher: str) -> None:
        """Parse and plan a query without running it; raise QueryError if it does not compile."""
        ...

    def schema(self) -> "GraphSchema":
        """Introspect labels, relationship patterns and property types from the live database."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...
