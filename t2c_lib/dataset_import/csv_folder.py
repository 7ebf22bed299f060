"""A graph from a folder of node and relationship CSVs described by a small mapping file.

`mapping.yaml` (any name, given on the command line) says which file holds which label or type,
which column is a node's key, which columns point at a relationship's ends, and the type of each
property column (the column name is the property name):

    nodes:
      Person: {file: people.csv, key: person_id, properties: {name: STRING, born: INTEGER}}
    relationships:
      ACTED_IN:
        file: acted_in.csv
        from: {label: Person, key: person_id}
        to: {label: Movie, key: movie_id}
        properties: {roles: LIST<STRING>}

A file is named, never a path: it must be a CSV in the mapping's folder, not a link. Cells are read
as `data/README.md` says (`datasets.parse_value`: trimmed, `true`/`false`, JSON lists, ISO dates);
an empty cell is no value. Unknown keys are refused with the valid ones, like schema.yaml's.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from t2c_lib.dataset_import.graph import ImportCaps, ImportedGraph, Rel, SourceError, check_name, shown
from t2c_lib.datasets import parse_value
from t2c_lib.files.yaml_file import YamlFileError, read_yaml
from t2c_lib.schema import PropType

MAX_CSV_BYTES = 512 * 1024 * 1024
"""The most bytes of CSV one import reads (all files together)."""

_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.csv")
_NODE_KEYS = {"file", "key", "properties"}
_REL_KEYS = {"file", "from", "to", "properties"}
_END_KEYS = {"label", "key"}


def read_folder(mapping: Path, caps: ImportCaps | None = None) -> ImportedGraph:
    """The graph the mapping file `mapping` and the CSVs beside it describe."""
    try:
        raw = read_yaml(mapping)
    except YamlFileError as exc:
        raise SourceError(f"{mapping}: {exc.reason}") from None
    except OSError as exc:
        raise SourceError(f"{mapping}: cannot be read ({type(exc).__name__})") from None
    spec = _mapping(raw, "the mapping", {"nodes", "relationships"})
    graph = ImportedGraph(caps or ImportCaps())
    budget = [MAX_CSV_BYTES]
    for label, body in _mapping(spec.get("nodes") or {}, "nodes", None).items():
        _read_nodes(
            graph, mapping.parent, check_name("label", label), _mapping(body, f"node {label}", _NODE_KEYS), budget
        )
    for rel_type, body in _mapping(spec.get("relationships") or {}, "relationships", None).items():
        check_name("relationship type", rel_type)
        _read_rels(graph, mapping.parent, rel_type, _mapping(body, f"relationship {rel_type}", _REL_KEYS), budget)
    return graph


def _mapping(raw: Any, what: str, allowed: set[str] | None) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise SourceError(f"{what} must be a mapping")
    odd = [k for k in raw if not isinstance(k, str)]
    if odd:
        raise SourceError(
            f"{what}: key {shown(odd[0])} is not text (YAML reads a bare ON, YES, NO, OFF or a number so: quote it)"
        )
    unknown = sorted(str(k) for k in raw if allowed is not None and k not in allowed)
    if unknown:
        raise SourceError(
            f"{what}: unknown key(s) {', '.join(map(shown, unknown))} (valid: {', '.join(sorted(allowed or ()))})"
        )
    return raw


def _types(owner: str, raw: Any) -> dict[str, PropType]:
    out = {}
    for name, text in _mapping(raw or {}, f"{owner} properties", None).items():
        check_name(f"property of {owner}", name, reserved=True)
        try:
            out[str(name)] = PropType.parse(str(text))
        except ValueError as exc:
            raise SourceError(f"{owner}.{name}: {exc}") from None
    return out


def _read_nodes(graph: ImportedGraph, folder: Path, label: str, body: dict[str, Any], budget: list[int]) -> None:
    types = _types(label, body.get("properties"))
    key = str(body.get("key") or "")
    path, rows = _rows(folder, body.get("file"), [key, *types], budget, f"node {label}")
    graph.declared[f"node:{label}"] = types
    for number, row in rows:
        node_key = row[key].strip()
        if not node_key:
            raise SourceError(f"{path} row {number}: empty key column {shown(key)}")
        graph.add_node(label, node_key, _values(path, number, row, types))


def _read_rels(graph: ImportedGraph, folder: Path, rel_type: str, body: dict[str, Any], budget: list[int]) -> None:
    types = _types(rel_type, body.get("properties"))
    ends = [_mapping(body.get(side), f"relationship {rel_type} {side}", _END_KEYS) for side in ("from", "to")]
    labels = [check_name("label", end.get("label")) for end in ends]
    keys = [str(end.get("key") or "") for end in ends]
    path, rows = _rows(folder, body.get("file"), [*keys, *types], budget, f"relationship {rel_type}")
    graph.declared[f"rel:{rel_type}"] = types
    for number, row in rows:
        source, target = (row[k].strip() for k in keys)
        graph.add_rel(rel_type, Rel(labels[0], source, labels[1], target, _values(path, number, row, types)))


def _values(path: Path, number: int, row: dict[str, str], types: dict[str, PropType]) -> dict[str, Any]:
    out = {}
    for name, ptype in types.items():
        text = row[name]
        if text is None or not text.strip():
            continue
        try:
            out[name] = parse_value(text, ptype)
        except ValueError as exc:
            raise SourceError(
                f"{path} row {number}: column {name} expects {ptype.value}, got {shown(text)} ({exc})"
            ) from None
    return out


def _rows(
    folder: Path, name: Any, columns: list[str], budget: list[int], owner: str
) -> tuple[Path, list[tuple[int, dict[str, str]]]]:
    """The rows of the mapping's file `name` (a CSV beside the mapping), which must hold `columns`."""
    if not isinstance(name, str) or not _FILE.fullmatch(name) or ".." in name:
        raise SourceError(f"{owner}: file {shown(name)} must be a CSV file name in the mapping's folder")
    path = folder / name
    if path.is_symlink() or not path.is_file():
        raise SourceError(f"{path}: not a regular file in the mapping's folder")
    budget[0] -= path.stat().st_size
    if budget[0] < 0:
        raise SourceError(f"the CSVs hold more than {MAX_CSV_BYTES // 2**20} MiB; load a graph that large into Neo4j")
    try:
        text = path.read_bytes().decode("utf-8-sig")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = [h.strip() for h in reader.fieldnames or []]
        reader.fieldnames = header
        missing = [c for c in columns if not c or c not in header]
        if missing:
            raise SourceError(
                f"{path}: no column(s) {', '.join(map(shown, missing))} (header: {', '.join(header)[:200]})"
            )
        rows = []
        for number, row in enumerate(reader, start=1):
            if None in row or any(v is None for v in row.values()):
                raise SourceError(f"{path} row {number}: not as many cells as the header has columns")
            rows.append((number, row))
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not valid UTF-8") from None
    except csv.Error as exc:
        raise SourceError(f"{path}: not valid CSV ({exc})") from None
    return path, rows
