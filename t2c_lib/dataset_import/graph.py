"""The graph an importer read: nodes by label, relationships by type, names checked, sizes capped.

Every source is hostile input: a name that is not an identifier (`[A-Za-z_][A-Za-z0-9_]*`) or
is reserved by the dataset format (`id`, a leading `_`) is refused in one line, a node with two
labels is refused (a t2c dataset gives a node one label), and the node and relationship counts are
capped (`ImportCaps`) before anything is written. Property types are inferred from the values:
a property that holds values of two types is refused with both named.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from t2c_lib.datasets import IDENTIFIER, NODE_ID_COLUMN
from t2c_lib.errors import InvalidValue
from t2c_lib.schema import PropType

_SHOWN = 60


class SourceError(InvalidValue):
    """A source that cannot become a dataset (a bad name, a mixed type, over a cap): one line, nothing written."""


def read_source_text(path: Path, limit: int, over: str) -> str:
    """A source file's text (UTF-8, a BOM dropped); SourceError for a link, a non-file, bad UTF-8, or over `limit`
    bytes (then the error reads "over `over`")."""
    if path.is_symlink() or not path.is_file():
        raise SourceError(f"{path}: not a regular file")
    if path.stat().st_size > limit:
        raise SourceError(f"{path}: over {over}")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not valid UTF-8") from None


@dataclass(frozen=True)
class ImportCaps:
    """The most nodes and relationships an import reads (the embedded store builds far fewer: graph/ladybug_bounds.py)."""

    nodes: int = 1_000_000
    relationships: int = 4_000_000


@dataclass
class Rel:
    """One relationship: its endpoints' labels and keys and its properties."""

    from_label: str
    from_key: str
    to_label: str
    to_key: str
    props: dict[str, Any]


@dataclass
class ImportedGraph:
    """Nodes (`label -> key -> properties`) and relationships (`type -> [Rel]`) in the order they were read."""

    caps: ImportCaps = field(default_factory=ImportCaps)
    nodes: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    rels: dict[str, list[Rel]] = field(default_factory=dict)
    node_count: int = 0
    rel_count: int = 0
    declared: dict[str, dict[str, PropType]] = field(
        default_factory=dict
    )  # `node:<Label>`, `rel:<TYPE>`: types a source states

    def add_node(self, label: str, key: str, props: dict[str, Any]) -> None:
        """Add one node (a key already used for the label is refused)."""
        check_name("label", label)
        for name in props:
            check_name(f"property of {label}", name, reserved=True)
        rows = self.nodes.setdefault(label, {})
        if key in rows:
            raise SourceError(f"two {label} nodes have the key {shown(key)}")
        self.node_count += 1
        if self.node_count > self.caps.nodes:
            raise SourceError(over_cap("nodes", self.caps.nodes))
        rows[key] = {k: v for k, v in props.items() if v is not None}

    def add_rel(self, rel_type: str, rel: Rel) -> None:
        """Add one relationship between nodes already added."""
        check_name("relationship type", rel_type)
        for name in rel.props:
            check_name(f"property of {rel_type}", name, reserved=True)
        for label, key in ((rel.from_label, rel.from_key), (rel.to_label, rel.to_key)):
            if key not in self.nodes.get(label, {}):
                raise SourceError(f"a {rel_type} relationship ends at {label} {shown(key)}, which is not a node")
        self.rel_count += 1
        if self.rel_count > self.caps.relationships:
            raise SourceError(over_cap("relationships", self.caps.relationships))
        rel.props = {k: v for k, v in rel.props.items() if v is not None}
        self.rels.setdefault(rel_type, []).append(rel)

    def node_types(self, label: str) -> dict[str, PropType]:
        """Each property of `label` and its inferred type (sorted by name)."""
        return self.declared.get(f"node:{label}") or infer_types(label, self.nodes[label].values())

    def rel_types(self, rel_type: str) -> dict[str, PropType]:
        """Each property of `rel_type` and its type (declared by the source, else inferred)."""
        return self.declared.get(f"rel:{rel_type}") or infer_types(rel_type, (r.props for r in self.rels[rel_type]))

    def endpoints(self, rel_type: str) -> list[tuple[str, str]]:
        """The (source label, target label) pairs of `rel_type`, in the order first met."""
        return list(dict.fromkeys((r.from_label, r.to_label) for r in self.rels[rel_type]))


def check_name(what: str, name: Any, reserved: bool = False) -> str:
    """`name` if it is an identifier (and, with `reserved`, not `id` nor starting with `_`); else SourceError."""
    text = str(name)
    if not IDENTIFIER.fullmatch(text):
        raise SourceError(
            f"{what} {shown(text)} is not a name t2c datasets take: letters, digits and '_', not starting with a digit"
        )
    if reserved and (text == NODE_ID_COLUMN or text.startswith("_")):
        raise SourceError(f"{what} {shown(text)} is reserved by the dataset format (`id` and names starting with _)")
    return text


def shown(text: Any) -> str:
    """A value as a message shows it: repr, cut to a few dozen characters."""
    value = str(text)
    return repr(value) if len(value) <= _SHOWN else repr(value[:_SHOWN]) + f"... ({len(value):,} characters)"


def over_cap(what: str, cap: int) -> str:
    return (
        f"the source has more than {cap:,} {what}, the most this import takes (--max-nodes sets another); "
        "a graph that large belongs on Neo4j: run the study with `store: neo4j` (docs/datasets.md, Bounds)"
    )


def value_type(value: Any) -> PropType:
    """The dataset type of one value (SourceError for a value no property type holds)."""
    if isinstance(value, bool):
        return PropType.BOOLEAN
    if isinstance(value, int):
        return PropType.INTEGER
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SourceError(f"a float value {value!r} is not finite: datasets hold finite numbers only")
        return PropType.FLOAT
    if isinstance(value, str):
        return PropType.STRING
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return PropType.DATE
    if isinstance(value, (list, tuple)):
        inner = {value_type(v) for v in value}
        if inner <= {PropType.STRING}:
            return PropType.LIST_STRING
        if inner == {PropType.INTEGER}:
            return PropType.LIST_INTEGER
        if inner <= {PropType.INTEGER, PropType.FLOAT}:
            return PropType.LIST_FLOAT
    raise SourceError(f"a value of type {type(value).__name__} ({shown(value)}) fits no dataset property type")


def infer_types(owner: str, rows: Any) -> dict[str, PropType]:
    """One type per property over all rows; integers and floats together are FLOAT, anything else mixed is refused.

    An empty list fits any list type (a property holding only empty lists is LIST<STRING>)."""
    seen: dict[str, set[PropType]] = {}
    for props in rows:
        for name, value in props.items():
            kinds = seen.setdefault(name, set())
            if not (isinstance(value, (list, tuple)) and not value):
                kinds.add(value_type(value))
    out: dict[str, PropType] = {}
    for name, kinds in sorted(seen.items()):
        for wider, narrower in ((PropType.FLOAT, PropType.INTEGER), (PropType.LIST_FLOAT, PropType.LIST_INTEGER)):
            if wider in kinds:
                kinds.discard(narrower)
        if len(kinds) > 1:
            names = ", ".join(sorted(k.value for k in kinds))
            raise SourceError(f"{owner}.{name} holds values of several types ({names}); make them one in the source")
        out[name] = next(iter(kinds)) if kinds else PropType.LIST_STRING
    return out
