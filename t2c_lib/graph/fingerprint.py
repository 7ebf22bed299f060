"""What makes a store answer a query the way it does: its adapter code, the dialect rules and the engine version.

Caches of query results (gold results, the gold screen) key on this, so editing a dialect
rule, the store adapter or upgrading the engine package runs the queries again instead
of reading answers the new code would not give.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
from functools import cache

ENGINE_PACKAGES = {"ladybug": "ladybug", "neo4j": "neo4j"}  # store name -> the Python package that talks to the engine


@cache
def _module_digest(name: str) -> str:
    return hashlib.sha256(inspect.getsource(importlib.import_module(name)).encode("utf-8")).hexdigest()


def engine_fingerprint(store: object) -> str:
    """sha256 (16 hex digits) of the store's adapter module, `cypher/dialect.py` and its engine package's version."""
    name = getattr(store, "name", type(store).__name__)
    package = ENGINE_PACKAGES.get(name)
    try:
        version = importlib.metadata.version(package) if package else ""
    except importlib.metadata.PackageNotFoundError:
        version = ""
    parts = [name, version, _module_digest(type(store).__module__), _module_digest("t2c_lib.cypher.dialect")]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]
