"""The values a query returns, whichever store ran it: nodes, relationships, paths, a result's rows.

A leaf under the stores (`graph/`) and the loop's records (`records.py`), which both hold a
`QueryResult`: stores convert their native values (LadybugDB dicts, neo4j driver objects) into
`GraphNode` / `GraphRel` / `GraphPath`, so metrics and tests never see a backend type. It imports
nothing from the package. `graph.base` names these too, for the stores' callers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
