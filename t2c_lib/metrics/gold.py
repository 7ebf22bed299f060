"""Cache of gold-query results, so each gold query runs once per dataset and store.

Entries are keyed by (dataset hash, store slot, sha256 of the gold query text); the slot
(`store_slot`) is the store's name and its engine fingerprint, so a changed dialect rule,
adapter or engine version runs the gold queries again. They
live in memory, and also on disk when a directory is given (`GoldCache.for_dataset`
defaults to `<root>/.cache/gold`, i.e. `config.CACHE_DIR / "gold"`): one JSON file per entry at
`<dir>/<dataset hash[:16]>/<store name>/<query sha256[:32]>.json`, written atomically.
Only successful results are cached: a failing gold query (a dataset bug, or a transient
timeout) runs again next time. Values are stored with type tags
(`encode_value`) so nodes, relationships and paths come back exactly as they went in.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.files.outputs import decode_json
from t2c_lib.graph.base import GraphNode, GraphPath, GraphRel, QueryResult

CACHE_FORMAT = 1


def store_slot(store: Any) -> str:
    """The cache's name for a store: its name and `engine_fingerprint` (adapter code, dialect rules, engine version)."""
    from t2c_lib.graph.fingerprint import engine_fingerprint

    return f"{store.name}-{engine_fingerprint(store)}"


def query_hash(query: str) -> str:
    """sha256 of the exact query text."""
    return hashlib.sha256(query.encode("utf-8")).hexdigest()


def encode_value(value: Any) -> Any:
    """A result value as JSON, graph values and maps tagged so `decode_value` restores them."""
    if isinstance(value, GraphNode):
        return {"$node": {"labels": list(value.labels), "properties": encode_value(value.properties)["$map"]}}
    if isinstance(value, GraphRel):
        return {"$rel": {"type": value.type, "properties": encode_value(value.properties)["$map"]}}
    if isinstance(value, GraphPath):
        return {
            "$path": {"nodes": [encode_value(n) for n in value.nodes], "rels": [encode_value(r) for r in value.rels]}
        }
    if isinstance(value, dict):
        return {"$map": {str(k): encode_value(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "isoformat"):
        return {"$temporal": value.isoformat()}
    return {"$str": str(value)}


def decode_value(data: Any) -> Any:
    """Inverse of `encode_value` (temporal values come back as their ISO text)."""
    if isinstance(data, list):
        return [decode_value(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise ValueError(f"not an encoded result value: {data!r}")
    ((tag, body),) = data.items()
    if tag == "$map":
        return {k: decode_value(v) for k, v in body.items()}
    if tag == "$node":
        return GraphNode(tuple(body["labels"]), {k: decode_value(v) for k, v in body["properties"].items()})
    if tag == "$rel":
        return GraphRel(body["type"], {k: decode_value(v) for k, v in body["properties"].items()})
    if tag == "$path":
        return GraphPath(tuple(decode_value(n) for n in body["nodes"]), tuple(decode_value(r) for r in body["rels"]))
    if tag in ("$temporal", "$str"):
        return body
    raise ValueError(f"unknown value tag {tag!r} in {data!r}")


def encode_result(result: QueryResult) -> dict[str, Any]:
    """A QueryResult as tagged JSON."""
    return {"columns": list(result.columns), "rows": [[encode_value(v) for v in row] for row in result.rows]}


def decode_result(data: dict[str, Any]) -> QueryResult:
    """Inverse of `encode_result`."""
    return QueryResult(columns=list(data["columns"]), rows=[[decode_value(v) for v in row] for row in data["rows"]])


@dataclass
class GoldCache:
    """Gold results of one dataset, per store; in memory, and on disk under `directory` if set."""

    dataset_hash: str
    directory: Path | None = None
    _memory: dict[tuple[str, str], QueryResult] = field(default_factory=dict, repr=False)

    @classmethod
    def for_dataset(cls, dataset: Any, directory: Path | str | None = None) -> GoldCache:
        """An on-disk cache for a loaded `Dataset`, under `directory` or `<CACHE_DIR>/gold`."""
        from t2c_lib import config

        return cls(dataset.hash, Path(directory) if directory is not None else config.CACHE_DIR / "gold")

    def _path(self, store_name: str, qhash: str) -> Path | None:
        if self.directory is None:
            return None
        return Path(self.directory) / self.dataset_hash[:16] / store_name / f"{qhash[:32]}.json"

    def get(self, store_name: str, query: str) -> QueryResult | None:
        """The cached result of `query` on `store_name`, or None when not cached."""
        qhash = query_hash(query)
        if (store_name, qhash) in self._memory:
            return self._memory[(store_name, qhash)]
        path = self._path(store_name, qhash)
        if path is None or not path.is_file():
            return None
        data = decode_json(path.read_text(encoding="utf-8"))
        if data.get("format") != CACHE_FORMAT or data.get("query") != query:
            return None
        hit = decode_result(data["result"])
        self._memory[(store_name, qhash)] = hit
        return hit

    def put(self, store_name: str, query: str, result: QueryResult) -> None:
        """Remember the result of a gold query that ran successfully."""
        qhash = query_hash(query)
        self._memory[(store_name, qhash)] = result
        path = self._path(store_name, qhash)
        if path is None:
            return
        record = {
            "format": CACHE_FORMAT,
            "dataset_hash": self.dataset_hash,
            "store": store_name,
            "query": query,
            "result": encode_result(result),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh, ensure_ascii=False, sort_keys=True)
        os.replace(tmp, path)
