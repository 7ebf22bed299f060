"""How large a graph the embedded store builds before it refuses and points to the Neo4j store.

The builder adds relationships row by row, each finding its two ends by key; on this 2-core
machine its time grows faster than the graph (benchmarks/ladybug_bounds.py, docs/datasets.md,
"Bounds"), so past MAX_ELEMENTS nodes and relationships a build is refused before it starts, with
the way out: the same dataset on Neo4j (`store: neo4j`, `make neo4j`). `T2C_EMBEDDED_MAX_ELEMENTS`
sets another bound (a larger one for a patient user, a smaller one for a shared machine).
"""

from __future__ import annotations

from t2c_lib import config
from t2c_lib.datasets import Dataset
from t2c_lib.errors import StoreUnavailable

MAX_ELEMENTS = 50_000
"""Nodes plus relationships the embedded store builds by default."""


def max_elements() -> int:
    """The bound in force: `T2C_EMBEDDED_MAX_ELEMENTS` when it is a positive integer, else MAX_ELEMENTS."""
    text = (config.env("T2C_EMBEDDED_MAX_ELEMENTS") or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else MAX_ELEMENTS


def check_size(dataset: Dataset) -> None:
    """Raise StoreUnavailable when `dataset` holds more nodes and relationships than the embedded store builds."""
    nodes = sum(len(rows) for rows in dataset.nodes.values())
    rels = sum(len(rows) for rows in dataset.rels.values())
    bound = max_elements()
    if nodes + rels > bound:
        raise StoreUnavailable(
            f"{dataset.name} has {nodes:,} nodes and {rels:,} relationships, more than the {bound:,} the embedded "
            "store builds (its build time grows faster than the graph: docs/datasets.md, Bounds); run it on Neo4j "
            "(`make neo4j`, then `store: neo4j` in the params file or --store neo4j), or set "
            "T2C_EMBEDDED_MAX_ELEMENTS to wait for a larger build"
        )
