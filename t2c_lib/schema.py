"""The introspected graph schema and the three text formats the study compares.

`full_schema`: labels with typed properties, then every relationship pattern with both
endpoints' properties. `nodes_paths`: labels with typed properties, then `(A)-[:R]->(B)`
patterns. `only_paths`: only the patterns. `retrieved` is per question: the elements
`t2c_lib.linking` picks, rendered like `nodes_paths`. With descriptions on, each format ends
with the meanings of the elements it shows. Everything is sorted, so a schema always
renders to the same text and hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum

from t2c_lib.errors import InvalidValue


class PropType(str, Enum):
    """Store-neutral property types (each store maps its own type names onto these)."""

    STRING = "STRING"
    INTEGER = "INTEGER"
    FLOAT = "FLOAT"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    LIST_STRING = "LIST<STRING>"
    LIST_INTEGER = "LIST<INTEGER>"
    LIST_FLOAT = "LIST<FLOAT>"

    @classmethod
    def parse(cls, text: str) -> PropType:
        """Read a type name as written in schema.yaml (case-insensitive, a few aliases)."""
        norm = text.strip().upper().replace(" ", "")
        aliases = {
            "STR": "STRING",
            "INT": "INTEGER",
            "INT64": "INTEGER",
            "LONG": "INTEGER",
            "DOUBLE": "FLOAT",
            "BOOL": "BOOLEAN",
            "STRING[]": "LIST<STRING>",
            "INT64[]": "LIST<INTEGER>",
            "DOUBLE[]": "LIST<FLOAT>",
        }
        norm = aliases.get(norm, norm)
        for member in cls:
            if member.value == norm:
                return member
        valid = ", ".join(m.value for m in cls)
        raise InvalidValue(f"unknown property type {text!r} (valid: {valid})")


class SchemaFormat(str, Enum):
    """The three schema representations of the thesis plus `retrieved`; values are the config-name parts."""

    FULL = "full_schema"
    NODES_PATHS = "nodes_paths"
    ONLY_PATHS = "only_paths"
    RETRIEVED = "retrieved"

    @property
    def config_label(self) -> str:
        """The name used in configuration names like `Zero-Shot_Full`."""
        return {
            "full_schema": "Full",
            "nodes_paths": "Nodes+Paths",
            "only_paths": "Only-Paths",
            "retrieved": "Retrieved",
        }[self.value]

    @property
    def per_question(self) -> bool:
        """True when the text depends on the question (built by `t2c_lib.linking`)."""
        return self is SchemaFormat.RETRIEVED

    @classmethod
    def parse(cls, text: str) -> SchemaFormat:
        """Accept the enum value or the config label (`full_schema` or `Full`)."""
        for member in cls:
            if text in (member.value, member.config_label, member.name):
                return member
        valid = ", ".join(f"{m.value} ({m.config_label})" for m in cls)
        raise InvalidValue(f"unknown schema format {text!r} (valid: {valid})")


@dataclass(frozen=True, order=True)
class RelPattern:
    """One allowed relationship: `(source)-[:type]->(target)`."""

    source: str
    type: str
    target: str

    def render(self) -> str:
        return f"(:{self.source})-[:{self.type}]->(:{self.target})"


@dataclass
class GraphSchema:
    """Labels, relationship patterns and property types as read from a live database."""

    node_props: dict[str, dict[str, PropType]] = field(default_factory=dict)
    rel_props: dict[str, dict[str, PropType]] = field(default_factory=dict)
    patterns: list[RelPattern] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)  # `Label`, `TYPE`, `Label.prop` -> meaning

    def described(self, descriptions: dict[str, str]) -> GraphSchema:
        """The same schema carrying the dataset's descriptions (kept only for elements it has)."""
        names = set(self.labels) | set(self.rel_types)
        names |= {f"{owner}.{prop}" for owner in names for prop in self.properties_of(owner)}
        kept = {k: v for k, v in sorted(descriptions.items()) if k in names}
        return GraphSchema(dict(self.node_props), dict(self.rel_props), list(self.patterns), kept)

    @property
    def labels(self) -> list[str]:
        return sorted(self.node_props)

    @property
    def rel_types(self) -> list[str]:
        return sorted({p.type for p in self.patterns} | set(self.rel_props))

    def properties_of(self, label_or_type: str) -> dict[str, PropType]:
        """Properties of a node label or relationship type (empty if unknown)."""
        return self.node_props.get(label_or_type) or self.rel_props.get(label_or_type) or {}

    def render(self, fmt: SchemaFormat | str, descriptions: bool = False) -> str:
        """The schema text in one of the whole-schema formats (`retrieved` renders a subset as `nodes_paths`).

        `descriptions` appends the meaning of every label and relationship type shown (and of
        every property, in the formats that list properties).
        """
        fmt = fmt if isinstance(fmt, SchemaFormat) else SchemaFormat.parse(fmt)
        if fmt is SchemaFormat.RETRIEVED:
            fmt = SchemaFormat.NODES_PATHS
        patterns = sorted(set(self.patterns))
        lines: list[str] = []
        if fmt in (SchemaFormat.FULL, SchemaFormat.NODES_PATHS):
            lines.append("Node labels and properties:")
            for label in self.labels:
                lines.append(f"- {label} {_props_text(self.node_props[label])}")
            rel_with_props = [t for t in self.rel_types if self.rel_props.get(t)]
            if rel_with_props:
                lines.append("Relationship properties:")
                for rel_type in rel_with_props:
                    lines.append(f"- {rel_type} {_props_text(self.rel_props[rel_type])}")
            lines.append("")
        lines.append("Relationship patterns:")
        for p in patterns:
            if fmt is SchemaFormat.FULL:
                lines.append(
                    f"- (:{p.source} {_props_text(self.node_props.get(p.source, {}))})"
                    f"-[:{p.type}]->"
                    f"(:{p.target} {_props_text(self.node_props.get(p.target, {}))})"
                )
            else:
                lines.append(f"- {p.render()}")
        if descriptions:
            lines += self._description_lines(with_properties=fmt is not SchemaFormat.ONLY_PATHS)
        return "\n".join(lines) + "\n"

    def _description_lines(self, with_properties: bool) -> list[str]:
        names = [*self.labels, *self.rel_types]
        if with_properties:
            names = [
                n for owner in names for n in (owner, *(f"{owner}.{p}" for p in sorted(self.properties_of(owner))))
            ]
        described = [n for n in names if n in self.descriptions]
        if not described:
            return []
        return ["", "Descriptions:", *(f"- {n}: {self.descriptions[n]}" for n in described)]

    def text_hash(self, fmt: SchemaFormat | str, descriptions: bool = False) -> str:
        """sha256 of the rendered text (first 16 hex digits), recorded in run signatures."""
        return hashlib.sha256(self.render(fmt, descriptions).encode("utf-8")).hexdigest()[:16]


def _props_text(props: dict[str, PropType]) -> str:
    inner = ", ".join(f"{name}: {ptype.value}" for name, ptype in sorted(props.items()))
    return "{" + inner + "}"
