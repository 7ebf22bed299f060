"""Schema recall: the share of the schema elements a gold query uses that a (retrieved) schema shows.

Elements are labels, relationship types and `Owner.property` names, read from the query by
the validators' pattern extractor (`var.key` is attributed to the labels or types `var` is
bound to). A query the extractor cannot read uses nothing, and scores 1.0 by convention.
"""

from __future__ import annotations

from t2c_lib.cypher.lexer import LexError
from t2c_lib.schema import GraphSchema, SchemaFormat
from t2c_lib.validation.patterns import extract


def used_elements(cypher: str) -> set[str]:
    """Labels, relationship types and `Owner.property` names a query uses."""
    try:
        shape = extract(cypher)
    except LexError:
        return set()
    used = set(shape.labels) | set(shape.rel_types)
    for node in shape.nodes:
        used |= {f"{label}.{key}" for label in node.labels for key in node.keys}
    for rel in shape.rels:
        used |= {f"{rel_type}.{key}" for rel_type in rel.types for key in rel.keys}
    for prop in shape.properties:
        owners = shape.node_labels(prop.var) | shape.rel_types_of(prop.var)
        used |= {f"{owner}.{prop.key}" for owner in owners}
    return used


def schema_recall(cypher: str, shown: set[str]) -> float:
    """|used ∩ shown| / |used| for one gold query (1.0 when it uses nothing readable)."""
    used = used_elements(cypher)
    return len(used & shown) / len(used) if used else 1.0


def whole_schema_names(schema: GraphSchema, fmt: SchemaFormat) -> set[str]:
    """What a whole-schema format shows: every element, or (`only_paths`) labels and types without properties."""
    names = set(schema.labels) | set(schema.rel_types)
    if fmt is SchemaFormat.ONLY_PATHS:
        return names
    return names | {f"{owner}.{prop}" for owner in names for prop in schema.properties_of(owner)}
