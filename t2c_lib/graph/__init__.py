"""Graph stores behind one `GraphStore` protocol; `open_store` picks one by name from `STORES`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from t2c_lib.graph.base import GraphStore, StoreError
from t2c_lib.registry import Registry

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset


def _ladybug(dataset: Dataset, **options: Any) -> GraphStore:
    from t2c_lib.graph.ladybug import LadybugStore

    return LadybugStore(dataset, **options)  # type: ignore[arg-type]


def _neo4j(dataset: Dataset, **options: Any) -> GraphStore:
    try:
        from t2c_lib.graph.neo4j import Neo4jStore
    except ImportError as exc:  # pragma: no cover - the module ships with the package
        raise StoreError(f"the neo4j store is not available: {exc}") from exc
    return Neo4jStore(dataset, **options)  # type: ignore[arg-type]


STORES: Registry[Callable[..., GraphStore]] = Registry("store")
"""Store name -> opener; each imports its driver only when used."""
STORES.register("ladybug", _ladybug)
STORES.register("neo4j", _neo4j)


def open_store(name: str, dataset: Dataset, **options: object) -> GraphStore:
    """Open the named store for a dataset (loading it first when the embedded store lacks it)."""
    return STORES.get(name)(dataset, **options)


__all__ = ["STORES", "GraphStore", "StoreError", "open_store"]
