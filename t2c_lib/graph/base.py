"""The `GraphStore` protocol every backend implements, and the store-neutral values it returns.

Stores convert their native values (LadybugDB dicts, neo4j driver objects) into
`GraphNode` / `GraphRel` / `GraphPath`, so metrics and tests never see a backend type.
Properties whose names start with `_` are internal (load keys) and never shown to users.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset
    from t2c_lib.graph.schema import GraphSchema

INTERNAL_KEY = "_key"
"""Property holding each node's load key (unique per label); hidden from schema texts."""

DEFAULT_TIMEOUT_S = 10.0


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
    property, function), "runtime" (execution), or "write" (a write reached a read-only wall).
    """

    def __init__(self, message: str, kind: str = "runtime") -> None:
        super().__init__(message)
        self.kind = kind


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
        """Run one query read-only with a time limit; raise QueryError / QueryTimeout."""
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
