"""Write an imported graph and its question/Cypher pairs as a dataset folder (`data/<name>/`).

The folder is written whole in a staging folder beside the target and renamed into place, so a
failed import leaves nothing; a target that exists is never overwritten. What is written is the
format `data/README.md` describes: schema.yaml (types inferred), nodes/<Label>.csv,
rels/<TYPE>.csv, ground_truth.csv and dataset.yaml; the ordinary loader checks it afterwards.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from t2c_lib.dataset_import.graph import ImportedGraph, SourceError, check_name
from t2c_lib.datasets import NODE_ID_COLUMN, REL_ENDPOINT_COLUMNS
from t2c_lib.schema import PropType


def write_dataset(
    graph: ImportedGraph,
    pairs: list[tuple[str, str]],
    target: Path,
    name: str,
    source: str,
    language: str = "en",
) -> Path:
    """Write `graph` and `pairs` as the dataset `name` in the new folder `target`; return it."""
    check_name("dataset name", name)
    if not graph.node_count:
        raise SourceError("the source holds no nodes")
    if not pairs:
        raise SourceError("no question/Cypher pairs: give them with --pairs FILE (a dataset needs its ground truth)")
    if target.exists() or target.is_symlink():
        raise SourceError(f"{target} exists; nothing was overwritten (choose another --name or --out)")
    staging = target.with_name(f".{target.name}.import-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        (staging / "nodes").mkdir(parents=True)
        (staging / "rels").mkdir()
        _write_schema(graph, staging / "schema.yaml")
        _write_rows(graph, staging)
        _write_pairs(pairs, staging / "ground_truth.csv")
        _write_settings(name, source, language, staging / "dataset.yaml")
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _write_schema(graph: ImportedGraph, path: Path) -> None:
    nodes = {label: {"properties": _types(graph.node_types(label))} for label in graph.nodes}
    rels = {
        rel_type: {
            "endpoints": [list(pair) for pair in graph.endpoints(rel_type)],
            "properties": _types(graph.rel_types(rel_type)),
        }
        for rel_type in graph.rels
    }
    text = yaml.safe_dump({"nodes": nodes, "relationships": rels}, sort_keys=False, allow_unicode=True)
    path.write_text(text, encoding="utf-8")


def _types(types: dict[str, PropType]) -> dict[str, str]:
    return {name: ptype.value for name, ptype in types.items()}


def _write_rows(graph: ImportedGraph, folder: Path) -> None:
    for label, rows in graph.nodes.items():
        types = graph.node_types(label)
        with _csv(folder / "nodes" / f"{label}.csv") as (writer, _):
            writer.writerow([NODE_ID_COLUMN, *types])
            for key, props in rows.items():
                writer.writerow([key, *(cell(props.get(p)) for p in types)])
    for rel_type, rels in graph.rels.items():
        types = graph.rel_types(rel_type)
        with _csv(folder / "rels" / f"{rel_type}.csv") as (writer, _):
            writer.writerow([*REL_ENDPOINT_COLUMNS, *types])
            for rel in rels:
                ends = [rel.from_label, rel.from_key, rel.to_label, rel.to_key]
                writer.writerow([*ends, *(cell(rel.props.get(p)) for p in types)])


def _write_pairs(pairs: list[tuple[str, str]], path: Path) -> None:
    with _csv(path) as (writer, _):
        writer.writerow(["question", "cypher"])
        writer.writerows(pairs)


def _write_settings(name: str, source: str, language: str, path: Path) -> None:
    settings = {
        "name": name,
        "language": language,
        "description": f"Imported by `t2c dataset import` from {source}.",
        "ground_truth": {"file": "ground_truth.csv", "question": "question", "cypher": "cypher"},
    }
    path.write_text(yaml.safe_dump(settings, sort_keys=False, allow_unicode=True), encoding="utf-8")


class _RowWriter:
    """Rows as the loader reads them back: a row holding a carriage return has every field quoted (Python's
    writer with `\\n` line ends leaves a lone CR bare, and a reader ends the row there)."""

    def __init__(self, handle: Any) -> None:
        self.plain = csv.writer(handle, lineterminator="\n")
        self.quoted = csv.writer(handle, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list[Any]) -> None:
        (self.quoted if any("\r" in str(v) for v in row) else self.plain).writerow(row)

    def writerows(self, rows: Any) -> None:
        for row in rows:
            self.writerow(list(row))


class _csv:
    """A CSV writer on a new UTF-8 file (`\\n` line ends), closed on leaving. The cells are the dataset's values
    exactly, formula-like text too: a dataset is input data the loader reads back, not a spreadsheet report."""

    def __init__(self, path: Path) -> None:
        self.handle = path.open("x", encoding="utf-8", newline="")

    def __enter__(self) -> tuple[Any, Any]:
        return _RowWriter(self.handle), self.handle

    def __exit__(self, *exc: object) -> None:
        self.handle.close()


def cell(value: Any) -> str:
    """One value as the dataset's CSV cell (what `datasets.parse_value` reads back); "" for no value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), ensure_ascii=False)
    return str(value)
