"""A graph read from a running Neo4j database through the official driver, in a read-only session.

The connection settings are the Neo4j store's (`NEO4J_URI`, `NEO4J_USER`, `NEO4J_PASSWORD`,
`NEO4J_DATABASE`, or the loopback server `make neo4j` starts). The node and relationship counts
are asked first and an import over the caps is refused before any row is read; the rows are read
in READ access mode, so the database cannot be changed by the import. t2c's own key property
(`_key`, written by `t2c db load`) is left out; every other name meets the dataset rules. Neo4j
dates become DATE; other temporal, spatial and map values are refused with the property named.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from t2c_lib.dataset_import.graph import ImportCaps, ImportedGraph, Rel, SourceError, over_cap, shown
from t2c_lib.graph.base import INTERNAL_KEY

NODES = "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props"
RELS = "MATCH (a)-[r]->(b) RETURN elementId(a) AS a, elementId(b) AS b, type(r) AS type, properties(r) AS props"


def read_neo4j(store: Any, caps: ImportCaps | None = None) -> ImportedGraph:
    """The graph in the database of `store` (a connected `Neo4jStore`), read in a read-only session."""
    import neo4j

    caps = caps or ImportCaps()
    graph = ImportedGraph(caps)
    with store.driver.session(database=store.database, default_access_mode=neo4j.READ_ACCESS) as session:
        counts = session.execute_read(_counts)
        for what, count, cap in (("nodes", counts[0], caps.nodes), ("relationships", counts[1], caps.relationships)):
            if count > cap:
                raise SourceError(over_cap(what, cap) + f" (the database holds {count:,})")
        ids = session.execute_read(_read_nodes, graph)
        session.execute_read(_read_rels, graph, ids)
    return graph


def _counts(tx: Any) -> tuple[int, int]:
    nodes = tx.run("MATCH (n) RETURN count(n) AS c").single()["c"]
    rels = tx.run("MATCH ()-[r]->() RETURN count(r) AS c").single()["c"]
    return int(nodes), int(rels)


def _read_nodes(tx: Any, graph: ImportedGraph) -> dict[str, tuple[str, str]]:
    """Add every node; element id -> (label, key)."""
    ids: dict[str, tuple[str, str]] = {}
    for record in tx.run(NODES):
        labels = list(record["labels"])
        if len(labels) != 1:
            raise SourceError(
                f"a node has {len(labels)} labels ({', '.join(map(shown, labels[:4]))}); a t2c dataset gives each node one"
            )
        props = _props(labels[0], record["props"])
        key = str(props.pop(INTERNAL_KEY, None) or f"{labels[0]}_{len(graph.nodes.get(labels[0], {})) + 1}")
        graph.add_node(labels[0], key, props)
        ids[record["id"]] = (labels[0], key)
    return ids


def _read_rels(tx: Any, graph: ImportedGraph, ids: dict[str, tuple[str, str]]) -> None:
    for record in tx.run(RELS):
        (a_label, a_key), (b_label, b_key) = ids[record["a"]], ids[record["b"]]
        graph.add_rel(str(record["type"]), Rel(a_label, a_key, b_label, b_key, _props(record["type"], record["props"])))


def _props(owner: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The properties as dataset values: a Neo4j Date becomes a date; t2c's `_key` is kept for the caller to take."""
    out = {}
    for name, value in raw.items():
        out[name] = _value(owner, name, value)
    return out


def _value(owner: str, name: str, value: Any) -> Any:
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        native = to_native()
        if isinstance(native, dt.date) and not isinstance(native, dt.datetime):
            return native
        raise SourceError(f"{owner}.{name} holds a {type(value).__name__}; datasets hold DATE but no other time type")
    if isinstance(value, (dict, bytes, bytearray)) or type(value).__module__.startswith("neo4j"):
        raise SourceError(f"{owner}.{name} holds a {type(value).__name__}, which no dataset property type holds")
    return value
