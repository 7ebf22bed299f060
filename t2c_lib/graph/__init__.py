"""Graph stores behind one `GraphStore` protocol; `open_store` picks one by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2c_lib.graph.base import GraphStore, StoreError

if TYPE_CHECKING:  # pragma: no cover
    from t2c_lib.datasets import Dataset

STORES = ("ladybug", "neo4j")


def open_store(name: str, dataset: "Dataset", **options: object) -> GraphStore:
    """Open the named store for a dataset (loading it first when the embedded store lacks it)."""
    if name == "ladybug":
        from t2c_lib.graph.ladybug import LadybugStore

        return LadybugStore(dataset, **options)  # type: ignore[arg-type]
    if name == "neo4j":
        try:
            from t2c_lib.graph.neo4j import Neo4jStore
        except ImportError as exc:  # pragma: no cover - the module ships with the package
            raise StoreError(f"the neo4j store is not available: {exc}") from None
        return Neo4jStore(dataset, **options)  # type: ignore[arg-type]
    raise StoreError(f"unknown store {name!r} (valid: {', '.join(STORES)})")


__all__ = ["STORES", "GraphStore", "StoreError", "open_store"]
