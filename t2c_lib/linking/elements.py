"""The schema elements a question can be linked to: labels, relationship types, properties.

Each element carries the text that represents it for ranking: its name split into words,
its endpoints (for a relationship type) and its description when the dataset gives one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from t2c_lib.schema import GraphSchema


class ElementKind(str, Enum):
    """What kind of schema element a name is."""

    LABEL = "label"
    REL_TYPE = "rel_type"
    PROPERTY = "property"


@dataclass(frozen=True, order=True)
class SchemaElement:
    """One element: `MK`, `PREREQUISITE` or `MK.sks` (owner.property), and its ranking text."""

    kind: ElementKind
    name: str
    text: str

    @property
    def owner(self) -> str:
        """The label or relationship type a property belongs to (the name itself otherwise)."""
        return self.name.split(".", 1)[0]


def words_of(identifier: str) -> str:
    """`CAN_PARALLELIZED` -> `can parallelized`, `releasedYear` -> `released year`."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier)
    return " ".join(re.split(r"[_.\s]+", spaced)).strip().lower()


def schema_elements(schema: GraphSchema) -> list[SchemaElement]:
    """Every label, relationship type and property of the schema, in a fixed order."""
    out: list[SchemaElement] = []
    described = schema.descriptions

    def text(name: str, extra: str = "") -> str:
        parts = [name, words_of(name), extra, described.get(name, "")]
        return ". ".join(p for p in parts if p)

    for label in schema.labels:
        out.append(SchemaElement(ElementKind.LABEL, label, text(label)))
    for rel_type in schema.rel_types:
        ends = sorted({f"{p.source} to {p.target}" for p in schema.patterns if p.type == rel_type})
        out.append(SchemaElement(ElementKind.REL_TYPE, rel_type, text(rel_type, "; ".join(ends))))
    for owner in [*schema.labels, *schema.rel_types]:
        for prop in sorted(schema.properties_of(owner)):
            name = f"{owner}.{prop}"
            out.append(SchemaElement(ElementKind.PROPERTY, name, text(name, f"{words_of(prop)} of {owner}")))
    return out
