"""The `GraphStore` protocol every backend implements, and the store-neutral values it returns.

Stores convert their native values (LadybugDB dicts, neo4j driver objects) into
`GraphNode` / `GraphRel` / `GraphPath`, so metrics and tests never see a backend type; those
values and `QueryResult` are defined in the leaf `t2c_lib/cypher/query_result.py` and named here too.
Properties whose names start with `_` are internal (load keys) and never shown to users.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar, runtime_checkable

from t2c_lib.config import int_setting
from t2c_lib.cypher.query_result import (  # the store-neutral values live in a leaf; named here for the stores' callers
    GraphNode,
    GraphPath,
    GraphRel,
    QueryResult,
    to_jsonable,
)
from t2c_lib.errors import (  # the store errors live at the bottom of the package; named here for stores' callers
    QueryError,
    QueryTimeout,
    ResourceLimit,
    ResultTooLarge,
    StoreError,
    StoreUnavailable,
    UnsafeQuery,
)
from t2c_lib.graph.facts import StoreFacts

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset
    from t2c_lib.schema import GraphSchema

INTERNAL_KEY = "_key"
"""Property holding each node's load key (unique per label); hidden from schema texts."""

DEFAULT_TIMEOUT_S = 10.0
"""Seconds a query may take, execution and fetching its rows together."""

TIMEOUT_TRIES = 2
"""Runs the embedded store gives a statement before its QueryTimeout counts. The limit is wall-clock, so a
busy machine (another job on the cores) can push a 2 s query past 10 s; one more run keeps a run's validation
outcomes, and with them its feedback and model requests, from depending on what else the machine was doing.
The Neo4j store keeps one run: its deadlines cut runaway work that restarts the local server, and a second
run would restart it again."""

_T = TypeVar("_T")


def patiently(statement: Callable[[], _T]) -> _T:
    """`statement()`, run again (up to TIMEOUT_TRIES runs in all) while it raises QueryTimeout."""
    for _ in range(TIMEOUT_TRIES - 1):
        try:
            return statement()
        except QueryTimeout:
            continue
    return statement()


DEFAULT_MAX_ROWS = 10_000
"""Rows a query may return (`T2C_MAX_ROWS`); a larger result is refused, never fetched."""


DEFAULT_MAX_RESULT_BYTES = 32 * 1024 * 1024
"""Bytes a result may take once fetched (`T2C_MAX_RESULT_BYTES`): one huge value counts as much as many rows."""


def max_result_bytes_setting() -> int:
    """The result byte budget from `T2C_MAX_RESULT_BYTES` (a positive integer), else DEFAULT_MAX_RESULT_BYTES."""
    return int_setting("T2C_MAX_RESULT_BYTES", DEFAULT_MAX_RESULT_BYTES)


MAX_VALUE_DEPTH = 64
"""Levels of nested lists/maps a result value may have; deeper ones are refused (QueryError "too_large")
before converting them could exhaust the interpreter's recursion limit."""


def value_bytes(value: Any) -> int:
    """The size of a converted result value as the byte budget counts it.

    Both stores count with it: 16 per value, plus a string's length, plus a container's items (a map's keys as strings), 32 plus the
    properties for a node or relationship, 32 plus its node and relationship lists for a path.
    Iterative, so a deeply nested value cannot exhaust the recursion limit."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += 16 + len(item)
        elif isinstance(item, (list, tuple)):
            total += 16
            stack.extend(item)
        elif isinstance(item, dict):
            total += 16
            for key, entry in item.items():
                stack.append(key)
                stack.append(entry)
        elif isinstance(item, (GraphNode, GraphRel)):
            total += 32
            stack.append(item.properties)
        elif isinstance(item, GraphPath):
            total += 32
            stack.append(list(item.nodes))
            stack.append(list(item.rels))
        else:
            total += 16
    return total


def max_rows_setting() -> int:
    """The row cap from `T2C_MAX_ROWS` (a positive integer), else DEFAULT_MAX_ROWS."""
    return int_setting("T2C_MAX_ROWS", DEFAULT_MAX_ROWS)


@runtime_checkable
class GraphStore(Protocol):
    """What the rest of the package needs from a graph database."""

    name: str
    facts: StoreFacts
    """What its callers decide by (dialect, case of names, validator steps, opener options): `graph/facts.py`."""

    def load(self, dataset: Dataset) -> dict[str, int]:
        """Load a dataset idempotently (reload = same graph); return counts per label/type."""
        ...

    def counts(self) -> dict[str, int]:
        """Node counts per label and relationship counts per type, as `{"MK": 64, ...}`."""
        ...

    def query(self, cypher: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> QueryResult:
        """Run one read-only statement within `timeout_s` (execution and fetching) and the row cap.

        Raise UnsafeQuery when the database's plan is not a single read, ResultTooLarge over
        the row cap, QueryTimeout over the time (the embedded store: in each of TIMEOUT_TRIES runs), QueryError
        otherwise."""
        ...

    def explain(self, cypher: str) -> None:
        """Parse and plan a query without running it; raise QueryError if it does not compile."""
        ...

    def schema(self) -> GraphSchema:
        """Introspect labels, relationship patterns and property types from the live database."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


class ClosedOnExit:
    """A store used as a context manager: `with Store(...) as store:` closes it at the block's end."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "INTERNAL_KEY",
    "MAX_VALUE_DEPTH",
    "ClosedOnExit",
    "GraphNode",
    "GraphPath",
    "GraphRel",
    "GraphStore",
    "QueryError",
    "QueryResult",
    "QueryTimeout",
    "TIMEOUT_TRIES",
    "ResourceLimit",
    "ResultTooLarge",
    "StoreError",
    "StoreUnavailable",
    "UnsafeQuery",
    "max_result_bytes_setting",
    "max_rows_setting",
    "patiently",
    "to_jsonable",
    "value_bytes",
]
