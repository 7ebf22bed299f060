"""Graph stores behind one `GraphStore` protocol; `open_store` picks one by name from `STORES`.

Each entry of `STORES` is a `StoreKind`: the store's opener and its `StoreFacts` (the same object
as the store class's `facts`), so `store_facts(name)` answers before a store is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from t2c_lib.graph.base import GraphStore, StoreError
from t2c_lib.graph.facts import LADYBUG_FACTS, NEO4J_FACTS, StoreFacts
from t2c_lib.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset


def _ladybug(dataset: Dataset, **options: Any) -> GraphStore:
    from t2c_lib.graph.ladybug import LadybugStore

    return LadybugStore(dataset, **options)


def _neo4j(dataset: Dataset, **options: Any) -> GraphStore:
    try:
        from t2c_lib.graph.neo4j import Neo4jStore
    except ImportError as exc:  # pragma: no cover - the module ships with the package
        raise StoreError(f"the neo4j store is not available: {exc}") from exc
    return Neo4jStore(dataset, **options)


@dataclass(frozen=True)
class StoreKind:
    """A registered store: how to open it and what it declares (its class's `facts`)."""

    open: Callable[..., GraphStore]
    facts: StoreFacts


STORES: Registry[StoreKind] = Registry("store")
"""Store name -> opener and facts; each opener imports its driver only when used."""
STORES.register("ladybug", StoreKind(_ladybug, LADYBUG_FACTS))
STORES.register("neo4j", StoreKind(_neo4j, NEO4J_FACTS))

DEFAULT_STORE = "ladybug"
"""The store a command uses when none is named: the embedded one."""


def store_facts(name: str) -> StoreFacts:
    """The facts of the store registered as `name`, without opening it."""
    return STORES.get(name).facts


def open_store(name: str, dataset: Dataset, **options: object) -> GraphStore:
    """Open the named store for a dataset (loading it first when the embedded store lacks it)."""
    return STORES.get(name).open(dataset, **options)


__all__ = [
    "DEFAULT_STORE",
    "STORES",
    "GraphStore",
    "StoreError",
    "StoreFacts",
    "StoreKind",
    "open_store",
    "store_facts",
]
